//! Config files: `mlperf.conf`, `user.conf` and `audit.config` (spec §3).
//!
//! The semantics are those of the official `TestSettings::FromConfig` of LoadGen 6.0.17:
//!
//! * a line is `model.scenario.key = value`, whitespace-separated; a lone `#` token starts a
//!   comment line;
//! * integers are read like `strtoull(v, 0)` (`0x1f` hex, `017` octal), reals like `strtod`;
//!   integer fields get `value × multiplier`, real fields `value × multiplier` (ms → ns ×1e6,
//!   percent → fraction ×0.01);
//! * lookup precedence `model.scenario.key` > `*.scenario.key` > `model.*.key` > `*.*.key`;
//!   scenario-specific keys (`Server.target_qps`, …) always use their literal scenario name,
//!   generic keys the scenario being run;
//! * seeds, `accuracy_log_probability` and `test05*` are honoured only from the mlperf.conf
//!   layer, an audit.config is applied with model `*`;
//! * a file with any error applies nothing.
//!
//! Where the official parser silently drops a line, this one is stricter (project rule):
//!
//! * **errors** (the whole file is rejected, each error names `file:line` and the line text):
//!   missing spaces around `=` (`a.b.c=1` is silently ignored upstream), a comment after a key
//!   or a value, a `#comment` without a space, a missing value, extra tokens, a value that is
//!   not a number, a non-finite number, and — for keys LoadGen reads — a value the field cannot
//!   hold: a fraction, negative number or invalid octal for an integer field (upstream truncates
//!   `1.5` to 1 and `08` to 0), a product that overflows `u64`, `mode` outside 0..=3,
//!   `Server.max_async_queries` beyond `i32::MAX` (upstream narrows it through an `int`);
//! * **warnings** (returned to the caller, nothing rejected): a key LoadGen never reads (wrong
//!   shape, unknown scenario name, unknown key name, or a scenario-specific key under another
//!   scenario such as `*.Offline.target_latency`), a duplicated key (the last one wins, as
//!   upstream), a boolean other than 0/1, a mlperf.conf-only key in a user.conf or audit.config,
//!   a model-specific line in an audit.config, and a TTFT/TPOT bound or token scaling factor
//!   that matches but is not read because token latencies are off.
//!
//! Keys that official files carry although LoadGen never reads them are accepted silently:
//! `target_duration` (mlperf.conf), `Offline.target_latency_percentile` (mlperf.conf),
//! `test07_accuracy_threshold` and `test09_{min,max}_output_tokens` (compliance audit.configs,
//! read by the verification scripts).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::settings::{TestMode, TestScenario, TestSettings};

/// The v6.1 rules file, compiled in like the official LoadGen's embedded copy.
pub const EMBEDDED_MLPERF_CONF: &str = include_str!("../../configs/mlperf.conf");

/// The origin used in diagnostics about [`EMBEDDED_MLPERF_CONF`].
pub const EMBEDDED_MLPERF_CONF_ORIGIN: &str = "embedded:mlperf.conf";

/// The official detail-log error (`error_invalid_config`) for a second user.conf.
pub const MULTIPLE_CONF_FILES_MESSAGE: &str =
    "Multiple conf files are used. This is not valid for official submission.";

/// Which layer a file is applied as; decides which keys are honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfType {
    /// The rules file (official `conf_type` 0): additionally reads the three RNG seeds,
    /// `accuracy_log_probability`, `test05` and the test05 seeds.
    MlperfConf,
    /// A submitter's user.conf (official `conf_type` 1).
    UserConf,
    /// A compliance audit.config (official `conf_type` 2): applied with model `*`.
    Audit,
}

/// A problem on one line of a config file (an error or a warning).
///
/// Displays as `origin:line: message: 'line text'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineDiagnostic {
    /// The file path, or [`EMBEDDED_MLPERF_CONF_ORIGIN`].
    pub origin: String,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
    /// The line as written (trailing `\r` removed, long lines shortened).
    pub text: String,
}

impl fmt::Display for LineDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: '{}'",
            self.origin, self.line, self.message, self.text
        )
    }
}

/// A warning about a config line; the file is still applied.
pub type ConfigWarning = LineDiagnostic;

/// Why a config file could not be used. Nothing from the file has been applied.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The path names something that is not a regular file (a FIFO would block the read
    /// forever, a directory or device reads as nothing useful).
    #[error("config file {} is {kind}, not a regular file: give the file itself", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    /// One or more malformed lines (never empty).
    #[error("{}", format_errors(.errors))]
    Invalid { errors: Vec<LineDiagnostic> },
}

impl ConfigError {
    /// The malformed lines (empty for [`ConfigError::Io`]).
    pub fn diagnostics(&self) -> &[LineDiagnostic] {
        match self {
            ConfigError::Io { .. } | ConfigError::NotAFile { .. } => &[],
            ConfigError::Invalid { errors } => errors,
        }
    }
}

/// What a path that is not a regular file is, said before it is opened (the metadata of a
/// FIFO is read without blocking; opening it waits for a writer).
fn not_a_file(metadata: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    match () {
        _ if kind.is_file() => None,
        _ if kind.is_dir() => Some("a directory"),
        _ if kind.is_fifo() => Some("a FIFO (named pipe)"),
        _ if kind.is_socket() => Some("a socket"),
        _ if kind.is_char_device() || kind.is_block_device() => Some("a device"),
        _ => Some("neither file nor folder"),
    }
}

/// At most this many errors are spelled out in `Display` (random input can have thousands).
const MAX_DISPLAYED_ERRORS: usize = 10;

