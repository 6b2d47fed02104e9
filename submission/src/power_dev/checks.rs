//! The checks of power-dev's `compliance/check.py`, in its order and with its verdicts: each
//! passes, fails with check.py's reason, or passes with a warning for audit.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::descriptor::{repr, Descriptor, DescriptorError};
use super::{phases, ptd_logs, results_checksum, POWER};
use crate::rule::Rule;

/// The PTDaemon releases power results may be measured with.
const SUPPORTED_VERSIONS: [&str; 1] = ["1.11.1"];
/// The analyzers power results may be measured with: PTDaemon's model name and device number.
const SUPPORTED_MODELS: [(&str, i64); 11] = [
    ("YokogawaWT210", 8),
    ("YokogawaWT500", 35),
    ("YokogawaWT500_multichannel", 48),
    ("YokogawaWT310", 49),
    ("YokogawaWT310E", 49),
    ("YokogawaWT330", 52),
    ("YokogawaWT330E", 52),
    ("YokogawaWT330_multichannel", 77),
    ("YokogawaWT210_DC", 508),
    ("YokogawaWT310_DC", 549),
    ("YokogawaWT330_DC", 586),
];
/// The device numbers as check.py lists them (the order of a Python set of these numbers).
const SUPPORTED_NUMBERS: &str = "35, 549, 8, 586, 77, 48, 49, 52, 508";
/// The multichannel WT330, whose configuration must name two channels.
const WT330_MULTICHANNEL: i64 = 77;
/// The checksums of power-dev's released client and server sources.
const SOURCES_CHECKSUMS: &str = include_str!("../../../configs/power-dev/sources_checksums.json");

/// One of check.py's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    ClientSources,
    ServerSources,
    PtdMessages,
    Uuid,
    SessionName,
    TimeDifference,
    Messages,
    ResultsChecksum,
    PtdLogs,
    PtdConfig,
    Debug,
}

impl Check {
    /// Every check, in check.py's order.
    pub const ALL: [Check; 11] = [
        Check::ClientSources,
        Check::ServerSources,
        Check::PtdMessages,
        Check::Uuid,
        Check::SessionName,
        Check::TimeDifference,
        Check::Messages,
        Check::ResultsChecksum,
        Check::PtdLogs,
        Check::PtdConfig,
        Check::Debug,
    ];

    /// check.py's name for it.
    pub fn title(self) -> &'static str {
        match self {
            Check::ClientSources => "Check client sources checksum",
            Check::ServerSources => "Check server sources checksum",
            Check::PtdMessages => "Check PTD commands and replies",
            Check::Uuid => "Check UUID",
            Check::SessionName => "Check session name",
            Check::TimeDifference => "Check time difference",
            Check::Messages => "Check client server messages",
            Check::ResultsChecksum => "Check results checksum",
            Check::PtdLogs => "Check errors and warnings from PTD logs",
            Check::PtdConfig => "Check PTD configuration",
            Check::Debug => "Check debug is disabled on server-side",
        }
    }

    /// The rule a finding of `mlperf-host check` names.
    pub fn rule(self) -> Rule {
        match self {
            Check::ClientSources | Check::ServerSources => Rule::PowerSources,
            Check::PtdMessages => Rule::PowerPtdMessages,
            Check::Uuid => Rule::PowerUuid,
            Check::SessionName => Rule::PowerSessionName,
            Check::TimeDifference => Rule::PowerTime,
            Check::Messages => Rule::PowerMessages,
            Check::ResultsChecksum => Rule::PowerResultsChecksum,
            Check::PtdLogs => Rule::PowerPtdLogs,
            Check::PtdConfig => Rule::PowerPtdConfig,
            Check::Debug => Rule::PowerDebug,
        }
    }

    /// The session file the check is mostly about (relative to the session).
    pub fn file(self) -> &'static str {
        match self {
            Check::ClientSources | Check::SessionName | Check::TimeDifference => {
                "power/client.json"
            }
            Check::PtdLogs => "power/ptd_logs.txt",
            _ => "power/server.json",
        }
    }

    /// Whether a simulated analyzer fails it by what it is (its identity, its device number,
    /// the lines only a real PTDaemon logs).
    pub fn fails_for_a_simulator(self) -> bool {
        matches!(self, Check::PtdMessages | Check::PtdLogs | Check::PtdConfig)
    }
}

