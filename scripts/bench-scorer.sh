# Sourced by the scorer benchmarks (bench-cnndm.sh, bench-whisper.sh): times the native scorer
# on a log, then, when INFERENCE and REF_PYTHON are set, the same command with
# --reference-script, checks that the reference's line equals the native one and prints both
# times. Needs $host, $work and the array $args (the `accuracy` command) set by the caller.
# usage: time_scorers LINE_START SCRIPT   (LINE_START: how the script's line begins)

seconds() { # runs "$@", prints its wall seconds; exit 3 (a target missed) is a scored run
    local start end rc=0
    start=$(date +%s.%N)
    "$@" >"$work/out.txt" 2>&1 || rc=$?
    end=$(date +%s.%N)
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
        cat "$work/out.txt" >&2
        echo "error: $* exited with $rc" >&2
        exit 1
    fi
    python3 -c "print(f'{$end - $start:.2f}')"
}

time_scorers() {
    local line_start="$1" script="$2" native native_line both reference reference_line
    native=$(seconds "$host" "${args[@]}")
    echo "native: $native s ($host ${args[*]})"
    native_line=$(head -n 1 "$work/accuracy.txt")
    echo "$native_line"
    if [ -z "${INFERENCE:-}" ] || [ -z "${REF_PYTHON:-}" ]; then
        echo "(set INFERENCE and REF_PYTHON to time the reference $script on the same log)"
        return
    fi
    both=$(seconds "$host" "${args[@]}" --reference-script "$INFERENCE" --python "$REF_PYTHON")
    reference=$(python3 -c "print(f'{$both - $native:.2f}')")
    # accuracy.txt now starts with the script's own printed line.
    reference_line=$(grep -m 1 -F "$line_start" "$work/accuracy.txt")
    if [ "$reference_line" = "$native_line" ]; then
        echo "the reference's line equals the native one"
    else
        echo "error: the reference printed $reference_line" >&2
        exit 1
    fi
    echo "reference $script: $reference s (the --reference-script run's $both s less the native $native s)"
    python3 -c "print(f'native is {$reference / $native:.1f}x faster')"
}