fn format_errors(errors: &[LineDiagnostic]) -> String {
    let mut out = errors
        .iter()
        .take(MAX_DISPLAYED_ERRORS)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    if errors.len() > MAX_DISPLAYED_ERRORS {
        out.push_str(&format!(
            "\n... and {} more errors",
            errors.len() - MAX_DISPLAYED_ERRORS
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The keys LoadGen reads
// ---------------------------------------------------------------------------------------------

/// The `TestSettings` field a key sets, reached through the settings.
type FieldOf<T> = fn(&mut TestSettings) -> &mut T;

/// How a value turns into its field.
#[derive(Clone, Copy)]
enum Kind {
    /// `u64` field: integer value × multiplier.
    Int(u64, FieldOf<u64>),
    /// `u64` field that upstream narrows through a C++ `int` (`Server.max_async_queries`).
    NarrowInt(FieldOf<u64>),
    /// `f64` field: real value × multiplier.
    Real(f64, FieldOf<f64>),
    /// `bool` field set to `value != 0`.
    FlagNonZero(FieldOf<bool>),
    /// `bool` field set to `value == 1`.
    FlagIsOne(FieldOf<bool>),
    /// `mode`: `TestMode` code 0..=3.
    Mode,
}

impl Kind {
    /// Field units per unit written (0.01 for a percentage of a fraction).
    fn scale(self) -> f64 {
        match self {
            Kind::Int(multiplier, _) => multiplier as f64,
            Kind::Real(multiplier, _) => multiplier,
            _ => 1.0,
        }
    }
}

/// A key the official LoadGen reads only once an earlier flag is on.
#[derive(Clone, Copy)]
enum Gate {
    UseTokenLatencies,
    InferTokenLatencies,
}

impl Gate {
    fn open(self, settings: &TestSettings) -> bool {
        match self {
            Gate::UseTokenLatencies => settings.use_token_latencies,
            Gate::InferTokenLatencies => settings.infer_token_latencies,
        }
    }

    /// The warning for a key it keeps closed.
    fn closed(self, name: &str) -> String {
        match self {
            Gate::UseTokenLatencies => {
                "ignored: LoadGen reads TTFT/TPOT bounds only when use_token_latencies is 1".into()
            }
            Gate::InferTokenLatencies => {
                format!("ignored: LoadGen reads {name} only when infer_token_latencies is 1")
            }
        }
    }
}

/// One key LoadGen looks up.
struct KeySpec {
    name: &'static str,
    /// `None`: generic key, looked up with the scenario being run. `Some`: looked up with this
    /// literal scenario name whatever the scenario being run.
    scenario: Option<TestScenario>,
    kind: Kind,
    /// Only honoured from the mlperf.conf layer.
    mlperf_conf_only: bool,
    gate: Option<Gate>,
}

impl KeySpec {
    const fn only_from_mlperf_conf(mut self) -> KeySpec {
        self.mlperf_conf_only = true;
        self
    }

    const fn gated_by(mut self, gate: Gate) -> KeySpec {
        self.gate = Some(gate);
        self
    }

    /// Sets the field from `value`, as the official FromConfig converts it.
    fn set(&self, settings: &mut TestSettings, value: Number) {
        match self.kind {
            Kind::Int(multiplier, field) => *field(settings) = value.uint(multiplier),
            Kind::NarrowInt(field) => {
                // Parse-time check keeps it within i32, so upstream's narrowing is the
                // identity.
                *field(settings) = value.uint(1)
            }
            Kind::Real(multiplier, field) => *field(settings) = value.real * multiplier,
            Kind::FlagNonZero(field) => *field(settings) = value.uint(1) != 0,
            Kind::FlagIsOne(field) => *field(settings) = value.uint(1) == 1,
            Kind::Mode => {
                if let Some(mode) = TestMode::from_code(value.uint(1)) {
                    settings.mode = mode;
                }
            }
        }
    }
}

const MS_TO_NS_INT: u64 = 1_000_000;
const MS_TO_NS: f64 = 1_000_000.0;
const PERCENT: f64 = 0.01;

const fn generic(name: &'static str, kind: Kind) -> KeySpec {
    KeySpec {
        name,
        scenario: None,
        kind,
        mlperf_conf_only: false,
        gate: None,
    }
}

const fn fixed(scenario: TestScenario, name: &'static str, kind: Kind) -> KeySpec {
    KeySpec {
        name,
        scenario: Some(scenario),
        kind,
        mlperf_conf_only: false,
        gate: None,
    }
}

use TestScenario::{MultiStream, Offline, Server, SingleStream};

/// Every key LoadGen reads, with the field it sets, in the order the official `FromConfig`
/// reads them (the order matters for the token-latency gates).
#[rustfmt::skip]
const KEYS: &[KeySpec] = &[
    generic("mode", Kind::Mode),
    generic("qsl_rng_seed", Kind::Int(1, |s| &mut s.qsl_rng_seed)).only_from_mlperf_conf(),
    generic("sample_index_rng_seed", Kind::Int(1, |s| &mut s.sample_index_rng_seed)).only_from_mlperf_conf(),
    generic("schedule_rng_seed", Kind::Int(1, |s| &mut s.schedule_rng_seed)).only_from_mlperf_conf(),
    generic("accuracy_log_probability", Kind::Real(PERCENT, |s| &mut s.accuracy_log_probability)).only_from_mlperf_conf(),
    generic("test05", Kind::FlagIsOne(|s| &mut s.test05)).only_from_mlperf_conf(),
    generic("test05_qsl_rng_seed", Kind::Int(1, |s| &mut s.test05_qsl_rng_seed)).only_from_mlperf_conf(),
    generic("test05_sample_index_rng_seed", Kind::Int(1, |s| &mut s.test05_sample_index_rng_seed)).only_from_mlperf_conf(),
    generic("test05_schedule_rng_seed", Kind::Int(1, |s| &mut s.test05_schedule_rng_seed)).only_from_mlperf_conf(),
    generic("use_token_latencies", Kind::FlagIsOne(|s| &mut s.use_token_latencies)),
    fixed(Server, "ttft_latency", Kind::Int(MS_TO_NS_INT, |s| &mut s.server_ttft_latency)).gated_by(Gate::UseTokenLatencies),
    fixed(Server, "tpot_latency", Kind::Int(MS_TO_NS_INT, |s| &mut s.server_tpot_latency)).gated_by(Gate::UseTokenLatencies),
    generic("infer_token_latencies", Kind::FlagIsOne(|s| &mut s.infer_token_latencies)),
    generic("token_latency_scaling_factor", Kind::Int(1, |s| &mut s.token_latency_scaling_factor)).gated_by(Gate::InferTokenLatencies),
    fixed(SingleStream, "target_latency_percentile", Kind::Real(PERCENT, |s| &mut s.single_stream_target_latency_percentile)),
    fixed(MultiStream, "target_latency_percentile", Kind::Real(PERCENT, |s| &mut s.multi_stream_target_latency_percentile)),
    fixed(MultiStream, "samples_per_query", Kind::Int(1, |s| &mut s.multi_stream_samples_per_query)),
    fixed(Server, "target_latency_percentile", Kind::Real(PERCENT, |s| &mut s.server_target_latency_percentile)),
    fixed(Server, "target_latency", Kind::Int(MS_TO_NS_INT, |s| &mut s.server_target_latency_ns)),
    generic("performance_issue_unique", Kind::FlagNonZero(|s| &mut s.performance_issue_unique)),
    generic("performance_issue_same", Kind::FlagNonZero(|s| &mut s.performance_issue_same)),
    generic("performance_issue_same_index", Kind::Int(1, |s| &mut s.performance_issue_same_index)),
    generic("sample_concatenate_permutation", Kind::FlagIsOne(|s| &mut s.sample_concatenate_permutation)),
    fixed(Server, "coalesce_queries", Kind::FlagNonZero(|s| &mut s.server_coalesce_queries)),
    fixed(Server, "max_async_queries", Kind::NarrowInt(|s| &mut s.server_max_async_queries)),
    generic("min_duration", Kind::Int(1, |s| &mut s.min_duration_ms)),
    generic("max_duration", Kind::Int(1, |s| &mut s.max_duration_ms)),
    generic("min_query_count", Kind::Int(1, |s| &mut s.min_query_count)),
    generic("max_query_count", Kind::Int(1, |s| &mut s.max_query_count)),
    generic("performance_sample_count_override", Kind::Int(1, |s| &mut s.performance_sample_count_override)),
    generic("accuracy_sample_count_override", Kind::Int(1, |s| &mut s.accuracy_sample_count_override)),
    fixed(SingleStream, "target_latency", Kind::Real(MS_TO_NS, |s| &mut s.single_stream_expected_latency_ns)),
    fixed(MultiStream, "target_latency", Kind::Real(MS_TO_NS, |s| &mut s.multi_stream_expected_latency_ns)),
    fixed(Server, "target_qps", Kind::Real(1.0, |s| &mut s.server_target_qps)),
    fixed(Offline, "target_qps", Kind::Real(1.0, |s| &mut s.offline_expected_qps)),
    generic("print_timestamps", Kind::FlagNonZero(|s| &mut s.print_timestamps)),
    generic("accuracy_log_rng_seed", Kind::Int(1, |s| &mut s.accuracy_log_rng_seed)),
    generic("accuracy_log_sampling_target", Kind::Int(1, |s| &mut s.accuracy_log_sampling_target)),
];

/// Key names that official files carry but LoadGen never reads; accepted without a warning.
const IGNORED_NAMES: &[&str] = &[
    "target_duration",
    "test07_accuracy_threshold",
    "test09_min_output_tokens",
    "test09_max_output_tokens",
];

/// How a key relates to what LoadGen reads.
enum KeyClass {
    /// LoadGen reads it; the specs it can feed (several for `*.*.target_latency`).
    Read {
        specs: Vec<&'static KeySpec>,
        model: String,
    },
    /// Carried by official files, never read.
    Ignored,
    /// Never read; the warning to give.
    Unread(String),
}

fn classify_key(key: &str) -> KeyClass {
    // Split from the right: the model part may itself contain dots.
    let mut parts = key.rsplitn(3, '.');
    let (name, scenario, model) = match (parts.next(), parts.next(), parts.next()) {
        (Some(n), Some(s), Some(m)) if !n.is_empty() && !s.is_empty() && !m.is_empty() => (n, s, m),
        _ => {
            return KeyClass::Unread(
                "key is not of the form 'model.scenario.key'; LoadGen never reads it".into(),
            )
        }
    };
    let scenario_ok = scenario == "*" || TestScenario::ALL.iter().any(|s| s.as_str() == scenario);
    if !scenario_ok {
        let hint = TestScenario::ALL
            .iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(scenario))
            .map(|s| format!(" (scenario names are case-sensitive: '{s}')"))
            .unwrap_or_else(|| {
                " (expected SingleStream, MultiStream, Server, Offline or '*')".into()
            });
        return KeyClass::Unread(format!(
            "unknown scenario '{scenario}'{hint}; LoadGen never reads this key"
        ));
    }
    if IGNORED_NAMES.contains(&name)
        || (scenario == "Offline" && name == "target_latency_percentile")
    {
        return KeyClass::Ignored;
    }
    let specs: Vec<&'static KeySpec> = KEYS
        .iter()
        .filter(|spec| spec.name == name)
        .filter(|spec| match spec.scenario {
            None => true,
            Some(s) => scenario == "*" || scenario == s.as_str(),
        })
        .collect();
    if !specs.is_empty() {
        return KeyClass::Read {
            specs,
            model: model.to_string(),
        };
    }
    let read_for: Vec<&str> = TestScenario::ALL
        .into_iter()
        .filter(|&s| {
            KEYS.iter()
                .any(|spec| spec.name == name && spec.scenario == Some(s))
        })
        .map(TestScenario::as_str)
        .collect();
    if read_for.is_empty() {
        let names: Vec<&str> = KEYS.iter().map(|spec| spec.name).collect();
        let hint = crate::suggest::closest(name, &names)
            .map(|known| format!(" (did you mean '{known}'?)"))
            .unwrap_or_default();
        KeyClass::Unread(format!(
            "unknown key '{name}'{hint}; LoadGen never reads it"
        ))
    } else {
        KeyClass::Unread(format!(
            "LoadGen reads '{name}' only for {}; this line is never used",
            read_for.join(", ")
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

/// A value token read both ways, as upstream does at lookup time.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Number {
    /// `strtoull(v, 0)` of a token that is entirely a non-negative integer in range.
    int: Option<u64>,
    /// `strtod(v)` (for hex tokens the hex value, as glibc's strtod reads it).
    real: f64,
}

impl Number {
    fn uint(self, multiplier: u64) -> u64 {
        // Validated at parse time: an integer whose product fits.
        self.int.unwrap_or(0).wrapping_mul(multiplier)
    }
}

/// Parses a value token. Accepts a subset of what upstream accepts (`strtoul(v, 0)` or `strtod`
/// consuming the whole token): no hex floats, no `nan(...)`, and non-finite values are refused.
fn parse_number(token: &str) -> Result<Number, String> {
    let shown = QuotedValue(token);
    let not_a_number = || {
        format!(
            "value '{shown}' is not a number (expected e.g. 42, 0x2a, 052 or 1.5, with nothing after it)"
        )
    };
    let (negative, body) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    if body.is_empty() || body.starts_with(['+', '-']) {
        return Err(not_a_number());
    }
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(not_a_number());
        }
        let magnitude = u64::from_str_radix(hex, 16).ok();
        let real = hex.bytes().fold(0.0_f64, |acc, b| {
            acc * 16.0 + f64::from(char::from(b).to_digit(16).unwrap_or(0))
        });
        if !real.is_finite() {
            return Err(format!("value '{shown}' is out of range"));
        }
        return Ok(Number {
            int: if negative { None } else { magnitude },
            real: if negative { -real } else { real },
        });
    }
    // Rust's float grammar is a subset of strtod's; strtod reads "010" as ten, like this does.
    let real: f64 = body.parse().map_err(|_| not_a_number())?;
    if !real.is_finite() {
        let named = body
            .bytes()
            .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E');
        return Err(match named {
            true => format!("value '{shown}' is not a finite number"),
            false => format!("value '{shown}' is out of range (too large for a number)"),
        });
    }
    let int = if negative || !body.bytes().all(|b| b.is_ascii_digit()) {
        None
    } else if body.len() > 1 && body.starts_with('0') {
        u64::from_str_radix(&body[1..], 8).ok()
    } else {
        body.parse::<u64>().ok()
    };
    Ok(Number {
        int,
        real: if negative { -real } else { real },
    })
}

/// Why a token that is a number is not an integer an integer field can hold.
fn integer_problem(token: &str) -> &'static str {
    let body = token.strip_prefix('+').unwrap_or(token);
    let hex = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X"));
    if body.starts_with('-') {
        "must not be negative"
    } else if hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())) {
        "is too large for an unsigned 64-bit integer"
    } else if !body.bytes().all(|b| b.is_ascii_digit()) {
        "must be an integer"
    } else if body.len() > 1 && body.starts_with('0') {
        "is not a valid octal number (a leading 0 means octal)"
    } else {
        "is too large for an unsigned 64-bit integer"
    }
}

/// Checks a value against what a field can hold; `Ok(Some(msg))` is a warning.
fn check_value(spec: &KeySpec, token: &str, number: Number) -> Result<Option<String>, String> {
    let shown = QuotedValue(token);
    let field = match spec.scenario {
        Some(s) => format!("{s}.{}", spec.name),
        None => spec.name.to_string(),
    };
    let int = || {
        number
            .int
            .ok_or_else(|| format!("'{field}' value '{shown}' {}", integer_problem(token)))
    };
    match spec.kind {
        Kind::Int(multiplier, _) => {
            if int()?.checked_mul(multiplier).is_none() {
                return Err(format!(
                    "'{field}' value '{shown}' overflows a 64-bit integer after conversion"
                ));
            }
        }
        Kind::NarrowInt(_) => {
            if int()? > i32::MAX as u64 {
                return Err(format!(
                    "'{field}' value '{shown}' is larger than {} (LoadGen stores it as an int)",
                    i32::MAX
                ));
            }
        }
        Kind::Real(multiplier, _) => {
            if !(number.real * multiplier).is_finite() {
                return Err(format!("'{field}' value '{shown}' is out of range"));
            }
        }
        Kind::FlagNonZero(_) | Kind::FlagIsOne(_) => {
            let value = int()?;
            if value > 1 {
                let (read_as, rule) = if matches!(spec.kind, Kind::FlagIsOne(_)) {
                    (false, "only 1 enables it")
                } else {
                    (true, "any non-zero value enables it")
                };
                return Ok(Some(format!(
                    "'{field}' is a flag; LoadGen reads {value} as {read_as} ({rule}); write 0 or 1"
                )));
            }
        }
        Kind::Mode => {
            if int()? > 3 {
                return Err(format!(
                    "'mode' value '{shown}' is not 0 (SubmissionRun), 1 (AccuracyOnly), \
                     2 (PerformanceOnly) or 3 (FindPeakPerformance)"
                ));
            }
        }
    }
    check_domain(spec, &field, token, number)?;
    Ok(None)
}

/// Values a field can hold but that mean nothing (a percentile of 150, a negative rate): the
/// official LoadGen takes them and runs oddly or forever; here they are errors.
fn check_domain(spec: &KeySpec, field: &str, token: &str, number: Number) -> Result<(), String> {
    let shown = QuotedValue(token);
    // The defaults are in the domain: what is out of it on the probe is this value.
    let mut probe = TestSettings::default();
    spec.set(&mut probe, number);
    match probe.out_of_domain().first() {
        Some((_, problem)) => Err(format!(
            "'{field}' value '{shown}' {}",
            problem.describe(spec.kind.scale())
        )),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/// One `key = value` line (the last one, if the key is repeated).
#[derive(Debug, Clone)]
struct Entry {
    key: String,
    value: Number,
    line: usize,
    text: String,
    /// The model part of the key, if LoadGen reads the key.
    read_model: Option<String>,
    /// LoadGen reads the key only from the mlperf.conf layer.
    mlperf_conf_only: bool,
}

/// A parsed config file: its entries with their `origin:line`, ready to apply.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    origin: String,
    /// In order of first appearance.
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// Warnings found while parsing (unknown keys, duplicates, odd flags).
    parse_warnings: Vec<ConfigWarning>,
}

/// C `isspace` in the "C" locale, which is what upstream's `>>` splits on.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// Longest line text quoted in a diagnostic.
const MAX_QUOTED_CHARS: usize = 160;

fn quote_line(line: &str) -> String {
    let line = line.trim_end_matches(['\r', '\n']);
    match line.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line.to_string(),
    }
}

/// A value as quoted in a message: at most 40 characters (a 10 MB value is not echoed whole);
/// formatted only when a message is.
struct QuotedValue<'a>(&'a str);

