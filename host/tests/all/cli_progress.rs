//! The progress bar of `mlperf-host run`: drawn on a terminal (a pseudo-terminal here, opened by
//! Python's `pty` module), absent with `--quiet` or when stderr is not a terminal.

use crate::support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::TempDir;

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// Text only the bar prints.
const BAR_TEXT: &str = "samples done";

/// Runs argv[1:] in a new pseudo-terminal (200 columns, TERM=xterm) and copies everything it
/// writes there to stdout; exits with its status (125 when it had to be killed).
const PTY_RUNNER: &str = r#"
import os, pty, select, signal, struct, sys, time
import fcntl, termios
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    os.environ["TERM"] = "xterm"
    os.execv(sys.argv[1], sys.argv[1:])
deadline = time.monotonic() + 120
chunks = []
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 1.0)
    if not ready:
        continue
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    chunks.append(data)
else:
    os.kill(pid, signal.SIGKILL)
sys.stdout.buffer.write(b"".join(chunks))
sys.stdout.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 125)
"#;

/// `run` arguments for a test of about four seconds: long enough for the bar to show.
fn long_run(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--scenario",
        "SingleStream",
        "--latency",
        "1ms",
        "--set",
        "min_duration_ms=4000",
        "--set",
        "min_query_count=10",
        "--set",
        "single_stream_expected_latency_ns=1000000",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Runs `mlperf-host ARGS` with stdout and stderr on a pseudo-terminal; returns what it wrote
/// there.
fn run_in_pty(args: &[String]) -> String {
    let output = Command::new("python3")
        .arg("-c")
        .arg(PTY_RUNNER)
        .arg(EXE)
        .args(args)
        .env_remove("MLPERF_HOST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run python3 (the pseudo-terminal runner)");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "status {:?}\nterminal:\n{text}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

fn assert_ran(text: &str) {
    assert!(text.contains("MLPerf Results Summary"), "{text:?}");
}

#[test]
fn a_long_run_on_a_terminal_shows_the_bar_then_clears_it() {
    let dir = TempDir::new();
    let text = run_in_pty(&long_run(dir.path(), &[]));
    assert_ran(&text);
    let bar = text
        .rfind(BAR_TEXT)
        .unwrap_or_else(|| panic!("no bar: {text:?}"));
    // The denominator is the expected count (4 s at the 1,000 queries/s of a 1 ms expected
    // latency), not the minimum of 10.
    for part in [
        "performance [",
        "% ",
        "issued ",
        "/4,000 queries",
        "ETA ",
        "samples/s",
        "p99 ",
    ] {
        assert!(text.contains(part), "{part:?} missing: {text:?}");
    }
    // Cleared (erase-line) before the summary, which follows the last bar.
    let summary = text.find("MLPerf Results Summary").unwrap_or_default();
    assert!(bar < summary, "{text:?}");
    assert!(text[bar..summary].contains("\x1b[2K"), "{text:?}");
}

#[test]
fn quiet_draws_no_bar_on_a_terminal() {
    let dir = TempDir::new();
    let text = run_in_pty(&long_run(dir.path(), &["--quiet"]));
    assert!(!text.contains(BAR_TEXT), "{text:?}");
    assert!(!text.contains("p99"), "{text:?}");
    assert!(dir.path().join("mlperf_log_summary.txt").is_file());
}

#[test]
fn no_bar_when_stderr_is_not_a_terminal() {
    let dir = TempDir::new();
    let output: Output = Command::new(EXE)
        .args(long_run(dir.path(), &[]))
        .env_remove("MLPERF_HOST_LOG")
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("run mlperf-host");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_ran(&stdout);
    assert!(stderr.is_empty(), "{stderr:?}");
    assert!(!stdout.contains(BAR_TEXT), "{stdout:?}");
}

#[test]
fn a_short_run_on_a_terminal_prints_nothing_extra() {
    let dir = TempDir::new();
    let mut args = long_run(dir.path(), &[]);
    for arg in args.iter_mut() {
        if arg == "min_duration_ms=4000" {
            *arg = "min_duration_ms=0".to_string();
        }
    }
    let text = run_in_pty(&args);
    assert_ran(&text);
    assert!(!text.contains(BAR_TEXT), "{text:?}");
    assert!(!text.contains("\x1b[2K"), "{text:?}");
}

#[test]
fn the_official_engine_shows_the_bar_too() {
    assert!(
        mlperf_host::official::engine::is_available(),
        "{}",
        mlperf_host::official::engine::SETUP_COMMAND
    );
    let dir = TempDir::new();
    let text = run_in_pty(&long_run(dir.path(), &["--engine", "official"]));
    assert_ran(&text);
    assert!(text.contains(BAR_TEXT), "no bar: {text:?}");
    for part in ["performance [", "issued ", "/10 queries", "samples/s"] {
        assert!(text.contains(part), "{part:?} missing: {text:?}");
    }
}
