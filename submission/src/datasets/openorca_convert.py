# One-time conversion of llama2-70b's OpenOrca pickle (a pandas DataFrame) into the JSON the
# host reads: an array of {"tok_input": [ids], "output": text}, in row order, which is the
# qsl_idx order of both the reference's SUT (by position) and its accuracy script (by index
# label: the index must be 0..n-1 for the two to agree). Run by `mlperf-host dataset convert`.
import json
import os
import sys

source, target = sys.argv[1], sys.argv[2]
try:
    import pandas as pd
except ImportError as error:
    sys.exit(f"{sys.executable} has no pandas ({error}): install it (`pip install pandas`) or pass --python with one that has")
frame = pd.read_pickle(source)
if not isinstance(frame, pd.DataFrame):
    sys.exit(f"{source}: holds a {type(frame).__name__}, not a pandas DataFrame")
missing = [c for c in ("tok_input", "output") if c not in frame.columns]
if missing:
    sys.exit(f"{source}: has no column {', '.join(missing)} (its columns: {', '.join(map(str, frame.columns))})")
if not frame.index.equals(pd.RangeIndex(len(frame))):
    sys.exit(f"{source}: its index is not 0..{len(frame) - 1}: the accuracy script finds a sample's output by index label, the SUT its tok_input by position")
records = []
for row, (ids, output) in enumerate(zip(frame["tok_input"], frame["output"])):
    if not isinstance(output, str):
        sys.exit(f"{source}: row {row}: output is a {type(output).__name__}, not text")
    records.append({"tok_input": [int(i) for i in ids], "output": output})
partial = target + ".part"
with open(partial, "w", encoding="utf-8") as f:
    json.dump(records, f, ensure_ascii=False)
    f.write("\n")
os.replace(partial, target)
print(len(records))