/// What a check found.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Passed,
    /// Passed, with something for the audit to look at.
    Warning(String),
    Failed(String),
}

/// Every check's verdict on one session.
#[derive(Debug, Clone)]
pub struct SessionReport {
    pub verdicts: Vec<(Check, Verdict)>,
    /// Why the analyzer is a simulated one (PTDaemon's Dummy device, device number 0,
    /// mlperf-host's simulator), if it is.
    pub simulated: Option<String>,
}

impl SessionReport {
    pub fn passed(&self) -> bool {
        !self
            .verdicts
            .iter()
            .any(|(_, v)| matches!(v, Verdict::Failed(_)))
    }

    /// check.py's log lines: `[x] name` for a pass or a warning, `[ ] name` for a failure,
    /// each reason beneath.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (check, verdict) in &self.verdicts {
            let (mark, reason) = match verdict {
                Verdict::Passed => ("x", None),
                Verdict::Warning(reason) => ("x", Some(reason)),
                Verdict::Failed(reason) => (" ", Some(reason)),
            };
            out.push_str(&format!("[{mark}] {}\n", check.title()));
            if let Some(reason) = reason {
                out.push_str(&format!("\t{reason}\n"));
            }
        }
        out
    }
}

/// A check's outcome while it runs: `Err` ends it as check.py's assertion or warning does.
pub(super) type Outcome = Result<(), Verdict>;

pub(super) fn fail(message: impl Into<String>) -> Outcome {
    Err(Verdict::Failed(message.into()))
}

pub(super) fn warn(message: impl Into<String>) -> Outcome {
    Err(Verdict::Warning(message.into()))
}

/// Runs every check on the session in `dir`; an error when its descriptors cannot be read
/// (check.py stops there too).
pub fn check_session(dir: &Path) -> Result<SessionReport, DescriptorError> {
    let client = Descriptor::read(&dir.join(POWER).join("client.json"))?;
    let server = Descriptor::read(&dir.join(POWER).join("server.json"))?;
    let verdicts = Check::ALL
        .into_iter()
        .map(|check| {
            let outcome = match check {
                Check::ClientSources => sources(&client),
                Check::ServerSources => sources(&server),
                Check::PtdMessages => ptd_messages(&server),
                Check::Uuid => uuid(&client, &server),
                Check::SessionName => session_name(&client, &server),
                Check::TimeDifference => phases::check(&client, &server, dir),
                Check::Messages => messages(&client, &server),
                Check::ResultsChecksum => results_checksum::check(&client, &server, dir),
                Check::PtdLogs => ptd_logs::check(&client, &server, dir),
                Check::PtdConfig => ptd_config(&server),
                Check::Debug => debug(&server),
            };
            (check, outcome.err().unwrap_or(Verdict::Passed))
        })
        .collect();
    Ok(SessionReport {
        verdicts,
        simulated: simulated(&server),
    })
}

fn sources(descriptor: &Descriptor) -> Outcome {
    let known: Vec<Value> = serde_json::from_str(SOURCES_CHECKSUMS).expect("a JSON list");
    let sources = descriptor.get("sources");
    if known.contains(sources) {
        return Ok(());
    }
    // Name the files that differ from the nearest release, beside check.py's verdict.
    let release = &known[known.len() - 1];
    let mut differing: Vec<String> = Vec::new();
    if let (Some(ran), Some(release)) = (sources.as_object(), release.as_object()) {
        for (file, checksum) in release {
            match ran.get(file) {
                Some(got) if got == checksum => {}
                Some(got) => differing.push(format!("{file} is {got}, released {checksum}")),
                None => differing.push(format!("{file} is missing")),
            }
        }
        differing.extend(
            ran.keys()
                .filter(|file| !release.contains_key(*file))
                .map(|file| format!("{file} is not a power-dev source")),
        );
    }
    fail(format!(
        "the sources' checksums are not those of a power-dev release ({}: power-dev was edited \
         or is another version)",
        if differing.is_empty() {
            "not a list of files".to_string()
        } else {
            differing.join("; ")
        }
    ))
}

