//! The plugin's process watched: its exit, a stopped heartbeat or a call that does not return
//! ends the run with the cause; the control socket's replies handed to the calls waiting.

use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::HumanCount;

use super::super::protocol::{self, ToHost};
use super::super::region::*;
use super::{Inner, Link, WATCH_EVERY};

/// A process whose heartbeat has not advanced for this long is stopped (or frozen) and is
/// killed.
const HEARTBEAT_STALL: Duration = Duration::from_millis(1_500);

/// Watches the process until it exits: its exit, a stopped heartbeat and a call that does
/// not return end the run.
pub(super) fn watch(mut child: Child, inner: &Inner) {
    let link = &inner.link;
    let header = inner.region.header();
    let mut beat = header.heartbeat.0.load(Ordering::Relaxed);
    let mut beat_seen = Instant::now();
    let mut call_seen = (0, 0, Instant::now());
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return exited(inner, status),
            Ok(None) => {}
            Err(error) => {
                tracing::error!(%error, "cannot watch the plugin process");
                return;
            }
        }
        let now = header.heartbeat.0.load(Ordering::Relaxed);
        if now != beat {
            (beat, beat_seen) = (now, Instant::now());
        } else if beat != 0 && beat_seen.elapsed() > HEARTBEAT_STALL {
            link.kill(format!(
                "plugin process stopped responding (no heartbeat for {:.1} s) after {} samples",
                HEARTBEAT_STALL.as_secs_f64(),
                HumanCount(link.completed.load(Ordering::Relaxed))
            ));
        }
        // A call stalls when it runs on with no sample completing: one call may answer a
        // whole Offline query inline.
        let calls = header.calls.0.load(Ordering::Acquire);
        let completed = link.completed.load(Ordering::Relaxed);
        if (calls, completed) != (call_seen.0, call_seen.1) {
            call_seen = (calls, completed, Instant::now());
        } else if calls % 2 == 1 && call_seen.2.elapsed() > inner.stall_timeout {
            let call = call_name(header.call.0.load(Ordering::Relaxed));
            link.kill(format!(
                "plugin {} {call} has not returned after {:?} (the plugin process was killed after {} samples)",
                link.plugin,
                inner.stall_timeout,
                HumanCount(completed)
            ));
        }
        std::thread::sleep(WATCH_EVERY);
    }
}

fn exited(inner: &Inner, status: ExitStatus) {
    let link = &inner.link;
    let orderly = link.stopping.load(Ordering::SeqCst) && status.success();
    let killed = link
        .kill_cause
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    link.gone.store(true, Ordering::SeqCst);
    link.exited.store(true, Ordering::SeqCst);
    // The completions published before the exit count: the reader takes them first.
    let deadline = Instant::now() + Duration::from_secs(1);
    while !link.drained.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let cause = killed.unwrap_or_else(|| {
        let samples = HumanCount(link.completed.load(Ordering::Relaxed));
        format!("plugin process {} after {samples} samples", ended(status))
    });
    if !orderly {
        tracing::error!("{cause}");
        link.kill_cause
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(cause.clone());
        // Wake an issuer waiting for room.
        wake(&inner.region.header().issue.producer_asleep.0);
        link.fail(cause, true);
    }
    link.exit_handled.store(true, Ordering::SeqCst);
}

pub(super) fn read_control(control: UnixStream, link: &Link, replies: mpsc::Sender<ToHost>) {
    let mut control = BufReader::new(control);
    loop {
        match protocol::receive::<ToHost>(&mut control) {
            Ok(Some(reply)) => {
                let _ = replies.send(reply);
            }
            Ok(None) => return,
            Err(error) => {
                link.fail(format!("plugin process: {error}"), false);
                return;
            }
        }
    }
}

/// How a process ended, as the messages say it: `killed by SIGSEGV`, `exited with status 0`.
pub(in crate::plugin::isolated) fn ended(status: ExitStatus) -> String {
    match (status.signal(), status.code()) {
        (Some(signal), _) => format!("killed by {}", signal_name(signal)),
        (None, Some(code)) => format!("exited with status {code}"),
        _ => "ended".into(),
    }
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL (the out-of-memory killer, or another process)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_reads_as_its_status_or_its_signal() {
        assert_eq!(ended(ExitStatus::from_raw(0)), "exited with status 0");
        assert_eq!(ended(ExitStatus::from_raw(3 << 8)), "exited with status 3");
        assert_eq!(
            ended(ExitStatus::from_raw(libc::SIGSEGV)),
            "killed by SIGSEGV"
        );
        assert_eq!(
            ended(ExitStatus::from_raw(libc::SIGKILL)),
            "killed by SIGKILL (the out-of-memory killer, or another process)"
        );
        assert_eq!(
            ended(ExitStatus::from_raw(libc::SIGUSR2)),
            "killed by signal 12"
        );
    }
}