impl std::fmt::Display for QuotedValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.char_indices().nth(40) {
            Some((cut, _)) => write!(f, "{}... ({} bytes)", &self.0[..cut], self.0.len()),
            None => f.write_str(self.0),
        }
    }
}

/// Splits a non-comment line into `(key, value)`, or says why it is malformed.
fn split_line(line: &str) -> Result<Option<(&str, &str)>, String> {
    let tokens: Vec<&str> = line.split(is_c_space).filter(|t| !t.is_empty()).collect();
    match tokens.as_slice() {
        [] | ["#", ..] => Ok(None),
        [first, ..] if first.starts_with('\u{feff}') => {
            Err("the file starts with a byte-order mark; LoadGen would misread this line".into())
        }
        [first, ..] if first.starts_with('#') => Err(
            "a comment needs '#' as a separate token ('# text'); LoadGen reads '#text' as a key"
                .into(),
        ),
        [key, ..] if key.contains('=') => {
            Err("spaces around '=' are required ('key = value')".into())
        }
        [_] => Err("missing ' = value'".into()),
        [_, "#", ..] => Err("missing ' = value' before the comment".into()),
        [_, eq, ..] if *eq != "=" => {
            if eq.starts_with('=') {
                Err("spaces around '=' are required ('key = value')".into())
            } else {
                Err("expected '=' after the key".into())
            }
        }
        [_, _] => Err("missing value after '='".into()),
        [_, _, value, ..] if value.starts_with('#') => Err("missing value after '='".into()),
        [_, _, _, extra, ..] => {
            if extra.starts_with('#') {
                Err(
                    "comments after a value are not allowed; put the comment on its own line"
                        .into(),
                )
            } else {
                Err("unexpected text after the value".into())
            }
        }
        [key, _, value] => Ok(Some((key, value))),
    }
}

impl ConfigFile {
    /// Parses config text. `origin` names the source in diagnostics (usually the path).
    /// Collects every malformed line; any error rejects the whole file.
    pub fn parse(text: &str, origin: &str) -> Result<ConfigFile, ConfigError> {
        Self::parse_bytes(text.as_bytes(), origin)
    }

    /// Reads and parses a file; the path is the origin in diagnostics.
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        if let Some(kind) = std::fs::metadata(path).ok().and_then(|m| not_a_file(&m)) {
            return Err(ConfigError::NotAFile {
                path: path.to_path_buf(),
                kind,
            });
        }
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_bytes(&bytes, &path.display().to_string())
    }

    /// The compiled-in v6.1 mlperf.conf ([`EMBEDDED_MLPERF_CONF`]).
    pub fn embedded() -> &'static ConfigFile {
        static EMBEDDED: OnceLock<ConfigFile> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            ConfigFile::parse(EMBEDDED_MLPERF_CONF, EMBEDDED_MLPERF_CONF_ORIGIN)
                .expect("the embedded mlperf.conf is valid (checked by the unit tests)")
        })
    }

    /// Where the text came from (path or [`EMBEDDED_MLPERF_CONF_ORIGIN`]).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Byte lines, so that a file that is not UTF-8 gets an error naming the line.
    fn parse_bytes(bytes: &[u8], origin: &str) -> Result<ConfigFile, ConfigError> {
        let mut file = ConfigFile {
            origin: origin.to_string(),
            entries: Vec::new(),
            index: HashMap::new(),
            parse_warnings: Vec::new(),
        };
        let mut errors = Vec::new();
        for (number, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let line_nr = number + 1;
            let diagnostic = |message: String, text: &str| LineDiagnostic {
                origin: origin.to_string(),
                line: line_nr,
                message,
                text: quote_line(text),
            };
            let line = match std::str::from_utf8(raw) {
                Ok(line) => line,
                Err(_) => {
                    let lossy = String::from_utf8_lossy(raw);
                    errors.push(diagnostic("line is not valid UTF-8".into(), &lossy));
                    continue;
                }
            };
            match file.parse_line(line, line_nr) {
                Ok(warnings) => file
                    .parse_warnings
                    .extend(warnings.into_iter().map(|w| diagnostic(w, line))),
                Err(message) => errors.push(diagnostic(message, line)),
            }
        }
        if errors.is_empty() {
            Ok(file)
        } else {
            Err(ConfigError::Invalid { errors })
        }
    }

    /// Parses one line into `self`; returns its warnings, or its error.
    fn parse_line(&mut self, line: &str, line_nr: usize) -> Result<Vec<String>, String> {
        let Some((key, token)) = split_line(line)? else {
            return Ok(Vec::new());
        };
        let value = parse_number(token)?;
        let mut warnings = Vec::new();
        let (read_model, mlperf_conf_only) = match classify_key(key) {
            KeyClass::Read { specs, model } => {
                for spec in &specs {
                    warnings.extend(check_value(spec, token, value)?);
                }
                (Some(model), specs.iter().any(|s| s.mlperf_conf_only))
            }
            KeyClass::Ignored => (None, false),
            KeyClass::Unread(message) => {
                warnings.push(message);
                (None, false)
            }
        };
        let entry = Entry {
            key: key.to_string(),
            value,
            line: line_nr,
            text: quote_line(line),
            read_model,
            mlperf_conf_only,
        };
        match self.index.get(key) {
            Some(&at) => {
                warnings.push(format!(
                    "duplicate key; this value replaces the one on line {}",
                    self.entries[at].line
                ));
                self.entries[at] = entry;
            }
            None => {
                self.index.insert(entry.key.clone(), self.entries.len());
                self.entries.push(entry);
            }
        }
        Ok(warnings)
    }

    /// The official four-level lookup.
    fn find(&self, model: &str, scenario: &str, name: &str) -> Option<&Entry> {
        [
            format!("{model}.{scenario}.{name}"),
            format!("*.{scenario}.{name}"),
            format!("{model}.*.{name}"),
            format!("*.*.{name}"),
        ]
        .iter()
        .find_map(|key| self.index.get(key))
        .map(|&at| &self.entries[at])
    }

    fn warning(&self, entry: &Entry, message: String) -> ConfigWarning {
        LineDiagnostic {
            origin: self.origin.clone(),
            line: entry.line,
            message,
            text: entry.text.clone(),
        }
    }

    /// Applies the file to `settings` like the official `FromConfig(path, model, scenario,
    /// conf_type)` after a successful parse. A [`ConfType::Audit`] file is applied with model
    /// `*` whatever `model` is. Returns the parse warnings and those that depend on the
    /// application, sorted by line.
    pub fn apply(
        &self,
        settings: &mut TestSettings,
        model: &str,
        scenario: TestScenario,
        conf_type: ConfType,
    ) -> Vec<ConfigWarning> {
        self.apply_for_scenario_named(settings, model, scenario.as_str(), conf_type)
    }

    /// [`ConfigFile::apply`] for a scenario given by name, as the official `FromConfig` takes
    /// it: a name that is no scenario's still applies the `*.*` and `model.*` keys and the
    /// scenario-specific ones.
    pub fn apply_for_scenario_named(
        &self,
        settings: &mut TestSettings,
        model: &str,
        scenario_name: &str,
        conf_type: ConfType,
    ) -> Vec<ConfigWarning> {
        let model = if conf_type == ConfType::Audit {
            "*"
        } else {
            model
        };
        let mut warnings = self.parse_warnings.clone();
        for entry in &self.entries {
            if conf_type != ConfType::MlperfConf && entry.mlperf_conf_only {
                warnings.push(self.warning(
                    entry,
                    "this key is only honoured from mlperf.conf; ignored here".into(),
                ));
            }
            if conf_type == ConfType::Audit && entry.read_model.as_deref().is_some_and(|m| m != "*")
            {
                warnings.push(self.warning(
                    entry,
                    "an audit.config is applied with model '*'; model-specific lines are never used"
                        .into(),
                ));
            }
        }

        let mut matched = false;
        for spec in KEYS {
            if spec.mlperf_conf_only && conf_type != ConfType::MlperfConf {
                continue;
            }
            // Generic keys use the scenario being run, scenario-specific ones their own name.
            let scenario = match spec.scenario {
                Some(fixed) => fixed.as_str(),
                None => scenario_name,
            };
            let Some(entry) = self.find(model, scenario, spec.name) else {
                continue;
            };
            matched = true;
            match spec.gate {
                Some(gate) if !gate.open(settings) => {
                    warnings.push(self.warning(entry, gate.closed(spec.name)));
                }
                _ => spec.set(settings, entry.value),
            }
        }

        // A user.conf written for another model (or scenario) applies nothing: said, since
        // the run then goes on the rules' defaults (unless its lines were already told of).
        let read = self.entries.iter().find(|e| e.read_model.is_some());
        let untold = warnings.is_empty();
        if let (false, true, ConfType::UserConf, Some(entry)) = (matched, untold, conf_type, read) {
            warnings.push(self.warning(
                entry,
                format!(
                    "no line of this file is for model '{model}' in the {scenario_name} \
                     scenario: nothing of it applies"
                ),
            ));
        }
        warnings.sort_by_key(|w| w.line);
        warnings
    }
}