fn ptd_messages(server: &Descriptor) -> Outcome {
    let messages = server.ptd_messages();
    let identify = server.identify().unwrap_or("");
    if identify.is_empty() {
        return fail("There is no answer to the 'Identify' command for PTD.");
    }
    let model = identify.split(',').next().unwrap_or("");
    let version = version_in(identify).unwrap_or("");
    if !SUPPORTED_VERSIONS.contains(&version) {
        let supported: Vec<String> = SUPPORTED_VERSIONS.iter().map(|v| repr(v)).collect();
        return fail(format!(
            "PTD version {} is not supported. Supported versions are [{}]",
            repr(version),
            supported.join(", ")
        ));
    }
    if !SUPPORTED_MODELS.iter().any(|(name, _)| *name == model) {
        let names: Vec<&str> = SUPPORTED_MODELS.iter().map(|(name, _)| *name).collect();
        return fail(format!(
            "Power meter {} is not supported. Only {} are supported.",
            repr(model),
            names.join(", ")
        ));
    }
    expect_replies(&messages, "SR,A", "Range A changed")?;
    expect_replies(&messages, "SR,V", "Range V changed")?;
    expect_replies(
        &messages,
        "Go,1000,",
        "Starting untimed measurement, maximum 500000 samples at 1000ms with 0 rampup samples",
    )?;
    expect_replies(&messages, "Stop", "Stopping untimed measurement")?;
    // The ranges the analyzer had before the session (RR's reply, the third exchange) are
    // restored at its end: the third volts and the third or fourth amps setting.
    let initial = messages.get(2).map_or("", |(_, reply)| *reply);
    let initial_amps = initial_range(initial, 1)?;
    let initial_volts = initial_range(initial, 3)?;
    let amps_3 = nth_command(&messages, "SR,A", 3)?;
    let amps_4 = nth_command(&messages, "SR,A", 4)?;
    let volts_3 = nth_command(&messages, "SR,V", 3)?;
    let amps_expected = format!("SR,A,{initial_amps}");
    if amps_3 != amps_expected && amps_4 != amps_expected {
        return fail(format!(
            "Do not set Amps range as initial. Expected {}, got {} and {}.",
            repr(&amps_expected),
            repr(amps_3),
            repr(amps_4)
        ));
    }
    let volts_expected = format!("SR,V,{initial_volts}");
    if volts_3 != volts_expected {
        return fail(format!(
            "Do not set Volts range as initial. Expected {}, got {}.",
            repr(&volts_expected),
            repr(volts_3)
        ));
    }
    Ok(())
}

/// The PTDaemon version in an `Identify` reply: what follows `version=` up to a `-`.
fn version_in(identify: &str) -> Option<&str> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| Regex::new(r"version=(.+?)-").expect("a regex"));
    pattern
        .captures(identify)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

/// Every command starting with `prefix` got `reply`; the third `Stop` finds no measurement
/// (the server stops once more at the end of a session), and so do the ones after it.
fn expect_replies(messages: &[(&str, &str)], prefix: &str, reply: &str) -> Outcome {
    let mut expected = reply;
    let mut stops = 0;
    for (command, got) in messages {
        if !command.starts_with(prefix) {
            continue;
        }
        if *command == "Stop" {
            if stops == 2 {
                expected = "Error: no measurement to stop";
            }
            stops += 1;
        }
        if *got != expected {
            return fail(format!(
                "Wrong reply for {} command. Expected {}, but got {}",
                repr(command),
                repr(expected),
                repr(got)
            ));
        }
    }
    Ok(())
}

