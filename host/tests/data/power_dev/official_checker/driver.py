#!/usr/bin/env python3
"""Run the official MLPerf submission checker's PowerCheck on every result of
one or more submission trees, and print the power figures it computes.

Why: submission_checker.main builds every check object for a result before
running any, and AccuracyCheck.__init__ subscripts the accuracy log, so a
result without accuracy/mlperf_log_detail.txt aborts the whole checker with a
TypeError before any check runs (and before the CSV is written).  This driver
uses the checker's own Loader, Config, PerformanceCheck and PowerCheck, in the
order main.py runs them (PerformanceCheck first, which stores
loader_data["performance_metric"] that PowerCheck divides by), and skips only
the checks that cannot be built for these trees.

Nothing of the checker is copied here; it is imported from
<inference>/tools/submission.

usage: driver.py --checker INFERENCE/tools/submission --version v6.1 TREE...
"""
import argparse
import logging
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checker", required=True,
                    help="path to inference/tools/submission")
    ap.add_argument("--version", default="v6.1")
    ap.add_argument("trees", nargs="+")
    args = ap.parse_args()

    sys.path.insert(0, os.path.abspath(args.checker))
    # Import the checker (its loader calls logging.basicConfig with a
    # timestamped format); then drop the timestamps so runs can be diffed.
    from submission_checker.configuration.configuration import Config
    from submission_checker.loader import Loader
    from submission_checker.checks.performance_check import PerformanceCheck
    from submission_checker.checks.power_check import PowerCheck
    logging.basicConfig(
        level=logging.INFO,
        format="[%(filename)s:%(lineno)d %(levelname)s] %(message)s",
        stream=sys.stdout,
        force=True,
    )
    log = logging.getLogger("main")  # the logger main.py hands the checks

    for tree in args.trees:
        for skip_power_check in (False, True):
            print("=" * 78)
            print(f"tree={tree} version={args.version} "
                  f"skip_power_check={skip_power_check}")
            print("=" * 78, flush=True)
            # Config exactly as main.py builds it from default arguments,
            # except for skip_power_check.
            config = Config(args.version, "model_mapping.json",
                            skip_power_check=skip_power_check)
            loader = Loader(tree, args.version, config)
            for logs in loader.load():
                d = logs.loader_data
                tag = f"{d['division']}/{d['submitter']}/{d['system']}/{d['benchmark']}/{d['scenario']}"
                print("-" * 78)
                print(f"result {tag}", flush=True)

                perf = PerformanceCheck(log, d["perf_path"], config, logs)
                perf_valid = perf()

                power = PowerCheck(log, d["power_dir_path"], config, logs)
                # Record each registered power sub-check's own return value
                # while PowerCheck runs its checks the official way.
                sub_results = []
                official_execute = power.execute

                def recording_execute(check, _exec=official_execute,
                                      _res=sub_results):
                    v = _exec(check)
                    _res.append((check.__name__, v))
                    return v
                power.execute = recording_execute
                power_valid = power()
                sys.stdout.flush()
                sys.stderr.flush()

                mlog = logs.performance_log
                print(f"# {tag}")
                print(f"#   has_power            = {power.has_power!r}")
                print(f"#   performance valid    = {perf_valid!r}")
                for name, v in sub_results:
                    print(f"#   PowerCheck.{name:<24} -> {v!r}")
                print(f"#   PowerCheck overall   = {power_valid!r}")
                print(f"#   effective_scenario   = {mlog['effective_scenario']!r}")
                print(f"#   power_begin          = {mlog['power_begin']!r}")
                print(f"#   power_end            = {mlog['power_end']!r}")
                print(f"#   result_query_count   = {mlog['result_query_count']!r}")
                print(f"#   performance_metric   = {d.get('performance_metric')!r}")
                print(f"#   power_metric         = {d.get('power_metric')!r}")
                print(f"#   avg_power_efficiency = {d.get('avg_power_efficiency')!r}",
                      flush=True)


if __name__ == "__main__":
    main()