// ---------------------------------------------------------------------------------------------
// The official FromConfig sequence
// ---------------------------------------------------------------------------------------------

/// The official `TestSettings::FromConfig(user.conf, model, scenario)` sequence for one
/// `TestSettings`: the mlperf.conf layer (embedded, or a custom file) is applied once, before
/// the first user.conf; a second user.conf is applied too but flags the run as not valid for
/// an official submission ([`MULTIPLE_CONF_FILES_MESSAGE`]). Use one loader per settings object
/// (upstream's counter is per process).
#[derive(Debug, Clone)]
pub struct ConfigLoader {
    mlperf_conf: ConfigFile,
    custom_mlperf_conf: bool,
    mlperf_conf_applied: bool,
    user_conf_count: usize,
}

impl Default for ConfigLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigLoader {
    /// A loader whose mlperf.conf layer is the embedded v6.1 file.
    pub fn new() -> Self {
        ConfigLoader {
            mlperf_conf: ConfigFile::embedded().clone(),
            custom_mlperf_conf: false,
            mlperf_conf_applied: false,
            user_conf_count: 0,
        }
    }

    /// A loader whose mlperf.conf layer is `mlperf_conf` instead of the embedded file.
    pub fn with_mlperf_conf(mlperf_conf: ConfigFile) -> Self {
        ConfigLoader {
            mlperf_conf,
            custom_mlperf_conf: true,
            mlperf_conf_applied: false,
            user_conf_count: 0,
        }
    }

    /// Applies the mlperf.conf layer if it has not been applied yet (upstream only does so
    /// inside the first user.conf call; call this when there is no user.conf).
    pub fn apply_mlperf_conf(
        &mut self,
        settings: &mut TestSettings,
        model: &str,
        scenario: TestScenario,
    ) -> Vec<ConfigWarning> {
        if self.mlperf_conf_applied {
            return Vec::new();
        }
        self.mlperf_conf_applied = true;
        self.mlperf_conf
            .apply(settings, model, scenario, ConfType::MlperfConf)
    }

    /// Applies a parsed user.conf, preceded by the mlperf.conf layer on first use.
    pub fn apply_user_conf(
        &mut self,
        settings: &mut TestSettings,
        user_conf: &ConfigFile,
        model: &str,
        scenario: TestScenario,
    ) -> Vec<ConfigWarning> {
        let mut warnings = self.apply_mlperf_conf(settings, model, scenario);
        self.user_conf_count += 1;
        warnings.extend(user_conf.apply(settings, model, scenario, ConfType::UserConf));
        warnings
    }

    /// Reads and applies a user.conf. On error nothing is applied (not even the mlperf.conf
    /// layer, unlike upstream, which has applied it before it parses the user.conf).
    pub fn load_user_conf(
        &mut self,
        settings: &mut TestSettings,
        path: &Path,
        model: &str,
        scenario: TestScenario,
    ) -> Result<Vec<ConfigWarning>, ConfigError> {
        let user_conf = ConfigFile::read(path)?;
        Ok(self.apply_user_conf(settings, &user_conf, model, scenario))
    }

    /// How many user.conf files have been applied.
    pub fn user_conf_count(&self) -> usize {
        self.user_conf_count
    }

    /// More than one user.conf was applied: upstream logs [`MULTIPLE_CONF_FILES_MESSAGE`].
    pub fn multiple_conf_files(&self) -> bool {
        self.user_conf_count > 1
    }

    /// Whether the mlperf.conf layer has been applied.
    pub fn mlperf_conf_applied(&self) -> bool {
        self.mlperf_conf_applied
    }

    /// Whether the mlperf.conf layer is a custom file rather than the embedded one.
    pub fn custom_mlperf_conf(&self) -> bool {
        self.custom_mlperf_conf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: &str = "test.conf";

    fn parse(text: &str) -> ConfigFile {
        match ConfigFile::parse(text, ORIGIN) {
            Ok(file) => file,
            Err(err) => panic!("unexpected parse error:\n{err}"),
        }
    }

    fn parse_err(text: &str) -> ConfigError {
        match ConfigFile::parse(text, ORIGIN) {
            Ok(_) => panic!("expected a parse error for {text:?}"),
            Err(err) => err,
        }
    }

    /// Applies `text` as `conf_type` to default settings; returns settings and warnings.
    fn apply_as(
        text: &str,
        model: &str,
        scenario: TestScenario,
        conf_type: ConfType,
    ) -> (TestSettings, Vec<ConfigWarning>) {
        let mut settings = TestSettings::default();
        let warnings = parse(text).apply(&mut settings, model, scenario, conf_type);
        (settings, warnings)
    }

    fn user(text: &str, model: &str, scenario: TestScenario) -> TestSettings {
        apply_as(text, model, scenario, ConfType::UserConf).0
    }

    fn embedded(model: &str, scenario: TestScenario) -> TestSettings {
        let mut settings = TestSettings::default();
        let warnings =
            ConfigFile::embedded().apply(&mut settings, model, scenario, ConfType::MlperfConf);
        assert!(warnings.is_empty(), "{warnings:?}");
        settings
    }

    // ---- §3.2 precedence ------------------------------------------------------------------

    #[test]
    fn precedence_has_four_levels() {
        let all = "*.*.min_query_count = 4\n\
                   resnet50.*.min_query_count = 3\n\
                   *.Offline.min_query_count = 2\n\
                   resnet50.Offline.min_query_count = 1\n";
        let lines: Vec<&str> = all.lines().collect();
        let run = |lines: &[&str]| user(&lines.join("\n"), "resnet50", TestScenario::Offline);
        assert_eq!(run(&lines).min_query_count, 1);
        assert_eq!(run(&lines[..3]).min_query_count, 2);
        assert_eq!(run(&lines[..2]).min_query_count, 3);
        assert_eq!(run(&lines[..1]).min_query_count, 4);
        // Another model or scenario only sees the wildcard lines.
        assert_eq!(user(all, "bert", TestScenario::Offline).min_query_count, 2);
        assert_eq!(user(all, "bert", TestScenario::Server).min_query_count, 4);
        assert_eq!(
            user(all, "resnet50", TestScenario::Server).min_query_count,
            3
        );
    }

    #[test]
    fn wildcard_model_with_scenario_beats_model_with_wildcard_scenario() {
        let text = "resnet50.*.min_query_count = 7\n*.SingleStream.min_query_count = 5\n";
        assert_eq!(
            user(text, "resnet50", TestScenario::SingleStream).min_query_count,
            5
        );
        assert_eq!(
            user(text, "resnet50", TestScenario::Offline).min_query_count,
            7
        );
    }

    #[test]
    fn names_are_case_sensitive() {
        let (s, warnings) = apply_as(
            "ResNet50.Offline.min_query_count = 5\n*.offline.min_query_count = 6\n",
            "resnet50",
            TestScenario::Offline,
            ConfType::UserConf,
        );
        assert_eq!(s.min_query_count, 100);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("case-sensitive: 'Offline'"));
    }

