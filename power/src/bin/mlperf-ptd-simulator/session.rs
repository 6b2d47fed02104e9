//! One client connection: commands are lines ending `\r\n` (or `\n`), each answered with one
//! line ending `\r\n` (`RL`: a header and the samples), as SPEC PTDaemon answers (reference
//! §1.2, §4).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use crate::args::Faults;
use crate::meter::{say, Meter};

/// Longer than any command; a client sending more without a line break is dropped.
const MAX_COMMAND: u64 = 4096;

/// Serves `stream` until the client closes it (or a fault drops it).
pub(crate) fn serve(
    stream: TcpStream,
    meter: &mut Meter,
    faults: &Faults,
    command_log: Option<&mut File>,
) {
    let mut command_log = command_log;
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    say(&format!("client {peer} connected"));
    let (mut reader, mut writer) = match stream.try_clone() {
        Ok(clone) => (BufReader::new(clone), stream),
        Err(error) => {
            say(&format!("ERROR: cannot serve {peer}: {error}"));
            return;
        }
    };
    loop {
        let mut bytes = Vec::new();
        match (&mut reader)
            .take(MAX_COMMAND)
            .read_until(b'\n', &mut bytes)
        {
            Ok(0) | Err(_) => break,
            Ok(_) if bytes.last() != Some(&b'\n') && bytes.len() as u64 >= MAX_COMMAND => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&bytes);
        let command = line.trim_end_matches(['\r', '\n']).trim();
        if command.is_empty() {
            continue;
        }
        if let Some(log) = command_log.as_deref_mut() {
            let _ = writeln!(log, "{command}");
            let _ = log.flush();
        }
        let Some(reply) = respond(command, meter, faults, &writer) else {
            continue;
        };
        let mut text = reply.join("\r\n");
        text.push_str("\r\n");
        if writer
            .write_all(text.as_bytes())
            .and_then(|()| writer.flush())
            .is_err()
        {
            break;
        }
    }
    meter.abandon();
    say(&format!("client {peer} disconnected"));
}

/// The reply lines to `command`, or None for a command the stall fault leaves unanswered.
fn respond(
    command: &str,
    meter: &mut Meter,
    faults: &Faults,
    client: &TcpStream,
) -> Option<Vec<String>> {
    let fields: Vec<&str> = command.split(',').map(str::trim).collect();
    let name = fields[0];
    let arguments = &fields[1..];
    if faults.stalls(name) {
        say(&format!("WARNING: not answering {command:?} (fault stall)"));
        return None;
    }
    if faults.errors(name) {
        say(&format!(
            "WARNING: refusing {command:?} (fault error-reply)"
        ));
        return Some(vec!["Error: Meter busy".into()]);
    }
    let one = |line: String| Some(vec![line]);
    let wrong_count = || Some(vec!["Invalid number of parameters".to_owned()]);
    match (name.to_ascii_lowercase().as_str(), arguments) {
        ("hello", []) if faults.refuse_hello => {
            one("Error: not accepting clients (fault refuse-hello)".into())
        }
        ("hello", []) => one("Hello, PTDaemon here!".into()),
        ("identify", []) => one(meter.identify()),
        ("rr", []) => one(meter.ranges()),
        ("rr", [channel]) => one(if is_sum_channel(channel) {
            meter.ranges()
        } else {
            "Invalid channel".into()
        }),
        ("sr", [quantity, value]) => one(meter.set_range(quantity, value)),
        ("sr", [quantity, value, channel]) => one(if is_sum_channel(channel) {
            meter.set_range(quantity, value)
        } else {
            "Invalid channel".into()
        }),
        ("go", [interval, rampup, rest @ ..]) if rest.len() <= 1 => {
            let interval = interval.parse::<u64>().ok().filter(|ms| *ms > 0);
            let rampup = rampup.parse::<u64>().ok();
            let (Some(interval), Some(rampup)) = (interval, rampup) else {
                return one("Error in parameter".into());
            };
            let mark = rest.first().copied().unwrap_or("");
            one(meter.go(interval, rampup, mark, client.try_clone().ok()))
        }
        ("stop", []) => one(meter.stop()),
        ("rl", []) => Some(meter.read_samples(None)),
        ("rl", [count]) => match count.parse::<usize>() {
            Ok(count) => Some(meter.read_samples(Some(count))),
            Err(_) => one("Error in parameter".into()),
        },
        // `RL,*,*` is for multichannel meters; this one has a single channel.
        ("rl", _) => wrong_count(),
        ("watts", []) => one(meter.watts()),
        ("uncertainty", []) | ("uncertainty", ["*"]) => one(meter.uncertainty()),
        ("hello" | "identify" | "rr" | "sr" | "go" | "stop" | "watts" | "uncertainty", _) => {
            wrong_count()
        }
        _ => one("Unknown command".into()),
    }
}

/// Channel 0 (the sum) or 1, the only channel of this single-channel meter.
fn is_sum_channel(channel: &str) -> bool {
    matches!(channel.parse::<u32>(), Ok(0 | 1))
}