/// A range from RR's reply (`…,<auto flag>,<value>,…`): the value when the range was fixed,
/// else `Auto`.
fn initial_range(reply: &str, index: usize) -> Result<String, Verdict> {
    let fields: Vec<&str> = reply.split(',').collect();
    let unreadable = || {
        Verdict::Failed(format!(
            "Can not get power meters initial values from {}",
            repr(reply)
        ))
    };
    let flag = fields.get(index).ok_or_else(unreadable)?;
    if *flag != "0" {
        return Ok("Auto".into());
    }
    let value = fields.get(index + 1).ok_or_else(unreadable)?;
    let number = parse_python_float(value).ok_or_else(unreadable)?;
    Ok(if number > 0.0 {
        value.to_string()
    } else {
        "Auto".into()
    })
}

/// Python's `float()` of a string: surrounding whitespace allowed.
pub(super) fn parse_python_float(text: &str) -> Option<f64> {
    text.trim().parse().ok()
}

fn nth_command<'a>(
    messages: &[(&'a str, &str)],
    prefix: &str,
    n: usize,
) -> Result<&'a str, Verdict> {
    messages
        .iter()
        .filter(|(command, _)| command.starts_with(prefix))
        .nth(n - 1)
        .map(|(command, _)| *command)
        .ok_or_else(|| {
            Verdict::Failed(format!(
                "Can not find the {n} command starting with {}.",
                repr(prefix)
            ))
        })
}

fn uuid(client: &Descriptor, server: &Descriptor) -> Outcome {
    for side in ["client", "server"] {
        let ours = &client.get("uuid")[side];
        let theirs = &server.get("uuid")[side];
        let (Some(a), Some(b)) = (
            ours.as_str().and_then(canonical_uuid),
            theirs.as_str().and_then(canonical_uuid),
        ) else {
            return fail(format!(
                "badly formed '{side} uuid' ({ours} in client.json, {theirs} in server.json)"
            ));
        };
        if a != b {
            return fail(format!("'{side} uuid' is not equal."));
        }
    }
    Ok(())
}

/// A UUID's 32 hex digits, lower case, whatever its spelling (hyphens, braces, `urn:uuid:`).
fn canonical_uuid(text: &str) -> Option<String> {
    let text = text.trim();
    let text = text.strip_prefix("urn:uuid:").unwrap_or(text);
    let text = text.trim_start_matches('{').trim_end_matches('}');
    let digits: String = text.chars().filter(|c| *c != '-').collect();
    (digits.len() == 32 && digits.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| digits.to_ascii_lowercase())
}

fn session_name(client: &Descriptor, server: &Descriptor) -> Outcome {
    let (ours, theirs) = (client.get("session_name"), server.get("session_name"));
    if ours != theirs {
        return fail(format!(
            "Session name is not equal. Client session name is {}. Server session name is {}",
            json_repr(ours),
            json_repr(theirs)
        ));
    }
    Ok(())
}

fn json_repr(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), repr)
}

fn messages(client: &Descriptor, server: &Descriptor) -> Outcome {
    let (ours, theirs) = (client.messages(), server.messages());
    if ours.len() != theirs.len() {
        return fail(format!(
            "Client commands list length ({}) should be equal to server commands list length ({}). ",
            ours.len(),
            theirs.len()
        ));
    }
    for (i, ((command, reply), (server_command, server_reply))) in
        ours.iter().zip(&theirs).enumerate()
    {
        if command != server_command {
            return fail(format!(
                "Commands {i} are different. Server command is {}. Client command is {}.",
                repr(server_command),
                repr(command)
            ));
        }
        // The time exchange's replies are each side's clock.
        if *command != "time" && reply != server_reply {
            return fail(format!(
                "Replies on command {} are different. Server reply is {}. Client command is {}.",
                repr(command),
                repr(server_reply),
                repr(reply)
            ));
        }
    }
    let (first_command, first_reply) = theirs.first().copied().unwrap_or(("", ""));
    let version = |pattern: &str, line: &str| -> Result<String, Verdict> {
        Regex::new(pattern)
            .expect("a regex")
            .captures(line)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
            .ok_or_else(|| Verdict::Failed(format!("Server version is not defined in:'{line}'")))
    };
    let client_version = version(r"mlcommons/power client v(\d+)\n?$", first_command)?;
    let server_version = version(r"mlcommons/power server v(\d+)\n?$", first_reply)?;
    if client_version != server_version {
        return fail(format!(
            "Client.py version ({client_version}) is not equal server.py version ({server_version})."
        ));
    }
    Ok(())
}

