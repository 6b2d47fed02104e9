#!/usr/bin/env python3
"""Peak resident memory per issued sample of `mlperf-host run`, every scenario, with the null
plugin in-process (through the plugin ABI) and, with --isolated, in its own process.

Each run is a process of its own; its peak RSS (the child's own ru_maxrss from wait4: the whole
process, not a growth over a baseline) is divided by the samples the run issued, read from its
result.json. A run of a few samples gives the process's own footprint, which a run of N
samples carries too. With --isolated, wait4 reports the larger of the host's peak and its
plugin process's (a waited-for child of the host).

    python3 scripts/memory_per_sample.py [--samples 20000000] [--isolated] [--markdown]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "target" / "release" / "mlperf-host"


def scenario_settings(scenario: str, samples: int) -> list[str]:
    """Settings that make `scenario` issue about `samples` samples, quickly."""
    base = ["--set", "min_duration_ms=0"]
    if scenario == "SingleStream":
        return base + [f"--set=min_query_count={samples}", f"--set=max_query_count={samples}"]
    if scenario == "MultiStream":
        queries = max(samples // 8, 1)
        return base + [f"--set=min_query_count={queries}", f"--set=max_query_count={queries}"]
    if scenario == "Server":
        # 1 M queries/s (VALID for the null plugin on 2 cores) for as long as it takes.
        qps = 1_000_000
        duration_ms = max(samples * 1000 // qps, 1)
        return [
            "--set",
            f"server_target_qps={qps}",
            "--set",
            f"min_duration_ms={duration_ms}",
            "--set",
            "min_query_count=1",
        ]
    return base + [
        "--set",
        f"offline_expected_qps={samples}",
        "--set",
        f"min_query_count={samples}",
    ]


def measure(scenario: str, samples: int, isolated: bool) -> dict:
    with tempfile.TemporaryDirectory() as out:
        command = [str(HOST), "run", "--scenario", scenario, "--out", out, "--quiet"]
        command += scenario_settings(scenario, samples)
        if isolated:
            command += ["--isolate", "process"]
        with tempfile.TemporaryFile() as stderr:
            child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
            # This child's own rusage (ru_maxrss in KiB on Linux).
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                stderr.seek(0)
                tail = stderr.read()[-2000:].decode(errors="replace")
                sys.exit(f"{' '.join(command)} failed ({child.returncode}):\n{tail}")
        peak_kb = usage.ru_maxrss
        result = json.loads(Path(out, "result.json").read_text())
        issued = sum(series.get("samples_issued", 0) for series in result["series"])
        validity = (result.get("performance") or {}).get("validity") or {}
        valid = validity.get("valid")
        return {"peak_bytes": peak_kb * 1024, "samples": issued, "valid": valid}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000_000)
    parser.add_argument("--isolated", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if not HOST.exists():
        sys.exit(f"{HOST} not built: cargo build --release")
    rows = []
    for scenario in ["SingleStream", "MultiStream", "Server", "Offline"]:
        small = measure(scenario, 1000, args.isolated)
        large = measure(scenario, args.samples, args.isolated)
        growth = (large["peak_bytes"] - small["peak_bytes"]) / (large["samples"] - small["samples"])
        rows.append(
            (
                scenario,
                large["samples"],
                large["peak_bytes"] / large["samples"],
                growth,
                small["peak_bytes"],
                large["valid"],
            )
        )
        print(f"{scenario}: {rows[-1]}", file=sys.stderr, flush=True)
    where = "isolated" if args.isolated else "in-process"
    if args.markdown:
        print(f"| scenario ({where}) | samples issued | peak RSS / sample | growth / sample over a 1000-sample run | RSS of a 1000-sample run |")
        print("|---|---:|---:|---:|---:|")
    for scenario, samples, per_sample, growth, small_bytes, valid in rows:
        if args.markdown:
            print(f"| {scenario} | {samples:,} | {per_sample:.2f} B | {growth:.2f} B | {small_bytes / 2**20:.1f} MiB |")
        else:
            print(f"{scenario:12} {samples:>12,} samples  {per_sample:6.2f} B/sample  growth {growth:6.2f} B/sample  (small run {small_bytes / 2**20:.1f} MiB, valid {valid})")


if __name__ == "__main__":
    main()
