//! The command line: PTDaemon's own arguments (so the simulator can stand in for the `ptd`
//! binary of the official server) plus the simulator's load profile and fault injection.

use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) const USAGE: &str = "\
usage: mlperf-ptd-simulator [-p PORT] [-l LOGFILE] [--watts W | --trace FILE] [--volts V]
                            [--interval-ms MS] [--log-commands FILE] [--fault FAULT]...
                            [PTDaemon options: -c CH -b N -g -n -y -U -D] [DEVTYPE DEVPORT]

A SPEC PTDaemon stand-in on 127.0.0.1 that identifies as the Dummy device: its readings are
made up, never a measurement. It prints `listening on 127.0.0.1:PORT` once it accepts.

  -p PORT              TCP port on 127.0.0.1 (default 8888; 0 picks a free one)
  -l LOGFILE           append one line per sample: Time,...,PF,...,Mark,<mark>
  --watts W            constant draw in watts (default 200)
  --trace FILE         watts, one number a line, cycled one a sample
                       Without either (as when MLCommons' power server starts it with
                       PTDaemon's arguments), the load is MLPERF_PTD_SIMULATOR_LOAD (watts, or a
                       trace file's path), else the trace file mlperf-ptd-simulator.load beside
                       the executable, else 200 W
  --volts V            line voltage (default 230); amps = watts / volts / 0.95
  --interval-ms MS     sample every MS ms whatever `Go` asks (for fast tests)
  --log-commands FILE  append every command received, one a line
  --fault FAULT        inject a fault (repeatable):
                         disconnect-after-go=N  drop the client N samples after Go
                         error-reply=CMD        answer CMD with `Error: Meter busy`
                         stall=CMD              never answer CMD
                         invalid-samples=K      every K-th sample reads -1 W
                         nan-samples=K          every K-th sample reads nan W
                         refuse-hello           answer Hello with an error";

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Profile {
    Constant(f64),
    /// Watts cycled one a sample (never empty).
    Cycle(Vec<f64>),
}

impl Profile {
    /// The draw of the `index`-th sample of a measurement.
    pub(crate) fn watts(&self, index: u64) -> f64 {
        match self {
            Profile::Constant(watts) => *watts,
            Profile::Cycle(values) => values[(index % values.len() as u64) as usize],
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Faults {
    pub disconnect_after_go: Option<u64>,
    /// Command names (`SR`, `Go`, …), compared without regard to case.
    pub error_reply: Vec<String>,
    pub stall: Vec<String>,
    pub invalid_every: Option<u64>,
    pub nan_every: Option<u64>,
    pub refuse_hello: bool,
}

impl Faults {
    pub(crate) fn errors(&self, command: &str) -> bool {
        self.error_reply
            .iter()
            .any(|c| c.eq_ignore_ascii_case(command))
    }

    pub(crate) fn stalls(&self, command: &str) -> bool {
        self.stall.iter().any(|c| c.eq_ignore_ascii_case(command))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Config {
    pub port: u16,
    pub sample_log: Option<PathBuf>,
    pub command_log: Option<PathBuf>,
    pub profile: Profile,
    pub volts: f64,
    pub interval: Option<Duration>,
    pub faults: Faults,
}

/// The configuration, or None when help was asked for.
pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Config>, String> {
    let mut config = Config {
        port: 8888,
        sample_log: None,
        command_log: None,
        profile: Profile::Constant(200.0),
        volts: 230.0,
        interval: None,
        faults: Faults::default(),
    };
    let mut watts_given = false;
    let mut trace_given = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "-p" => {
                let text = value("-p")?;
                config.port = text
                    .parse()
                    .map_err(|_| format!("-p {text:?}: not a TCP port"))?;
            }
            "-l" => config.sample_log = Some(value("-l")?.into()),
            "--log-commands" => config.command_log = Some(value("--log-commands")?.into()),
            "--watts" => {
                config.profile = Profile::Constant(positive("--watts", &value("--watts")?)?);
                watts_given = true;
            }
            "--trace" => {
                config.profile = read_trace(&value("--trace")?)?;
                trace_given = true;
            }
            "--volts" => config.volts = positive("--volts", &value("--volts")?)?,
            "--interval-ms" => {
                let text = value("--interval-ms")?;
                let ms = text
                    .parse::<u64>()
                    .ok()
                    .filter(|ms| *ms > 0)
                    .ok_or_else(|| format!("--interval-ms {text:?}: not a positive number"))?;
                config.interval = Some(Duration::from_millis(ms));
            }
            "--fault" => add_fault(&mut config.faults, &value("--fault")?)?,
            // PTDaemon's own options, accepted and ignored: channel, GPIB board.
            "-c" | "-b" => {
                value(&arg)?;
            }
            // Interface flags (GPIB, RS232, ...), DC mode (power-dev's dcFlag).
            "-g" | "-n" | "-y" | "-U" | "-d" | "-D" => {}
            other if other.starts_with('-') && other.len() > 1 => {
                return Err(format!("unknown option {other:?}"))
            }
            // <devtype> <devport>: there is no device to open.
            _ => {}
        }
    }
    if watts_given && trace_given {
        return Err("--watts and --trace exclude each other".into());
    }
    if !watts_given && !trace_given {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join(LOAD_FILE)));
        if let Some(profile) = default_profile(
            std::env::var(LOAD_VARIABLE).ok().as_deref(),
            beside.as_deref(),
        )? {
            config.profile = profile;
        }
    }
    Ok(Some(config))
}

/// The load profile's environment variable: watts, or a trace file's path.
pub(crate) const LOAD_VARIABLE: &str = "MLPERF_PTD_SIMULATOR_LOAD";
/// The trace file read from beside the executable when neither flag nor variable gives one.
pub(crate) const LOAD_FILE: &str = "mlperf-ptd-simulator.load";

/// The load when no flag gives it: the variable's, else the file beside the executable's.
fn default_profile(
    variable: Option<&str>,
    beside: Option<&Path>,
) -> Result<Option<Profile>, String> {
    if let Some(value) = variable.map(str::trim).filter(|v| !v.is_empty()) {
        if let Ok(watts) = value.parse::<f64>() {
            return positive(LOAD_VARIABLE, value).map(|_| Some(Profile::Constant(watts)));
        }
        return read_trace(value)
            .map(Some)
            .map_err(|e| format!("{LOAD_VARIABLE}: {e}"));
    }
    match beside.filter(|path| path.is_file()) {
        Some(path) => read_trace(&path.to_string_lossy()).map(Some),
        None => Ok(None),
    }
}

fn positive(name: &str, text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && v.is_finite())
        .ok_or_else(|| format!("{name} {text:?}: not a positive number"))
}

fn read_trace(path: &str) -> Result<Profile, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--trace {path}: cannot read: {e}"))?;
    let values = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|(i, line)| {
            line.trim().parse::<f64>().map_err(|_| {
                format!(
                    "--trace {path}, line {}: {:?} is not watts",
                    i + 1,
                    line.trim()
                )
            })
        })
        .collect::<Result<Vec<f64>, String>>()?;
    if values.is_empty() {
        return Err(format!("--trace {path}: no watts in it"));
    }
    Ok(Profile::Cycle(values))
}