fn ptd_config(server: &Descriptor) -> Outcome {
    let analyzers = server
        .get("ptd_config")
        .as_array()
        .cloned()
        .unwrap_or_default();
    for analyzer in &analyzers {
        let device = analyzer["device_type"].as_i64();
        let Some(device) = device.filter(|d| SUPPORTED_MODELS.iter().any(|(_, n)| n == d)) else {
            return fail(format!(
                "Device number {} is not supported. Supported numbers are {SUPPORTED_NUMBERS}",
                analyzer["device_type"],
            ));
        };
        if device == WT330_MULTICHANNEL {
            let command: Vec<&str> = analyzer["command"]
                .as_array()
                .map(|c| c.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let channels = command
                .iter()
                .position(|word| *word == "-c")
                .and_then(|i| command.get(i + 1))
                .copied()
                .unwrap_or("");
            let configured = analyzer["channel"].as_array().map_or(0, Vec::len);
            if channels.split(',').count() != 2 || configured != 2 {
                return fail(
                    "Expected multichannel mode for YokogawaWT330_multichannel, but got 1-channel.",
                );
            }
        }
    }
    Ok(())
}

fn debug(server: &Descriptor) -> Outcome {
    match server.json.get("debug") {
        None | Some(Value::Bool(false)) => Ok(()),
        Some(_) => fail("Server was running in debug mode"),
    }
}

/// Why the session's analyzer is a simulated one, if it is.
fn simulated(server: &Descriptor) -> Option<String> {
    simulated_analyzer(server.identify().unwrap_or(""), &server.device_types())
}

/// Why an analyzer is a simulated one, if it is: PTDaemon's Dummy device (device number 0,
/// which mlperf-host's simulator identifies as) measures nothing.
pub fn simulated_analyzer(identify: &str, device_types: &[i64]) -> Option<String> {
    let dummy = identify.starts_with("Dummy") || identify.contains("-sim");
    (dummy || device_types.contains(&0)).then(|| {
        format!(
            "the analyzer is simulated (PTDaemon's Identify: {}; device numbers {device_types:?}): \
             its readings are made up, never a measurement",
            repr(identify),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_ranges_are_read_as_check_py_reads_them() {
        assert_eq!(
            version_in("YokogawaWT310,version=1.11.1-abc,(c) SPEC"),
            Some("1.11.1")
        );
        assert_eq!(version_in("Dummy,version=0.0.0-sim"), Some("0.0.0"));
        assert_eq!(version_in("Dummy,version=1.11.1"), None);
        assert_eq!(initial_range("Ranges,0,2.5,0,300", 1).unwrap(), "2.5");
        assert_eq!(initial_range("Ranges,1,2.5,0,300", 1).unwrap(), "Auto");
        assert_eq!(initial_range("Ranges,0,-1,0,300", 1).unwrap(), "Auto");
        assert_eq!(
            initial_range("Ranges,0,300", 3),
            Err(Verdict::Failed(
                "Can not get power meters initial values from 'Ranges,0,300'".into()
            ))
        );
        assert_eq!(
            canonical_uuid("{12345678-1234-5678-1234-567812345678}"),
            canonical_uuid("12345678123456781234567812345678")
        );
        assert_eq!(canonical_uuid("not-a-uuid"), None);
    }

    #[test]
    fn the_third_stop_finds_no_measurement() {
        let stopping = "Stopping untimed measurement";
        let none = "Error: no measurement to stop";
        let messages = [("Stop", stopping), ("Stop", stopping), ("Stop", none)];
        assert_eq!(expect_replies(&messages, "Stop", stopping), Ok(()));
        let early = [("Stop", stopping), ("Stop", none)];
        assert!(matches!(
            expect_replies(&early, "Stop", stopping),
            Err(Verdict::Failed(m)) if m.contains("Wrong reply for 'Stop'")
        ));
    }
}
