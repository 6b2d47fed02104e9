#!/usr/bin/env python3
"""Reads an MLPerf Endpoints scenario folder (config.yaml, performance/result_summary.json)
with the official submission checker's endpoints parser, or a `:::ENDPTS` log file with its
LoadGen log parser, and prints what it read as JSON (each LoadGen key's first value).

The checker is not installable from PyPI: pass a checkout of mlcommons/inference.
Usage: python3 scripts/endpoints-parse.py INFERENCE_CHECKOUT SCENARIO_DIR|LOG_FILE [accuracy]
(`accuracy`: the endpoints parser's accuracy pass, accuracy/accuracy_results.json)
Needs PyYAML.
"""
import json
import sys
from pathlib import Path


def main() -> int:
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["accuracy"]):
        print(__doc__, file=sys.stderr)
        return 2
    log_type = "accuracy" if sys.argv[3:] == ["accuracy"] else "performance"
    checkout, scenario = Path(sys.argv[1]), Path(sys.argv[2])
    sys.path.insert(0, str(checkout / "tools" / "submission"))
    if scenario.is_file():
        from submission_checker.parsers.loadgen_parser import LoadgenParser

        parser = LoadgenParser(str(scenario))
    else:
        from submission_checker.parsers.endpoints_parser import EndpointsParser

        parser = EndpointsParser(str(scenario), log_type)
    read = {key: parser[key] for key in sorted(parser.get_keys())}
    print(json.dumps(read, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
