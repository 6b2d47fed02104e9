//! A power meter's process (`mlperf-host isolated-meter`, started by the host): opens the
//! `--power plugin:…` meter exactly as the host does in-process, tells the host what it
//! measures, then answers the host's calls ([`ToMeter`]) until its stdin ends.

use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;

use mlperf_power::SourceError;
use serde::Serialize;

use super::child::die_with_host;
use super::protocol::{self, MeterOpened, ToMeter};
use crate::plugin::power::{open_power_plugin, parse_plugin_power_spec};

/// Runs the meter's process; returns its exit status.
pub fn main(host_pid: u32, spec: &str) -> i32 {
    if !die_with_host(host_pid) {
        return 1;
    }
    match serve(spec) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("mlperf-host power meter process: {error}");
            1
        }
    }
}

fn serve(spec: &str) -> std::io::Result<()> {
    let mut answers = take_stdout()?;
    let (library, config) = parse_plugin_power_spec(spec);
    let mut source = match open_power_plugin(spec, &library, &config) {
        Ok(source) => source,
        Err(error) => return answer::<MeterOpened>(&mut answers, Err(error)),
    };
    let opened = MeterOpened {
        info: source.info(),
        needs_ranging: source.needs_ranging(),
    };
    answer(&mut answers, Ok(opened))?;
    let mut commands = std::io::stdin().lock();
    while let Some(command) = protocol::receive::<ToMeter>(&mut commands)? {
        match command {
            ToMeter::Prepare(phase) => answer(&mut answers, source.prepare(phase)),
            ToMeter::Start { mark } => answer(&mut answers, source.start(&mark)),
            ToMeter::Stop => answer(&mut answers, source.stop()),
            ToMeter::Finish => answer(&mut answers, source.finish()),
        }?;
    }
    // The host let go: the instance is destroyed as the source drops.
    Ok(())
}

fn answer<T: Serialize>(
    answers: &mut impl Write,
    result: Result<T, SourceError>,
) -> std::io::Result<()> {
    protocol::send(answers, &result)
}

/// The answers' descriptor: stdout, moved aside, and stdout itself pointed at stderr, so that
/// whatever the plugin prints cannot garble an answer.
fn take_stdout() -> std::io::Result<File> {
    // SAFETY: fcntl on this process's own stdout.
    let fd = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: dup2 between this process's own standard descriptors.
    if unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor, owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}
