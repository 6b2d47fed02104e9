//! `mlperf-ptd-simulator`: a stand-in for SPEC PTDaemon that speaks its TCP text protocol, so
//! the `ptd://` client can be tested (and demonstrated) without an analyzer. It identifies as
//! SPEC's Dummy device: what it reports is labelled simulated and can never pass MLPerf's
//! real-meter checks. Faults can be injected at each protocol step (`--fault`).

mod args;
mod meter;
mod session;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::ExitCode;

use args::USAGE;
use meter::{say, Meter};

fn main() -> ExitCode {
    let config = match args::parse(std::env::args().skip(1)) {
        Ok(Some(config)) => config,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("mlperf-ptd-simulator: {error}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mlperf-ptd-simulator: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(config: &args::Config) -> Result<(), String> {
    // Both logs are appended to, as PTDaemon's log is: the official server picks its lines out
    // by mark.
    let append = |path: &Path| {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))
    };
    let sample_log: Option<File> = config.sample_log.as_deref().map(append).transpose()?;
    let mut command_log: Option<File> = config.command_log.as_deref().map(append).transpose()?;
    let listener = TcpListener::bind(("127.0.0.1", config.port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", config.port))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot read the port listened on: {e}"))?
        .port();
    {
        // The one line tests wait for, to learn the port.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on 127.0.0.1:{port}");
        let _ = out.flush();
    }
    if let Some(interval) = config.interval {
        say(&format!(
            "sampling every {interval:?}, whatever Go asks (--interval-ms)"
        ));
    }
    let mut meter = Meter::new(config, sample_log);
    // One client at a time, as PTDaemon serves; the next waits in the backlog.
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => session::serve(stream, &mut meter, &config.faults, command_log.as_mut()),
            Err(error) => say(&format!("WARNING: accept failed: {error}")),
        }
    }
    Ok(())
}
