#!/usr/bin/env bash
# Runs every program of the official LoadGen's loadgen/demos/ (github:mlcommons/inference) on
# the official wheel and on mlperf_host.loadgen (through host/python/alias), and prints one
# line per run: side, demo, exit code, seconds, verdict, the files left in its log folder.
#
#   bash scripts/python_demos.sh DEMOS_DIR [OUT]
#
# DEMOS_DIR is a checkout's loadgen/demos (not in this repository); OUT defaults to
# runs/python-demos. The interpreter is .venv/bin/python, which needs both modules
# (scripts/setup-official-loadgen.sh, scripts/setup-python.sh) and the demos' own packages:
# `.venv/bin/python -m pip install numpy absl-py flask requests`. The two token Offline demos
# take about four minutes each, on either side.
set -uo pipefail
cd "$(dirname "$0")/.."
demos=$(cd "${1:?usage: python_demos.sh DEMOS_DIR [OUT]}" && pwd)
out=$(mkdir -p "${2:-runs/python-demos}" && cd "${2:-runs/python-demos}" && pwd)
python=$PWD/.venv/bin/python
alias_dir=$PWD/host/python/alias

# run SIDE NAME DIR COMMAND...: one program on one side, in DIR.
run() {
    local side=$1 name=$2 dir=$3
    shift 3
    local start=$SECONDS rc
    if [ "$side" = ours ]; then
        (cd "$dir" && PYTHONPATH="$alias_dir" timeout 900 "$@" > stdout.txt 2> stderr.txt)
    else
        (cd "$dir" && env -u PYTHONPATH timeout 900 "$@" > stdout.txt 2> stderr.txt)
    fi
    rc=$?
    local verdict files
    verdict=$(sed -n 's/^Result is : //p' "$dir"/mlperf_log_summary.txt 2>/dev/null | head -n 1)
    files=$(cd "$dir" && for f in mlperf_log_*; do [ -e "$f" ] && printf '%s(%s) ' "$f" "$(stat -c %s "$f")"; done)
    printf '%s\t%s\texit %s\t%ss\t%s\t%s\n' "$side" "$name" "$rc" "$((SECONDS - start))" "${verdict:--}" "$files"
}

for side in official ours; do
    for demo in py_demo_single_stream py_demo_multi_stream py_demo_server py_demo_offline \
                token_metrics/py_demo_single_stream token_metrics/py_demo_multi_stream \
                token_metrics/py_demo_server token_metrics/py_demo_server_inferred \
                token_metrics/py_demo_offline token_metrics/py_demo_offline_inferred; do
        dir="$out/$side/${demo//\//_}"
        rm -rf "$dir" && mkdir -p "$dir"
        run "$side" "$demo" "$dir" "$python" "$demos/$demo.py"
    done
    # LoadGen over the network: the demo's Flask SUT, then its LoadGen side against it.
    dir="$out/$side/lon"
    rm -rf "$dir" && mkdir -p "$dir"
    env -u PYTHONPATH "$python" "$demos/lon/sut_over_network_demo.py" --port 8123 > "$dir/sut.txt" 2>&1 &
    sut=$!
    sleep 3
    run "$side" lon/py_demo_server_lon "$dir" "$python" "$demos/lon/py_demo_server_lon.py" \
        --sut_server http://localhost:8123
    kill "$sut" 2>/dev/null
    wait "$sut" 2>/dev/null
done
