#!/usr/bin/env python3
"""Generate loadgen/tests/data/early_stopping_vectors.json from the Python reference.

The reference (`reference_early_stopping.py`, a port of LoadGen's early_stopping.cc that
reproduces the official wheel's numbers) is imported from a directory given on the command
line; nothing of it is copied here.

SingleStream/MultiStream vectors: within one early-stopping evaluation the finder is called
with t = 1, 2, 3, ... in that order, and its memoised brackets depend only on that call
sequence, not on n.  So one finder per percentile, driven over t = 1..T, yields the h(t)
sequence that every `ss_estimate(n, p)` replays as a prefix; t(n) is read off it.  A
subset of n is also evaluated with the reference's own `ss_estimate` as a cross-check.

Server vectors: one fresh finder per evaluation, called once with t = overlatency count.

Usage:
    python3 tests/tools/gen_early_stopping_vectors.py \
        [--reference-dir ../shared/reference/golden] \
        [--out loadgen/tests/data/early_stopping_vectors.json]
"""

import argparse
import importlib.util
import json
import pathlib
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIDENCE = 0.99
TOLERANCE = 0.0
PERCENTILES = (0.9, 0.99, 0.999)
N_MAX = 1_000_000
SERVER_OVERLATENCY = (0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200,
                      300, 500, 750, 1000, 1500, 2000, 3000, 5000)


def load_reference(ref_dir):
    sys.dont_write_bytecode = True  # leave the shared reference directory untouched
    path = pathlib.Path(ref_dir) / "reference_early_stopping.py"
    spec = importlib.util.spec_from_file_location("reference_early_stopping", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def h_sequence(ref, p, n_max):
    """h[i] = F(i) for i = 1.. until h[i] + i > n_max (where the n_max loop breaks)."""
    finder = ref.Finder()
    h = [None]  # 1-based
    i = 1
    while True:
        h.append(finder(i, p, TOLERANCE, CONFIDENCE))
        if i >= 2 and n_max < h[i] + i:
            return h
        i += 1


def estimate_from_sequence(h, n):
    """(min_queries, t or None), mirroring ss_estimate on the precomputed h(t)."""
    min_queries = h[1] + 1
    if n < min_queries:
        return min_queries, None
    for i in range(2, n + 1):
        if n < h[i] + i:
            return min_queries, i - 1
    return min_queries, 1


def log_spaced(lo, hi, per_decade):
    out = set()
    k = 0
    while True:
        v = round(10 ** (k / per_decade))
        if v > hi:
            break
        if v >= lo:
            out.add(v)
        k += 1
    return out


def single_stream_ns(h, n_max):
    ns = {0, 1, 2, 3, n_max - 1, n_max}
    ns |= log_spaced(1, n_max, 12)
    ns |= {10 ** k for k in range(7)}
    h_min = h[1]
    ns |= {h_min - 1, h_min, h_min + 1, h_min + 2, h_min + 3}
    # Edges where t steps up: n = h(i)+i-1 keeps t < i, n = h(i)+i reaches t >= i.
    last = len(h) - 1
    for i in sorted(log_spaced(2, last - 1, 10) | {2, 3, 4, 5}):
        edge = h[i] + i
        ns |= {edge - 1, edge, edge + 1}
    return sorted(n for n in ns if 0 <= n <= n_max)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference-dir",
                    default=str(REPO_ROOT.parent / "shared" / "reference" / "golden"))
    ap.add_argument("--out",
                    default=str(REPO_ROOT / "host" / "tests" / "data" / "early_stopping_vectors.json"))
    ap.add_argument("--direct-check-max", type=int, default=50_000,
                    help="also run the reference's ss_estimate directly for n up to this")
    args = ap.parse_args()

    ref = load_reference(args.reference_dir)
    started = time.time()

    single = []
    direct_checks = 0
    for p in PERCENTILES:
        h = h_sequence(ref, p, N_MAX)
        for n in single_stream_ns(h, N_MAX):
            min_queries, t = estimate_from_sequence(h, n)
            if n <= args.direct_check_max:
                ref_h_min, ref_t = ref.ss_estimate(n, p)
                assert (ref_h_min + 1, ref_t) == (min_queries, t), (p, n)
                direct_checks += 1
            single.append({
                "p": p, "n": n, "min_queries": min_queries,
                "discarded": None if t is None else t - 1,
                "index": None if t is None else n - t,
            })
        print(f"single_stream p={p}: h(t) for t<={len(h) - 1}, "
              f"{time.time() - started:.1f}s", file=sys.stderr)

    server = []
    for p in PERCENTILES:
        for t in SERVER_OVERLATENCY:
            h = ref.Finder()(t, p, TOLERANCE, CONFIDENCE)
            need = h + t
            ns = {max(t, 1), need // 2, need - 1, need, need + 1, 10 * need}
            for n in sorted(x for x in ns if x >= t):
                passed = n >= need
                server.append({
                    "p": p, "n": n, "overlatency": t, "required_queries": need,
                    "passed": passed, "more_queries_needed": 0 if passed else need - n,
                })
    print(f"server: {len(server)} vectors, {time.time() - started:.1f}s", file=sys.stderr)

    header = {
        "source": "tests/tools/gen_early_stopping_vectors.py over "
                  "shared/reference/golden/reference_early_stopping.py",
        "confidence": CONFIDENCE,
        "tolerance": TOLERANCE,
        "direct_reference_checks": direct_checks,
    }
    # One vector per line keeps diffs reviewable.
    lines = ["{"]
    for key, value in header.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    for name, rows, last in (("single_stream", single, False), ("server", server, True)):
        lines.append(f"  {json.dumps(name)}: [")
        lines.append(",\n".join("    " + json.dumps(r, separators=(",", ":")) for r in rows))
        lines.append("  ]" + ("" if last else ","))
    lines.append("}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}: {len(single)} single-stream + {len(server)} server vectors, "
          f"{direct_checks} direct reference checks, {out.stat().st_size} bytes, "
          f"{time.time() - started:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
