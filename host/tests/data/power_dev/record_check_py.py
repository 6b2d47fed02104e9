#!/usr/bin/env python3
"""Runs power-dev's compliance/check.py on mutated copies of a recorded power session.

usage: record_check_py.py POWER_DEV_CHECKOUT SESSION_DIR [MUTATIONS_JSON]

For each mutation in MUTATIONS_JSON (default: mutations.json beside this script) the session
folder is copied to a temporary directory, the mutation is applied to the copy, check.py is run
on it (from the checkout, stdout and stderr together), and the output is written to
<parent of SESSION_DIR>/mutations/<mutation name>.txt with the copy's path replaced by SESSION
and a final line `exit code: N`. Mutations (paths relative to the session folder):
  {"edit": {"file": F, "pointer": P, "value": V}}    set the member at RFC 6901 pointer P of
                                                      JSON file F (rewritten with indent 2)
  {"add": {"file": F, "pointer": P, "delta": D}}     add D to the number at P
  {"remove": F}                                      delete file F
  {"scale_watts": {"file": F, "factor": X, "rehash": J}}
                                                      multiply the Watts of every sample line of
                                                      spl.txt F by X (written %.6f), and record
                                                      F's new SHA-1 in JSON file J's results
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile


def locate(doc, pointer):
    """The container holding the pointer's last token, and that token (list index as int)."""
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    for token in tokens[:-1]:
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    last = tokens[-1]
    return doc, int(last) if isinstance(doc, list) else last


def rewrite_json(session, spec, change):
    path = os.path.join(session, spec["file"])
    with open(path) as f:
        doc = json.load(f)
    parent, key = locate(doc, spec["pointer"])
    change(parent, key)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


def apply(session, mutation):
    if "edit" in mutation:
        spec = mutation["edit"]
        rewrite_json(session, spec, lambda p, k: p.__setitem__(k, spec["value"]))
    elif "add" in mutation:
        spec = mutation["add"]
        rewrite_json(session, spec, lambda p, k: p.__setitem__(k, p[k] + spec["delta"]))
    elif "remove" in mutation:
        os.remove(os.path.join(session, mutation["remove"]))
    elif "scale_watts" in mutation:
        spec = mutation["scale_watts"]
        path = os.path.join(session, spec["file"])
        with open(path) as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            fields = line.split(",")
            if line.startswith("Time") and len(fields) > 3:
                fields[3] = "%.6f" % (float(fields[3]) * spec["factor"])
                lines[i] = ",".join(fields)
        with open(path, "w") as f:
            f.write("\n".join(lines))
        with open(path, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()
        rewrite_json(session, {"file": spec["rehash"], "pointer": "/results/" + spec["file"].replace("~", "~0").replace("/", "~1")},
                     lambda p, k: p.__setitem__(k, digest))
    else:
        raise ValueError(f"unknown mutation {mutation!r}")


def main():
    power_dev, session = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    here = os.path.dirname(os.path.abspath(__file__))
    mutations_path = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "mutations.json")
    with open(mutations_path) as f:
        mutations = json.load(f)
    out_dir = os.path.join(os.path.dirname(session), "mutations")
    os.makedirs(out_dir, exist_ok=True)
    for mutation in mutations:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, os.path.basename(session))
            shutil.copytree(session, copy)
            apply(copy, mutation)
            run = subprocess.run([sys.executable, "compliance/check.py", copy], cwd=power_dev,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            text = run.stdout.replace(copy, "SESSION") + f"exit code: {run.returncode}\n"
        with open(os.path.join(out_dir, mutation["name"] + ".txt"), "w") as f:
            f.write(text)
        print(f"{mutation['name']}: exit code {run.returncode}")


if __name__ == "__main__":
    main()