    #[test]
    fn scenario_specific_keys_use_their_literal_scenario() {
        let text = "*.Server.target_qps = 123\n\
                    *.Offline.target_qps = 456\n\
                    *.SingleStream.target_latency = 3\n\
                    *.MultiStream.samples_per_query = 4\n\
                    *.Server.target_latency = 7\n";
        for scenario in TestScenario::ALL {
            let s = user(text, "m", scenario);
            assert_eq!(s.server_target_qps, 123.0);
            assert_eq!(s.offline_expected_qps, 456.0);
            assert_eq!(s.single_stream_expected_latency_ns, 3e6);
            assert_eq!(s.multi_stream_samples_per_query, 4);
            assert_eq!(s.server_target_latency_ns, 7_000_000);
        }
    }

    #[test]
    fn generic_keys_use_the_scenario_being_run() {
        let text = "*.Server.min_duration = 9\n*.Server.mode = 1\n";
        let server = user(text, "m", TestScenario::Server);
        assert_eq!(
            (server.min_duration_ms, server.mode),
            (9, TestMode::AccuracyOnly)
        );
        let offline = user(text, "m", TestScenario::Offline);
        assert_eq!(offline.min_duration_ms, 10_000);
        assert_eq!(offline.mode, TestMode::PerformanceOnly);
    }

    #[test]
    fn wildcard_scenario_feeds_every_scenario_specific_field() {
        let s = user("*.*.target_latency = 2\n", "m", TestScenario::Offline);
        assert_eq!(s.single_stream_expected_latency_ns, 2e6);
        assert_eq!(s.multi_stream_expected_latency_ns, 2e6);
        assert_eq!(s.server_target_latency_ns, 2_000_000);
    }

    #[test]
    fn model_names_may_contain_dots() {
        let s = user(
            "llama3.1-8b.Offline.min_query_count = 11\n",
            "llama3.1-8b",
            TestScenario::Offline,
        );
        assert_eq!(s.min_query_count, 11);
    }

    // ---- §3.1 values and multipliers --------------------------------------------------------

    #[test]
    fn multipliers_convert_units() {
        let text = "*.SingleStream.target_latency = 2.5\n\
                    *.MultiStream.target_latency = 80\n\
                    *.Server.target_latency = 15\n\
                    *.SingleStream.target_latency_percentile = 90\n\
                    *.MultiStream.target_latency_percentile = 99\n\
                    *.Server.target_latency_percentile = 99.9\n\
                    *.Server.target_qps = 12.5\n\
                    *.Offline.target_qps = 3\n";
        let s = user(text, "m", TestScenario::Server);
        assert_eq!(s.single_stream_expected_latency_ns, 2.5 * 1e6);
        assert_eq!(s.multi_stream_expected_latency_ns, 80.0 * 1e6);
        assert_eq!(s.server_target_latency_ns, 15_000_000);
        // Bit-exact with upstream's `strtod(v) * 0.01` (not `v / 100`).
        assert_eq!(s.single_stream_target_latency_percentile, 90.0 * 0.01);
        assert_eq!(s.multi_stream_target_latency_percentile, 99.0 * 0.01);
        assert_eq!(s.server_target_latency_percentile, 99.9 * 0.01);
        assert_eq!(s.server_target_qps, 12.5);
        assert_eq!(s.offline_expected_qps, 3.0);
    }

    #[test]
    fn plain_integer_fields() {
        let text = "*.*.min_duration = 1\n*.*.max_duration = 2\n*.*.min_query_count = 3\n\
                    *.*.max_query_count = 4\n*.*.performance_sample_count_override = 5\n\
                    *.*.accuracy_sample_count_override = 6\n*.*.performance_issue_same_index = 7\n\
                    *.*.accuracy_log_rng_seed = 8\n*.*.accuracy_log_sampling_target = 9\n\
                    *.Server.max_async_queries = 10\n*.MultiStream.samples_per_query = 11\n";
        let s = user(text, "m", TestScenario::Offline);
        let got = [
            s.min_duration_ms,
            s.max_duration_ms,
            s.min_query_count,
            s.max_query_count,
            s.performance_sample_count_override,
            s.accuracy_sample_count_override,
            s.performance_issue_same_index,
            s.accuracy_log_rng_seed,
            s.accuracy_log_sampling_target,
            s.server_max_async_queries,
            s.multi_stream_samples_per_query,
        ];
        assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    }

    #[test]
    fn integers_are_base_0_like_strtoull() {
        let s = user(
            "*.*.min_query_count = 0x1f\n*.*.max_query_count = 017\n\
             *.*.min_duration = 0X10\n*.*.max_duration = +12\n*.*.accuracy_log_rng_seed = 0\n",
            "m",
            TestScenario::Offline,
        );
        assert_eq!(s.min_query_count, 31);
        assert_eq!(s.max_query_count, 15);
        assert_eq!(s.min_duration_ms, 16);
        assert_eq!(s.max_duration_ms, 12);
        assert_eq!(s.accuracy_log_rng_seed, 0);
        let max = user(
            "*.*.accuracy_log_rng_seed = 18446744073709551615\n",
            "m",
            TestScenario::Offline,
        );
        assert_eq!(max.accuracy_log_rng_seed, u64::MAX);
    }

    #[test]
    fn reals_are_read_like_strtod() {
        // strtod reads a leading zero as decimal but understands hex.
        let text = "*.Server.target_qps = 010\n*.Offline.target_qps = 0x10\n\
                    *.SingleStream.target_latency = 08\n*.MultiStream.target_latency = 1e-3\n";
        let s = user(text, "m", TestScenario::Offline);
        assert_eq!(s.server_target_qps, 10.0);
        assert_eq!(s.offline_expected_qps, 16.0);
        assert_eq!(s.single_stream_expected_latency_ns, 8e6);
        assert_eq!(s.multi_stream_expected_latency_ns, 1e-3 * 1e6);
        // Negative reals parse, but a negative rate means nothing: refused with its line.
        let error = ConfigFile::parse("*.Server.target_qps = -5\n", "user.conf").unwrap_err();
        assert!(error.to_string().contains("user.conf:1:"), "{error}");
    }

    #[test]
    fn number_grammar() {
        let ok = |t: &str| parse_number(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(
            ok("42"),
            Number {
                int: Some(42),
                real: 42.0
            }
        );
        assert_eq!(
            ok("052"),
            Number {
                int: Some(42),
                real: 52.0
            }
        );
        assert_eq!(
            ok("0x2A"),
            Number {
                int: Some(42),
                real: 42.0
            }
        );
        assert_eq!(
            ok("-0x2a"),
            Number {
                int: None,
                real: -42.0
            }
        );
        assert_eq!(
            ok("09"),
            Number {
                int: None,
                real: 9.0
            }
        );
        assert_eq!(
            ok("1.5"),
            Number {
                int: None,
                real: 1.5
            }
        );
        assert_eq!(
            ok(".5"),
            Number {
                int: None,
                real: 0.5
            }
        );
        assert_eq!(
            ok("5."),
            Number {
                int: None,
                real: 5.0
            }
        );
        assert_eq!(
            ok("1E3"),
            Number {
                int: None,
                real: 1000.0
            }
        );
        assert_eq!(
            ok("-3"),
            Number {
                int: None,
                real: -3.0
            }
        );
        assert_eq!(ok("18446744073709551616").int, None);
        for bad in [
            "",
            "+",
            "-",
            "x",
            "0x",
            "0xg",
            "12abc",
            "1.2.3",
            "1e",
            "--1",
            "+-1",
            "1_0",
            "0x1p3",
            "inf",
            "-infinity",
            "nan",
            "1e999",
            "#",
            "=",
        ] {
            assert!(parse_number(bad).is_err(), "{bad:?} should not parse");
        }
    }

    // ---- §3.3 conf types ----------------------------------------------------------------------

    const SEEDS: &str = "*.*.qsl_rng_seed = 1\n*.*.sample_index_rng_seed = 2\n\
                         *.*.schedule_rng_seed = 3\n*.*.accuracy_log_probability = 50\n\
                         *.*.test05 = 1\n*.*.test05_qsl_rng_seed = 4\n\
                         *.*.test05_sample_index_rng_seed = 5\n*.*.test05_schedule_rng_seed = 6\n";

    fn seeds_of(s: &TestSettings) -> [u64; 6] {
        [
            s.qsl_rng_seed,
            s.sample_index_rng_seed,
            s.schedule_rng_seed,
            s.test05_qsl_rng_seed,
            s.test05_sample_index_rng_seed,
            s.test05_schedule_rng_seed,
        ]
    }

    #[test]
    fn seeds_and_test05_are_honoured_from_mlperf_conf() {
        let (s, warnings) = apply_as(SEEDS, "m", TestScenario::Offline, ConfType::MlperfConf);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(seeds_of(&s), [1, 2, 3, 4, 5, 6]);
        assert_eq!(s.accuracy_log_probability, 50.0 * 0.01);
        assert!(s.test05);
        // test05 is a `== 1` flag.
        let (s, _) = apply_as(
            "*.*.test05 = 2\n",
            "m",
            TestScenario::Offline,
            ConfType::MlperfConf,
        );
        assert!(!s.test05);
    }

    #[test]
    fn seeds_and_test05_are_ignored_from_user_conf_and_audit() {
        for conf_type in [ConfType::UserConf, ConfType::Audit] {
            let (s, warnings) = apply_as(SEEDS, "m", TestScenario::Offline, conf_type);
            let defaults = TestSettings::default();
            assert_eq!(s, defaults);
            assert_eq!(warnings.len(), 8, "{warnings:?}");
            assert!(warnings
                .iter()
                .all(|w| w.message.contains("only honoured from mlperf.conf")));
            assert_eq!(warnings[0].to_string().split(':').nth(1), Some("1"));
        }
    }

    #[test]
    fn user_conf_cannot_change_embedded_seeds() {
        let mut settings = TestSettings::default();
        let mut loader = ConfigLoader::new();
        let user_conf = parse("*.*.qsl_rng_seed = 7\n*.Offline.min_query_count = 9\n");
        loader.apply_user_conf(&mut settings, &user_conf, "resnet50", TestScenario::Offline);
        assert_eq!(settings.qsl_rng_seed, 2085463073848966840);
        assert_eq!(settings.min_query_count, 9);
    }

    #[test]
    fn audit_is_applied_with_model_wildcard() {
        let text = "resnet50.SingleStream.min_query_count = 5\n\
                    resnet50.*.min_duration = 6\n\
                    *.SingleStream.max_query_count = 7\n\
                    *.*.mode = 2\n\
                    *.*.accuracy_log_sampling_target = 4096\n";
        let (s, warnings) = apply_as(
            text,
            "resnet50",
            TestScenario::SingleStream,
            ConfType::Audit,
        );
        assert_eq!(s.min_query_count, 100);
        assert_eq!(s.min_duration_ms, 10_000);
        assert_eq!(s.max_query_count, 7);
        assert_eq!(s.mode, TestMode::PerformanceOnly);
        assert_eq!(s.accuracy_log_sampling_target, 4096);
        let lines: Vec<usize> = warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [1, 2]);
        assert!(warnings[0].message.contains("model '*'"));
        // The same text as a user.conf does apply the model lines.
        let s = user(text, "resnet50", TestScenario::SingleStream);
        assert_eq!((s.min_query_count, s.min_duration_ms), (5, 6));
    }