fn add_fault(faults: &mut Faults, text: &str) -> Result<(), String> {
    let (kind, argument) = text.split_once('=').unwrap_or((text, ""));
    let count = || {
        argument
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("--fault {text:?}: {kind}= takes a positive count"))
    };
    let command = || {
        if argument.is_empty() || argument.contains(',') {
            Err(format!(
                "--fault {text:?}: {kind}= takes a command name, e.g. SR"
            ))
        } else {
            Ok(argument.to_owned())
        }
    };
    match kind {
        "disconnect-after-go" => faults.disconnect_after_go = Some(count()?),
        "error-reply" => faults.error_reply.push(command()?),
        "stall" => faults.stall.push(command()?),
        "invalid-samples" => faults.invalid_every = Some(count()?),
        "nan-samples" => faults.nan_every = Some(count()?),
        "refuse-hello" if argument.is_empty() => faults.refuse_hello = true,
        _ => {
            return Err(format!(
                "unknown fault {text:?} (known: disconnect-after-go=N, error-reply=CMD, \
                 stall=CMD, invalid-samples=K, nan-samples=K, refuse-hello)"
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &str) -> Result<Option<Config>, String> {
        parse(words.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn ptd_arguments_and_simulator_options_parse() {
        let config = parse_words(
            "-l /tmp/log -p 0 -c 1 -D -y --volts 120 --interval-ms 50 --fault stall=Go \
             --fault invalid-samples=4 0 COM1",
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.port, 0);
        assert_eq!(config.sample_log, Some(PathBuf::from("/tmp/log")));
        assert_eq!(config.volts, 120.0);
        assert_eq!(config.interval, Some(Duration::from_millis(50)));
        assert!(config.faults.stalls("go") && !config.faults.stalls("Stop"));
        assert_eq!(config.faults.invalid_every, Some(4));
        assert_eq!(config.profile, Profile::Constant(200.0));
        assert_eq!(parse_words("--help").unwrap(), None);
        for (words, expected) in [
            ("-p", "needs a value"),
            ("-p 70000", "TCP port"),
            ("--watts -3", "positive"),
            ("--fault explode", "unknown fault"),
            ("--fault stall=", "command name"),
            ("--fault invalid-samples=0", "positive count"),
            ("--frobnicate", "unknown option"),
            ("--trace /nonexistent/file", "cannot read"),
        ] {
            let error = parse_words(words).unwrap_err();
            assert!(error.contains(expected), "{words}: {error}");
        }
    }

    #[test]
    fn the_load_comes_from_the_variable_or_the_file_beside() {
        let dir = std::env::temp_dir().join(format!("ptd-sim-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(LOAD_FILE);
        std::fs::write(&file, "180\n# idle\n220\n").unwrap();
        let cycle = Profile::Cycle(vec![180.0, 220.0]);
        assert_eq!(
            default_profile(Some("150"), Some(&file)).unwrap(),
            Some(Profile::Constant(150.0))
        );
        let path = file.to_string_lossy().into_owned();
        assert_eq!(
            default_profile(Some(&path), None).unwrap(),
            Some(cycle.clone())
        );
        assert_eq!(default_profile(None, Some(&file)).unwrap(), Some(cycle));
        assert_eq!(
            default_profile(Some(" "), Some(&dir.join("absent"))).unwrap(),
            None
        );
        let error = default_profile(Some("-5"), None).unwrap_err();
        assert!(
            error.contains(LOAD_VARIABLE) && error.contains("positive"),
            "{error}"
        );
        let error = default_profile(Some("/nonexistent/load"), None).unwrap_err();
        assert!(
            error.starts_with(LOAD_VARIABLE) && error.contains("cannot read"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cycle_wraps_around() {
        let profile = Profile::Cycle(vec![100.0, 300.0]);
        assert_eq!(
            [0, 1, 2, 3].map(|i| profile.watts(i)),
            [100.0, 300.0, 100.0, 300.0]
        );
    }
}