    #[test]
    fn mode_maps_codes_to_test_modes() {
        for (code, mode) in [
            ("0", TestMode::SubmissionRun),
            ("1", TestMode::AccuracyOnly),
            ("2", TestMode::PerformanceOnly),
            ("3", TestMode::FindPeakPerformance),
            ("0x1", TestMode::AccuracyOnly),
        ] {
            let mut settings = TestSettings {
                mode: TestMode::PerformanceOnly,
                ..TestSettings::default()
            };
            if mode == TestMode::PerformanceOnly {
                settings.mode = TestMode::SubmissionRun;
            }
            parse(&format!("*.*.mode = {code}\n")).apply(
                &mut settings,
                "m",
                TestScenario::Offline,
                ConfType::UserConf,
            );
            assert_eq!(settings.mode, mode, "mode = {code}");
        }
        let err = parse_err("*.*.mode = 4\n").to_string();
        assert!(
            err.starts_with("test.conf:1: 'mode' value '4' is not 0"),
            "{err}"
        );
    }

    // ---- token latencies ----------------------------------------------------------------------

    #[test]
    fn use_token_latencies_gates_ttft_and_tpot() {
        let bounds = "*.Server.ttft_latency = 2000\n*.Server.tpot_latency = 200\n";
        let (off, warnings) = apply_as(bounds, "m", TestScenario::Server, ConfType::UserConf);
        assert_eq!(off.server_ttft_latency, 100_000_000);
        assert_eq!(off.server_tpot_latency, 100_000_000);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].message.contains("use_token_latencies"));

        let on = user(
            &format!("*.*.use_token_latencies = 1\n{bounds}"),
            "m",
            TestScenario::Offline,
        );
        assert!(on.use_token_latencies);
        assert_eq!(on.server_ttft_latency, 2_000_000_000);
        assert_eq!(on.server_tpot_latency, 200_000_000);

        // Enabled by an earlier layer: still read.
        let mut settings = TestSettings {
            use_token_latencies: true,
            ..TestSettings::default()
        };
        parse(bounds).apply(&mut settings, "m", TestScenario::Server, ConfType::UserConf);
        assert_eq!(settings.server_ttft_latency, 2_000_000_000);

        // Disabled in this file: not read even though the field was on before.
        let mut settings = TestSettings {
            use_token_latencies: true,
            ..TestSettings::default()
        };
        parse(&format!("*.*.use_token_latencies = 0\n{bounds}")).apply(
            &mut settings,
            "m",
            TestScenario::Server,
            ConfType::UserConf,
        );
        assert!(!settings.use_token_latencies);
        assert_eq!(settings.server_ttft_latency, 100_000_000);
    }

    #[test]
    fn infer_token_latencies_gates_scaling_factor() {
        let (off, warnings) = apply_as(
            "*.*.token_latency_scaling_factor = 69\n",
            "m",
            TestScenario::Offline,
            ConfType::UserConf,
        );
        assert_eq!(off.token_latency_scaling_factor, 0);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("infer_token_latencies"));
        let on = user(
            "*.*.infer_token_latencies = 1\n*.*.token_latency_scaling_factor = 69\n",
            "m",
            TestScenario::Offline,
        );
        assert!(on.infer_token_latencies);
        assert_eq!(on.token_latency_scaling_factor, 69);
    }

    #[test]
    fn flags_are_either_equal_one_or_non_zero() {
        let text = "*.*.sample_concatenate_permutation = 2\n*.*.use_token_latencies = 2\n\
                    *.*.infer_token_latencies = 2\n*.*.performance_issue_unique = 2\n\
                    *.*.performance_issue_same = 2\n*.*.print_timestamps = 2\n\
                    *.Server.coalesce_queries = 2\n";
        let (s, warnings) = apply_as(text, "m", TestScenario::Offline, ConfType::UserConf);
        // `== 1` flags
        assert!(!s.sample_concatenate_permutation);
        assert!(!s.use_token_latencies);
        assert!(!s.infer_token_latencies);
        // `!= 0` flags
        assert!(s.performance_issue_unique);
        assert!(s.performance_issue_same);
        assert!(s.print_timestamps);
        assert!(s.server_coalesce_queries);
        assert_eq!(warnings.len(), 7, "{warnings:?}");
        assert!(warnings[0].message.contains("reads 2 as false"));
        assert!(warnings[3].message.contains("reads 2 as true"));

        let all_on = text.replace(" 2\n", " 1\n");
        let s = user(&all_on, "m", TestScenario::Offline);
        assert!(s.sample_concatenate_permutation && s.use_token_latencies);
        assert!(s.infer_token_latencies && s.performance_issue_unique);
        assert!(s.performance_issue_same && s.print_timestamps && s.server_coalesce_queries);
        // 0 turns them all off again.
        let mut s2 = s.clone();
        parse(&text.replace(" 2\n", " 0\n")).apply(
            &mut s2,
            "m",
            TestScenario::Offline,
            ConfType::UserConf,
        );
        assert_eq!(s2, TestSettings::default());
    }

    // ---- comments and whitespace --------------------------------------------------------------

    #[test]
    fn comments_and_whitespace() {
        let text = "# comment\n\
                    \x20  # indented comment\n\
                    #\n\
                    # ==========\n\
                    \n\
                    \t \n\
                    *.*.min_query_count\t=\t5\r\n\
                    \x20 *.*.max_query_count   =   6   \r\n";
        let (s, warnings) = apply_as(text, "m", TestScenario::Offline, ConfType::UserConf);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!((s.min_query_count, s.max_query_count), (5, 6));
    }

    // ---- stricter errors ----------------------------------------------------------------------

    #[test]
    fn malformed_lines_are_errors_naming_file_line_and_text() {
        let cases = [
            ("a.b.c=1", "spaces around '='"),
            ("*.*.min_query_count=1", "spaces around '='"),
            ("*.*.min_query_count =1", "spaces around '='"),
            ("*.*.min_query_count= 1", "spaces around '='"),
            ("= 1", "spaces around '='"),
            ("*.*.min_query_count = 1 # why", "comments after a value"),
            ("*.*.min_query_count = 1 #", "comments after a value"),
            (
                "*.*.min_query_count = 1 2",
                "unexpected text after the value",
            ),
            ("*.*.min_query_count = 12abc", "is not a number"),
            ("*.*.min_query_count =", "missing value"),
            ("*.*.min_query_count = # c", "missing value"),
            ("*.*.min_query_count", "missing ' = value'"),
            (
                "*.*.min_query_count # c",
                "missing ' = value' before the comment",
            ),
            ("*.*.min_query_count : 1", "expected '='"),
            ("#comment", "separate token"),
            ("#comment with words", "separate token"),
            ("\u{feff}*.*.min_query_count = 1", "byte-order mark"),
            ("*.*.min_query_count = 1.5", "must be an integer"),
            ("*.*.min_query_count = 1e3", "must be an integer"),
            ("*.*.min_query_count = -1", "must not be negative"),
            ("*.*.min_query_count = 08", "octal"),
            ("*.*.min_query_count = 18446744073709551616", "too large"),
            ("*.*.min_query_count = 0x10000000000000000", "too large"),
            ("*.Server.ttft_latency = 18446744073709551", "overflows"),
            (
                "*.Server.max_async_queries = 2147483648",
                "larger than 2147483647",
            ),
            ("*.*.target_latency = 0.5", "Server.target_latency"),
            ("*.Server.target_qps = inf", "not a finite number"),
            ("*.Server.target_qps = nan", "not a finite number"),
            ("*.SingleStream.target_latency = 1e305", "out of range"),
            (
                "*.Server.target_latency_percentile = 150",
                "not a percentile above 0 and at most 100",
            ),
            (
                "*.SingleStream.target_latency_percentile = 0",
                "not a percentile above 0",
            ),
            (
                "*.Server.target_qps = -5",
                "must be above 0 queries per second",
            ),
            ("*.Offline.target_qps = 0", "must be above 0"),
            ("*.MultiStream.samples_per_query = 0", "must be at least 1"),
            (
                "*.*.min_query_count = 18446744073709551615",
                "more than the 4294967296 queries",
            ),
            ("*.*.accuracy_log_probability = 101", "not a percentage"),
            ("*.*.use_token_latencies = 1.0", "must be an integer"),
            ("*.*.mode = -1", "must not be negative"),
            ("unknown.key.name = 1x", "is not a number"),
        ];
        for (line, expected) in cases {
            let text = format!("*.*.min_duration = 5\n# ok\n{line}\n*.*.max_duration = 6\n");
            let err = parse_err(&text);
            let diagnostics = err.diagnostics();
            assert_eq!(diagnostics.len(), 1, "{line}: {err}");
            assert_eq!(diagnostics[0].line, 3, "{line}");
            assert!(diagnostics[0].message.contains(expected), "{line}: {err}");
            let shown = err.to_string();
            let quoted = format!("test.conf:3: {}: '{line}'", diagnostics[0].message);
            assert_eq!(shown, quoted);
        }
    }

    #[test]
    fn every_error_is_collected() {
        let err = parse_err("a.b.c=1\n*.*.min_query_count = 5\nx = y\n\n*.*.mode = 9\n");
        let lines: Vec<usize> = err.diagnostics().iter().map(|d| d.line).collect();
        assert_eq!(lines, [1, 3, 5]);
        let shown = err.to_string();
        assert_eq!(shown.lines().count(), 3);
        assert!(shown.lines().all(|l| l.starts_with("test.conf:")));

        let many = "x\n".repeat(25);
        let shown = parse_err(&many).to_string();
        assert!(shown.ends_with("... and 15 more errors"), "{shown}");
    }

    #[test]
    fn a_file_with_an_error_applies_nothing() {
        let mut settings = TestSettings::default();
        let mut loader = ConfigLoader::new();
        let dir = std::env::temp_dir().join(format!("mlperf-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad_user.conf");
        std::fs::write(
            &path,
            "*.*.min_query_count = 5\n*.*.max_query_count = 6 # no\n",
        )
        .unwrap();
        let err = loader
            .load_user_conf(&mut settings, &path, "resnet50", TestScenario::Offline)
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("{}:2: ", path.display())),
            "{err}"
        );
        assert_eq!(settings, TestSettings::default());
        assert!(!loader.mlperf_conf_applied());
        assert_eq!(loader.user_conf_count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // ---- warnings -----------------------------------------------------------------------------

    #[test]
    fn unread_keys_are_warnings_with_file_and_line() {
        let cases = [
            (
                "*.*.min_querycount = 5",
                "unknown key 'min_querycount' (did you mean 'min_query_count'?)",
            ),
            (
                "*.Offline.target_latency = 5",
                "only for SingleStream, MultiStream, Server",
            ),
            ("*.SingleStream.target_qps = 5", "only for Server, Offline"),
            ("*.Offline.max_async_queries = 5", "only for Server"),
            (
                "*.singlestream.min_query_count = 5",
                "case-sensitive: 'SingleStream'",
            ),
            (
                "*.Interactive.min_query_count = 5",
                "unknown scenario 'Interactive'",
            ),
            ("min_query_count = 5", "model.scenario.key"),
            ("Offline.min_query_count = 5", "model.scenario.key"),
            (".Offline.min_query_count = 5", "model.scenario.key"),
            ("*..min_query_count = 5", "model.scenario.key"),
        ];
        for (line, expected) in cases {
            let text = format!("# header\n{line}\n");
            let (s, warnings) = apply_as(&text, "m", TestScenario::Offline, ConfType::UserConf);
            assert_eq!(s, TestSettings::default(), "{line}");
            assert_eq!(warnings.len(), 1, "{line}: {warnings:?}");
            assert!(
                warnings[0].message.contains(expected),
                "{line}: {warnings:?}"
            );
            assert_eq!(
                warnings[0].to_string(),
                format!("test.conf:2: {}: '{line}'", warnings[0].message)
            );
        }
    }

    #[test]
    fn keys_official_files_carry_but_loadgen_ignores_are_silent() {
        let text = "*.Server.target_duration = 0\n\
                    *.Offline.target_latency_percentile = 90\n\
                    *.*.test07_accuracy_threshold = 60.698\n\
                    *.*.test09_min_output_tokens = 1150.38\n\
                    *.*.test09_max_output_tokens = 1406.02\n";
        for conf_type in [ConfType::MlperfConf, ConfType::UserConf, ConfType::Audit] {
            let (s, warnings) = apply_as(text, "m", TestScenario::Offline, conf_type);
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(s, TestSettings::default());
        }
        // Still checked for syntax.
        parse_err("*.*.test07_accuracy_threshold = 60.6.98\n");
    }

    #[test]
    fn duplicate_keys_warn_and_the_last_one_wins() {
        let (s, warnings) = apply_as(
            "*.*.min_query_count = 5\n*.*.min_query_count = 6\n",
            "m",
            TestScenario::Offline,
            ConfType::UserConf,
        );
        assert_eq!(s.min_query_count, 6);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].line, 2);
        assert!(warnings[0].message.contains("line 1"));
    }

    // ---- the embedded mlperf.conf (§3.5) ------------------------------------------------------

    const MODELS: &[&str] = &[
        "resnet50",
        "ssd-mobilenet",
        "retinanet",
        "bert",
        "dlrm",
        "dlrm-v2",
        "dlrm-v3",
        "rnnt",
        "gptj",
        "mixtral-8x7b",
        "llama2-70b",
        "llama2-70b-interactive",
        "llama3_1-405b",
        "llama3_1-405b-interactive",
        "llama3_1-8b",
        "llama3_1-8b-interactive",
        "llama3_1-8b-edge",
        "deepseek-r1",
        "deepseek-r1-interactive",
        "gpt-oss-120b",
        "gpt-oss-120b-interactive",
        "whisper",
        "qwen3-vl-235b-a22b",
        "stable-diffusion-xl",
        "wan-2.2-t2v-a14b",
        "rgat",
        "pointpainting",
        "yolo",
        "3d-unet",
        "not-a-benchmark",
    ];

    #[test]
    fn embedded_conf_parses_and_applies_without_warnings() {
        let file = ConfigFile::parse(EMBEDDED_MLPERF_CONF, EMBEDDED_MLPERF_CONF_ORIGIN).unwrap();
        assert_eq!(file.origin(), EMBEDDED_MLPERF_CONF_ORIGIN);
        for model in MODELS {
            for scenario in TestScenario::ALL {
                let s = embedded(model, scenario);
                assert_eq!(s.min_duration_ms, 600_000, "{model} {scenario}");
                assert_eq!(s.qsl_rng_seed, 2085463073848966840);
                assert_eq!(s.sample_index_rng_seed, 2747215439041700203);
                assert_eq!(s.schedule_rng_seed, 16159082839903944936);
                assert_eq!(s.test05_qsl_rng_seed, 7975553102935885558);
                assert_eq!(s.test05_sample_index_rng_seed, 11403566307062068064);
                assert_eq!(s.test05_schedule_rng_seed, 15816800565822761601);
                assert!(!s.test05);
                assert_eq!(s.mode, TestMode::PerformanceOnly);
                assert_eq!(s.multi_stream_samples_per_query, 8);
                assert_eq!(s.server_target_qps, 1.0);
                assert_eq!(s.offline_expected_qps, 1.0);
            }
        }
    }

    #[test]
    fn embedded_conf_scenario_defaults() {
        let ss = embedded("resnet50", TestScenario::SingleStream);
        assert_eq!(ss.single_stream_target_latency_percentile, 90.0 * 0.01);
        assert_eq!(ss.single_stream_expected_latency_ns, 10e6);
        assert_eq!(ss.min_query_count, 100);
        let ms = embedded("resnet50", TestScenario::MultiStream);
        assert_eq!(ms.multi_stream_target_latency_percentile, 99.0 * 0.01);
        assert_eq!(ms.multi_stream_expected_latency_ns, 80e6);
        assert_eq!(ms.min_query_count, 662);
        let server = embedded("ssd-mobilenet", TestScenario::Server);
        assert_eq!(server.server_target_latency_ns, 10_000_000);
        assert_eq!(server.server_target_latency_percentile, 99.0 * 0.01);
        assert_eq!(server.performance_sample_count_override, 256);
        assert_eq!(server.min_query_count, 100);
    }

    #[test]
    fn embedded_conf_model_values() {
        let r = embedded("resnet50", TestScenario::Offline);
        assert_eq!(r.min_query_count, 24576);
        assert_eq!(r.performance_sample_count_override, 1024);
        assert_eq!(r.server_target_latency_ns, 15_000_000);
        assert!(!r.sample_concatenate_permutation && !r.use_token_latencies);

        let l = embedded("llama2-70b", TestScenario::Server);
        assert_eq!(l.server_ttft_latency, 2_000_000_000);
        assert_eq!(l.server_tpot_latency, 200_000_000);
        assert_eq!(l.server_target_latency_ns, 0);
        assert!(l.sample_concatenate_permutation && l.use_token_latencies);
        assert_eq!(l.performance_sample_count_override, 24576);
        assert_eq!(
            embedded("llama2-70b", TestScenario::Offline).min_query_count,
            24576
        );

        let g = embedded("gptj", TestScenario::Offline);
        assert!(g.infer_token_latencies && !g.use_token_latencies);
        assert_eq!(g.token_latency_scaling_factor, 69);
        assert_eq!(g.server_target_latency_ns, 20_000_000_000);
        assert_eq!(g.min_query_count, 13368);

        let u = embedded("3d-unet", TestScenario::Offline);
        assert_eq!(u.performance_sample_count_override, 0);
        assert!(u.sample_concatenate_permutation);
        assert_eq!(u.min_query_count, 43);

        let q = embedded("qwen3-vl-235b-a22b", TestScenario::Server);
        assert!(!q.use_token_latencies && q.sample_concatenate_permutation);
        assert_eq!(q.server_target_latency_ns, 12_000_000_000);
        assert_eq!(q.server_ttft_latency, 100_000_000);

        let o = embedded("gpt-oss-120b-interactive", TestScenario::Server);
        assert_eq!(
            (
                o.performance_sample_count_override,
                o.accuracy_sample_count_override
            ),
            (6396, 4395)
        );
        assert_eq!(
            (o.server_ttft_latency, o.server_tpot_latency),
            (2_000_000_000, 15_000_000)
        );

        let p = embedded("pointpainting", TestScenario::SingleStream);
        assert_eq!(p.single_stream_target_latency_percentile, 99.9 * 0.01);
        assert_eq!(
            embedded("retinanet", TestScenario::MultiStream).multi_stream_expected_latency_ns,
            528e6
        );
        assert_eq!(
            embedded("rgat", TestScenario::Offline).min_query_count,
            788379
        );
        assert_eq!(
            embedded("dlrm-v3", TestScenario::Server).server_target_latency_ns,
            80_000_000
        );
        let edge = embedded("llama3_1-8b-edge", TestScenario::Offline);
        assert!(edge.use_token_latencies);
        assert_eq!(edge.server_ttft_latency, 100_000_000);
        assert_eq!(edge.min_query_count, 5000);
    }

    // ---- ConfigLoader -------------------------------------------------------------------------

    #[test]
    fn loader_applies_mlperf_conf_once_before_the_first_user_conf() {
        let mut settings = TestSettings::default();
        let mut loader = ConfigLoader::new();
        assert!(!loader.custom_mlperf_conf());
        let first = parse(
            "*.Offline.target_qps = 5000\nresnet50.*.performance_sample_count_override = 2048\n",
        );
        let warnings =
            loader.apply_user_conf(&mut settings, &first, "resnet50", TestScenario::Offline);
        assert!(warnings.is_empty());
        assert!(loader.mlperf_conf_applied());
        assert!(!loader.multiple_conf_files());
        assert_eq!(settings.offline_expected_qps, 5000.0);
        assert_eq!(settings.performance_sample_count_override, 2048);
        assert_eq!(settings.min_query_count, 24576);

        // A second user.conf applies on top, without re-applying mlperf.conf, and is flagged.
        settings.min_query_count = 1;
        let second = parse("*.Offline.target_qps = 6000\n");
        loader.apply_user_conf(&mut settings, &second, "resnet50", TestScenario::Offline);
        assert_eq!(settings.offline_expected_qps, 6000.0);
        assert_eq!(settings.min_query_count, 1);
        assert_eq!(loader.user_conf_count(), 2);
        assert!(loader.multiple_conf_files());
        assert!(MULTIPLE_CONF_FILES_MESSAGE.starts_with("Multiple conf files are used."));
    }

    #[test]
    fn loader_without_user_conf_and_with_custom_mlperf_conf() {
        let mut settings = TestSettings::default();
        let mut loader = ConfigLoader::default();
        loader.apply_mlperf_conf(&mut settings, "bert", TestScenario::Offline);
        assert_eq!(settings.min_query_count, 10833);
        assert!(loader
            .apply_mlperf_conf(&mut settings, "bert", TestScenario::Offline)
            .is_empty());
        assert_eq!(loader.user_conf_count(), 0);

        let custom = parse("*.*.qsl_rng_seed = 42\n*.Offline.min_query_count = 77\n");
        let mut loader = ConfigLoader::with_mlperf_conf(custom);
        assert!(loader.custom_mlperf_conf());
        let mut settings = TestSettings::default();
        loader.apply_user_conf(&mut settings, &parse(""), "bert", TestScenario::Offline);
        assert_eq!(settings.qsl_rng_seed, 42);
        assert_eq!(settings.min_query_count, 77);
        assert_eq!(settings.sample_index_rng_seed, 0);
    }
    #[test]
    fn a_user_conf_for_another_model_says_that_nothing_applies() {
        let file = parse("resnet50.Offline.target_qps = 100\nresnet50.Server.target_qps = 50\n");
        let mut settings = TestSettings::default();
        let warnings = file.apply(
            &mut settings,
            "bert",
            TestScenario::Offline,
            ConfType::UserConf,
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0]
                .message
                .contains("model 'bert' in the Offline scenario"),
            "{}",
            warnings[0]
        );
        let applied = file.apply(
            &mut settings,
            "resnet50",
            TestScenario::Server,
            ConfType::UserConf,
        );
        assert!(applied.is_empty(), "{applied:?}");
        // An mlperf.conf covers every model: it is never told of as a user.conf is.
        assert!(file
            .apply(
                &mut settings,
                "bert",
                TestScenario::Offline,
                ConfType::MlperfConf
            )
            .is_empty());
    }

    // ---- files and robustness -----------------------------------------------------------------

    #[test]
    fn read_names_the_path() {
        let missing = Path::new("/nonexistent/dir/user.conf");
        let err = ConfigFile::read(missing).unwrap_err();
        assert!(matches!(err, ConfigError::Io { .. }));
        assert!(
            err.to_string().contains("/nonexistent/dir/user.conf"),
            "{err}"
        );
        assert!(err.diagnostics().is_empty());

        let dir = std::env::temp_dir().join(format!("mlperf-config-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("user.conf");
        std::fs::write(&good, "*.*.min_query_count = 3\n*.*.bogus = 1\n").unwrap();
        let file = ConfigFile::read(&good).unwrap();
        assert_eq!(file.origin(), good.display().to_string());
        let mut settings = TestSettings::default();
        let warnings = file.apply(
            &mut settings,
            "m",
            TestScenario::Offline,
            ConfType::UserConf,
        );
        assert_eq!(settings.min_query_count, 3);
        assert!(warnings[0]
            .to_string()
            .starts_with(&format!("{}:2: ", good.display())));

        // A FIFO would block the read until a writer came, forever for a config: refused
        // from its metadata, as are folders and devices.
        let fifo = dir.join("fifo.conf");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for (path, kind) in [
            (fifo.as_path(), "a FIFO (named pipe)"),
            (dir.as_path(), "a directory"),
            (Path::new("/dev/null"), "a device"),
        ] {
            let err = ConfigFile::read(path).unwrap_err().to_string();
            assert!(
                err.contains(&path.display().to_string()) && err.contains(kind),
                "{err}"
            );
        }

        let binary = dir.join("binary.conf");
        std::fs::write(&binary, b"*.*.min_query_count = 3\n\xff\xfe = 1\n").unwrap();
        let err = ConfigFile::read(&binary).unwrap_err();
        assert_eq!(err.diagnostics()[0].line, 2);
        assert!(err.diagnostics()[0].message.contains("UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        for (value, reason) in [
            ("x".repeat(10_000_000), "is not a number"),
            ("9".repeat(400), "is out of range"),
        ] {
            let text = format!("*.*.min_query_count = {value}\n");
            let error = ConfigFile::parse(&text, "u.conf").unwrap_err().to_string();
            assert!(error.len() < 600, "{} bytes", error.len());
            assert!(error.contains(reason), "{error}");
        }
    }

    #[test]
    fn long_lines_are_shortened_in_messages() {
        let long = format!("*.*.{} = 1", "k".repeat(1000));
        let (_, warnings) = apply_as(&long, "m", TestScenario::Offline, ConfType::UserConf);
        assert!(warnings[0].text.ends_with("..."));
        assert!(warnings[0].text.chars().count() <= MAX_QUOTED_CHARS + 3);
    }

    /// xorshift64*: a tiny deterministic generator so the fuzz test needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_input_never_panics() {
        const PIECES: &[&str] = &[
            "*",
            ".",
            "=",
            " ",
            "\t",
            "\n",
            "\r",
            "#",
            "0",
            "1",
            "9",
            "0x",
            "ff",
            "-",
            "+",
            "e",
            "1.5",
            "inf",
            "nan",
            "SingleStream",
            "Server",
            "Offline",
            "MultiStream",
            "resnet50",
            "min_query_count",
            "target_latency",
            "ttft_latency",
            "mode",
            "use_token_latencies",
            "infer_token_latencies",
            "token_latency_scaling_factor",
            "max_async_queries",
            "qsl_rng_seed",
            "18446744073709551615",
            "99999999999999999999999",
            "\u{feff}",
            "é",
            "\u{0}",
            "\x0b",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut parsed = 0;
        for round in 0..3000 {
            let bytes: Vec<u8> = if round % 3 == 0 {
                (0..rng.below(200)).map(|_| rng.next() as u8).collect()
            } else if round % 3 == 1 {
                // Well-formed lines with random keys and values: mostly valid files.
                const MODELS: &[&str] = &["*", "resnet50", "llama2-70b"];
                const SCENARIOS: &[&str] =
                    &["*", "SingleStream", "MultiStream", "Server", "Offline"];
                const VALUES: &[&str] = &[
                    "0",
                    "1",
                    "2",
                    "3",
                    "0x7f",
                    "017",
                    "2.5",
                    "-1",
                    "99.9",
                    "2147483647",
                    "18446744073709551615",
                    "1e300",
                ];
                let mut text = String::new();
                for _ in 0..rng.below(12) {
                    let name = KEYS[rng.below(KEYS.len())].name;
                    let model = MODELS[rng.below(MODELS.len())];
                    let scenario = SCENARIOS[rng.below(SCENARIOS.len())];
                    let value = VALUES[rng.below(VALUES.len())];
                    text.push_str(&format!("{model}.{scenario}.{name} = {value}\n"));
                }
                text.into_bytes()
            } else {
                let mut text = String::new();
                for _ in 0..rng.below(60) {
                    text.push_str(PIECES[rng.below(PIECES.len())]);
                }
                text.into_bytes()
            };
            match ConfigFile::parse_bytes(&bytes, "fuzz") {
                Ok(file) => {
                    parsed += 1;
                    for conf_type in [ConfType::MlperfConf, ConfType::UserConf, ConfType::Audit] {
                        for scenario in TestScenario::ALL {
                            let mut settings = TestSettings::default();
                            let _ = file.apply(&mut settings, "resnet50", scenario, conf_type);
                        }
                    }
                }
                Err(err) => {
                    assert!(!err.diagnostics().is_empty());
                    let _ = err.to_string();
                }
            }
        }
        // Values out of their domain (a negative rate, a percentile of 0) are errors too.
        assert!(parsed > 200, "only {parsed} random files parsed");
        // Every single-line combination of the tricky tokens.
        for a in PIECES {
            for b in PIECES {
                let line = format!("*.*.{a} = {b}");
                let _ = ConfigFile::parse(&line, "fuzz");
                let _ = ConfigFile::parse(&format!("{a} {b} {a}"), "fuzz");
            }
        }
    }
}
