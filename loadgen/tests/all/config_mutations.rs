//! Seeded mutation ("fuzz") test of the config parser: valid mlperf.conf, user.conf and
//! audit.config texts, mutated at random (bytes, special tokens, extreme numbers, invalid UTF-8,
//! long lines, truncation, duplicated lines), must parse to `Ok` or to an error that names
//! `origin:line` and quotes the line; the parser must never panic. Deterministic (fixed seed,
//! a self-written PRNG) and bounded (a fixed number of cases).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mlperf_loadgen::config::{
    ConfType, ConfigError, ConfigFile, ConfigLoader, LineDiagnostic, EMBEDDED_MLPERF_CONF,
};
use mlperf_loadgen::{TestScenario, TestSettings};

/// Mutated texts per run: 12,000 in release (under 1 s on a slow, busy 2-core machine), 3,000
/// in an unoptimized build, which is about 7 times slower (under 1 s there too).
const CASES: usize = if cfg!(debug_assertions) {
    3_000
} else {
    12_000
};
/// The parser quotes at most this many characters of a line (then `...`).
const MAX_QUOTED_CHARS: usize = 160;
/// `Display` spells out at most this many errors, then one `... and N more errors` line.
const MAX_DISPLAYED_ERRORS: usize = 10;

use mlperf_loadgen::testing::MutationRng as Rng;

/// Values a field may be handed: extremes, non-numbers, non-finite, bad octal, overflow after
/// the ms → ns conversion, ...
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "-0",
    "-0.0",
    "+0",
    "-1",
    "+1",
    "++1",
    "--1",
    "0.5",
    "1.5",
    "99.9",
    "1e400",
    "-1e400",
    "1e-400",
    "1e308",
    "1.7976931348623157e308",
    "NaN",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "0x",
    "0xG",
    "0x7f",
    "0X7F",
    "-0x1",
    "0xffffffffffffffff",
    "0x10000000000000000",
    "0x1p3",
    "017",
    "08",
    "0777777777777777777777",
    "2147483647",
    "2147483648",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999",
    "18446744073709552",
    "18446744073710",
    "1e",
    "1e+",
    ".",
    "..",
    "1..2",
    "1_000",
    "\u{0661}",
    "\u{0}",
    "=",
    "#",
    "#1",
    "*",
];

/// Pieces spliced in anywhere.
const TOKENS: &[&[u8]] = &[
    b"=",
    b" = ",
    b"==",
    b".",
    b"..",
    b"*",
    b"*.*.",
    b"#",
    b"# ",
    b" #",
    b"\0",
    b" ",
    b"\t",
    b"\x0b",
    b"\x0c",
    b"\r",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\xff",
    b"\xfe\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xef\xbb\xbf",
    "é".as_bytes(),
    "\u{feff}".as_bytes(),
    "\u{a0}".as_bytes(),
    b"1e400",
    b"-0",
    b"NaN",
    b"inf",
    b"0x",
    b"99999999999999999999",
    b"18446744073709551616",
];

/// Key names LoadGen reads, or official files carry.
const KEY_NAMES: &[&str] = &[
    "mode",
    "target_qps",
    "target_latency",
    "target_latency_percentile",
    "target_duration",
    "max_async_queries",
    "min_query_count",
    "min_duration",
    "samples_per_query",
    "qsl_rng_seed",
    "test05",
    "use_token_latencies",
    "infer_token_latencies",
    "token_latency_scaling_factor",
    "ttft_latency",
    "tpot_latency",
    "coalesce_queries",
    "print_timestamps",
    "accuracy_log_probability",
    "performance_issue_same",
];

/// Other key parts: models, scenarios (some misspelt), odd ones.
const OTHER_NAMES: &[&str] = &[
    "*",
    "**",
    "",
    "resnet50",
    "llama2-70b",
    "a.b",
    "SingleStream",
    "MultiStream",
    "Server",
    "Offline",
    "server",
    "offline",
    "é",
    "\u{0}",
];

/// A user.conf as a submitter writes one.
const USER_CONF: &str = "\
# resnet50 user.conf
resnet50.Offline.target_qps = 5000.0
resnet50.Server.target_qps = 5.0
resnet50.SingleStream.target_latency = 10
*.MultiStream.target_latency = 80
*.*.performance_sample_count_override = 1024
resnet50.*.mode = 2
*.Server.max_async_queries = 0
resnet50.Server.max_async_queries = 2147483647
*.Server.coalesce_queries = 1
resnet50.Offline.min_query_count = 0x10
*.*.print_timestamps = 0
";

const AUDIT_TEST01: &str = include_str!("../../../configs/audit/TEST01/resnet50/audit.config");
const AUDIT_TEST04: &str = include_str!("../../../configs/audit/TEST04/audit.config");

/// The texts mutations start from: the real mlperf.conf cut into chunks of 16 lines (the whole
/// file per case would make the test slow), a user.conf, two real audit.configs.
fn seeds() -> Vec<Vec<u8>> {
    let lines: Vec<&str> = EMBEDDED_MLPERF_CONF.lines().collect();
    let mut seeds: Vec<Vec<u8>> = lines
        .chunks(16)
        .map(|chunk| format!("{}\n", chunk.join("\n")).into_bytes())
        .collect();
    seeds.push(USER_CONF.as_bytes().to_vec());
    seeds.push(AUDIT_TEST01.as_bytes().to_vec());
    seeds.push(AUDIT_TEST04.as_bytes().to_vec());
    seeds
}

/// Start offsets of the lines of `text`.
fn line_starts(text: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            text.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(at, _)| at + 1),
        )
        .collect()
}

/// The byte range of line `index` (without its `\n`).
fn line_range(text: &[u8], starts: &[usize], index: usize) -> std::ops::Range<usize> {
    let start = starts[index];
    let end = text[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |n| start + n);
    start..end
}

/// One random mutation of `text`.
fn mutate(rng: &mut Rng, text: &mut Vec<u8>) {
    let len = text.len();
    let at = |rng: &mut Rng| rng.below(len + 1);
    match rng.below(15) {
        // A flipped bit.
        0 if len > 0 => {
            let i = rng.below(len);
            text[i] ^= 1 << rng.below(8);
        }
        // A random byte replaced or inserted.
        1 if len > 0 => {
            let i = rng.below(len);
            text[i] = rng.next_u64() as u8;
        }
        2 => {
            let i = at(rng);
            text.insert(i, rng.next_u64() as u8);
        }
        // A special token inserted, or written over what is there (a third of the time at the
        // start of a line).
        3 | 4 => {
            let token = rng.pick(TOKENS);
            let i = if rng.chance(3) {
                let starts = line_starts(text);
                starts[rng.below(starts.len())]
            } else {
                at(rng)
            };
            if rng.chance(2) {
                text.splice(i..i, token.iter().copied());
            } else {
                let end = (i + token.len()).min(len);
                text.splice(i..end, token.iter().copied());
            }
        }
        // A value (the token after `= `) replaced.
        5 | 6 => {
            let equals: Vec<usize> = text
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w == b"= ")
                .map(|(i, _)| i + 2)
                .collect();
            if let Some(&start) = equals.get(rng.below(equals.len().max(1))) {
                let end = text[start..]
                    .iter()
                    .position(|&b| b == b'\n' || b == b' ')
                    .map_or(len, |n| start + n);
                let value = if rng.chance(32) {
                    // A hex number beyond f64 (strtod reads hex too): out of range.
                    format!("0x{}", "f".repeat(250 + rng.below(20)))
                } else {
                    rng.pick(VALUES).to_string()
                };
                text.splice(start..end, value.into_bytes());
            }
        }
        // One part of a key (model, scenario or name) replaced.
        7 => {
            let starts = line_starts(text);
            let range = line_range(text, &starts, rng.below(starts.len()));
            let line = &text[range.clone()];
            let key_end = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
            let dots: Vec<usize> = std::iter::once(0)
                .chain(
                    line[..key_end]
                        .iter()
                        .enumerate()
                        .filter(|(_, &b)| b == b'.')
                        .map(|(i, _)| i + 1),
                )
                .collect();
            let part = rng.below(dots.len());
            let part_start = dots[part];
            let part_end = dots.get(part + 1).map_or(key_end, |&next| next - 1);
            let names = if rng.chance(2) {
                KEY_NAMES
            } else {
                OTHER_NAMES
            };
            let name = rng.pick(names);
            text.splice(
                range.start + part_start..range.start + part_end,
                name.bytes(),
            );
        }
        // A range deleted.
        8 if len > 0 => {
            let i = rng.below(len);
            let end = (i + 1 + rng.below(16)).min(len);
            text.drain(i..end);
        }
        // Truncated.
        9 => text.truncate(rng.below(len + 1)),
        // A line duplicated somewhere (a duplicated key), or two lines swapped.
        10 => {
            let starts = line_starts(text);
            let range = line_range(text, &starts, rng.below(starts.len()));
            let mut copy = text[range].to_vec();
            copy.push(b'\n');
            let to = starts[rng.below(starts.len())];
            text.splice(to..to, copy);
        }
        // The spacing around `=` changed.
        11 => {
            let equals: Vec<usize> = text
                .windows(3)
                .enumerate()
                .filter(|(_, w)| w == b" = ")
                .map(|(i, _)| i)
                .collect();
            if let Some(&i) = equals.get(rng.below(equals.len().max(1))) {
                let with: &[u8] = match rng.below(5) {
                    0 => b"=",
                    1 => b" =",
                    2 => b"= ",
                    3 => b" == ",
                    _ => b"\t=\t",
                };
                text.splice(i..i + 3, with.iter().copied());
            }
        }
        // A well-formed line with a key LoadGen reads, or nearly, and an odd value.
        14 => {
            let line = format!(
                "{}.{}.{} = {}{}\n",
                rng.pick(&["*", "*", "resnet50", "llama2-70b", "a.b"]),
                rng.pick(&[
                    "*",
                    "SingleStream",
                    "MultiStream",
                    "Server",
                    "Offline",
                    "server"
                ]),
                rng.pick(KEY_NAMES),
                rng.pick(VALUES),
                rng.pick(&["", "", "", " # why", " #", " 1", "\t"])
            );
            let starts = line_starts(text);
            let to = starts[rng.below(starts.len())];
            text.splice(to..to, line.into_bytes());
        }
        // A long line: a long key, a long value or long garbage.
        12 if rng.chance(4) => {
            let n = 1 + rng.below(10_000);
            let line = match rng.below(4) {
                0 => format!("*.*.{} = 1\n", "k".repeat(n)),
                1 => format!("*.Offline.min_query_count = {}\n", "9".repeat(n)),
                2 => format!("*.Server.target_qps = 0.{}1\n", "0".repeat(n)),
                _ => format!("{}\n", "é#= .*".repeat(n / 6 + 1)),
            };
            let starts = line_starts(text);
            let to = starts[rng.below(starts.len())];
            text.splice(to..to, line.into_bytes());
        }
        // Line endings: CRLF, no final newline, blank lines.
        _ => {
            if rng.chance(2) {
                let mut crlf = Vec::with_capacity(text.len() + 64);
                for &b in text.iter() {
                    if b == b'\n' {
                        crlf.push(b'\r');
                    }
                    crlf.push(b);
                }
                *text = crlf;
            } else if text.last() == Some(&b'\n') {
                text.pop();
            } else {
                text.extend_from_slice(b"\n\n");
            }
        }
    }
}

/// Tokens as the parser splits a line (C `isspace`).
fn tokens(line: &str) -> Vec<&str> {
    line.split([' ', '\t', '\n', '\x0b', '\x0c', '\r'])
        .filter(|t| !t.is_empty())
        .collect()
}

/// What an error or warning about a line of `text` must say: `origin:line: message: 'text'`,
/// the line number in range, the quoted text a prefix of the line (shortened when long), and
/// for a well-formed `key = value` line whose value is refused, the value.
fn check_diagnostic(d: &LineDiagnostic, origin: &str, lines: &[&[u8]], is_error: bool) {
    assert_eq!(d.origin, origin);
    assert!(
        d.line >= 1 && d.line <= lines.len(),
        "line {} of {} lines: {d}",
        d.line,
        lines.len()
    );
    assert!(!d.message.trim().is_empty(), "empty message: {d}");
    let raw = String::from_utf8_lossy(lines[d.line - 1]);
    let raw = raw.trim_end_matches(['\r', '\n']);
    let quoted = d.text.strip_suffix("...").unwrap_or(&d.text);
    assert!(
        raw.starts_with(quoted),
        "the quoted text is not the line's: {d}"
    );
    assert!(d.text.chars().count() <= MAX_QUOTED_CHARS + 3, "{d}");
    if d.text.len() < raw.len() {
        assert!(d.text.ends_with("..."), "shortened without '...': {d}");
    }
    let shown = d.to_string();
    assert!(
        shown.starts_with(&format!("{origin}:{}: {}", d.line, d.message)),
        "{shown}"
    );
    if is_error {
        if let Ok(line) = std::str::from_utf8(lines[d.line - 1]) {
            if let [key, "=", value] = tokens(line).as_slice() {
                let key_ok =
                    !key.starts_with('#') && !key.starts_with('\u{feff}') && !key.contains('=');
                if key_ok && !value.starts_with('#') {
                    // A long value is named by its first 40 characters and its length.
                    let named = match value.char_indices().nth(40) {
                        Some((cut, _)) => format!("'{}... ({} bytes)'", &value[..cut], value.len()),
                        None => format!("'{value}'"),
                    };
                    assert!(
                        d.message.contains(&named),
                        "an error about a 'key = value' line does not name the value: {d}"
                    );
                }
            }
        }
    }
}

fn check_error(error: &ConfigError, origin: &str, text: &[u8]) {
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let ConfigError::Invalid { errors } = error else {
        panic!("parsing bytes gave an I/O error: {error}");
    };
    assert!(!errors.is_empty(), "an Invalid error without diagnostics");
    assert_eq!(error.diagnostics().len(), errors.len());
    for pair in errors.windows(2) {
        assert!(
            pair[0].line < pair[1].line,
            "errors out of order or repeated"
        );
    }
    for d in errors {
        check_diagnostic(d, origin, &lines, true);
    }
    let shown = error.to_string();
    assert!(
        shown.starts_with(&errors[0].to_string()),
        "Display does not start with the first error: {shown}"
    );
    let expected_lines =
        errors.len().min(MAX_DISPLAYED_ERRORS) + usize::from(errors.len() > MAX_DISPLAYED_ERRORS);
    assert_eq!(shown.split('\n').count(), expected_lines, "{shown}");
    if errors.len() > MAX_DISPLAYED_ERRORS {
        assert!(shown.ends_with(&format!(
            "... and {} more errors",
            errors.len() - MAX_DISPLAYED_ERRORS
        )));
    }
}

/// Applies a parsed file; every warning must name a line of it.
/// Returns the warnings' messages.
fn check_apply(rng: &mut Rng, file: &ConfigFile, origin: &str, text: &[u8]) -> Vec<String> {
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let conf_type = [ConfType::MlperfConf, ConfType::UserConf, ConfType::Audit][rng.below(3)];
    let scenario = TestScenario::ALL[rng.below(4)];
    let model = rng.pick(&["resnet50", "llama2-70b", "gptj", "*", "a.b"]);
    let mut settings = TestSettings::default();
    let warnings = file.apply(&mut settings, model, scenario, conf_type);
    for w in &warnings {
        check_diagnostic(w, origin, &lines, false);
    }
    if rng.chance(8) {
        // As a custom mlperf.conf under the loader, and as a user.conf over the embedded one.
        let mut settings = TestSettings::default();
        let mut loader = ConfigLoader::with_mlperf_conf(file.clone());
        loader.apply_mlperf_conf(&mut settings, model, scenario);
        let mut loader = ConfigLoader::new();
        loader.apply_user_conf(&mut settings, file, model, scenario);
    }
    warnings.into_iter().map(|w| w.message).collect()
}

/// A file in a temporary directory of its own, removed with the directory when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "mlperf-config-mutations-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Parts of the parser's messages, errors then warnings: the random cases must reach each.
const MESSAGES: &[&str] = &[
    "not valid UTF-8",
    "byte-order mark",
    "a comment needs '#' as a separate token",
    "spaces around '=' are required",
    "missing ' = value'",
    "expected '=' after the key",
    "missing value after '='",
    "comments after a value are not allowed",
    "unexpected text after the value",
    "is not a number",
    "is not a finite number",
    "is out of range",
    "must not be negative",
    "must be an integer",
    "is too large for an unsigned 64-bit integer",
    "is not a valid octal number",
    "overflows a 64-bit integer after conversion",
    "LoadGen stores it as an int",
    "is not 0 (SubmissionRun)",
    "LoadGen never reads",
    "unknown scenario",
    "scenario names are case-sensitive",
    "duplicate key",
    "is a flag",
    "only honoured from mlperf.conf",
    "model-specific lines are never used",
];

struct Tally {
    ok: usize,
    invalid: usize,
    not_utf8: usize,
    slowest: Duration,
    /// How often each of [`MESSAGES`] was seen.
    reached: Vec<usize>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            ok: 0,
            invalid: 0,
            not_utf8: 0,
            slowest: Duration::ZERO,
            reached: vec![0; MESSAGES.len()],
        }
    }

    fn saw(&mut self, message: &str) {
        for (part, seen) in MESSAGES.iter().zip(&mut self.reached) {
            *seen += usize::from(message.contains(part));
        }
    }
}

/// Parses `text` (through [`ConfigFile::read`] when it is not UTF-8, the only way bytes get
/// in) and checks the outcome. Panics, with the input, if the parser panicked.
fn run_case(rng: &mut Rng, case: &str, text: &[u8], file_path: &Path, tally: &mut Tally) {
    let started = Instant::now();
    let (origin, outcome) = match std::str::from_utf8(text) {
        Ok(utf8) => {
            let origin = "mutated/user.conf".to_string();
            let outcome = catch_unwind(AssertUnwindSafe(|| ConfigFile::parse(utf8, &origin)));
            (origin, outcome)
        }
        Err(_) => {
            tally.not_utf8 += 1;
            // A new file each time: rewriting one in place makes ext4 flush it on close.
            let _ = std::fs::remove_file(file_path);
            std::fs::write(file_path, text).unwrap();
            let origin = file_path.display().to_string();
            (
                origin,
                catch_unwind(AssertUnwindSafe(|| ConfigFile::read(file_path))),
            )
        }
    };
    let shown = || {
        let lossy = String::from_utf8_lossy(text);
        let cut: String = lossy.chars().take(2000).collect();
        format!("{case}: {cut:?}")
    };
    let outcome = outcome.unwrap_or_else(|_| panic!("the parser panicked on {}", shown()));
    let checked = catch_unwind(AssertUnwindSafe(|| match &outcome {
        Ok(file) => {
            assert_eq!(file.origin(), origin);
            check_apply(rng, file, &origin, text)
        }
        Err(error) => {
            check_error(error, &origin, text);
            error
                .diagnostics()
                .iter()
                .map(|d| d.message.clone())
                .collect()
        }
    }));
    let messages = checked.unwrap_or_else(|why| {
        let why = why
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| why.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("{why}\ninput {}", shown())
    });
    for message in messages {
        tally.saw(&message);
    }
    match outcome {
        Ok(_) => tally.ok += 1,
        Err(_) => tally.invalid += 1,
    }
    tally.slowest = tally.slowest.max(started.elapsed());
}

/// Inputs on an edge (empty, lone separators, extreme values, a BOM, NUL, broken UTF-8);
/// checked before the random cases. Add here any input that finds a bug.
const REGRESSIONS: &[&[u8]] = &[
    b"",
    b"\n",
    b"#",
    b"# ",
    b"=",
    b" = ",
    b"= =",
    b"*.*.mode = 1e400",
    b"*.Server.target_qps = 1e400",
    b"*.Server.target_qps = 1e308",
    b"*.SingleStream.target_latency = 1e308",
    b"*.Server.target_latency = 18446744073710",
    b"*.*.min_query_count = -0",
    b"*.*.min_query_count = 0x10000000000000000",
    b"*.Server.max_async_queries = 2147483648",
    b"*.*.accuracy_log_probability = NaN",
    b"*.*.mode = 4",
    b"\xef\xbb\xbf*.*.mode = 1",
    b"*.*.mode\0 = 1",
    b"*.*.mode = \xff",
    b"\xc3",
    b"*.*.\xe2\x82 = 1\n*.*.mode = 9",
    b"...",
    b". = 1",
    b"*.*.* = 1",
    b"-",
    b"*.*.mode = -",
    b"*.*.mode = +",
    b"*.*.mode = 0x",
    b"*.*.mode = 0x-1",
];

#[test]
fn mutated_config_texts_parse_or_fail_with_a_located_message() {
    let started = Instant::now();
    let dir = TempDir::new();
    let file_path = dir.path().join("user.conf");
    let mut rng = Rng(0x5EED_C0FF_EE00_0001);
    let mut tally = Tally::new();

    let seeds = seeds();
    for (i, seed) in seeds.iter().enumerate() {
        let text = std::str::from_utf8(seed).unwrap();
        if let Err(error) = ConfigFile::parse(text, "seed") {
            panic!("seed {i} is not a valid config: {error}");
        }
    }
    for (i, input) in REGRESSIONS.iter().enumerate() {
        run_case(
            &mut rng,
            &format!("regression {i}"),
            input,
            &file_path,
            &mut tally,
        );
    }
    // Error lines beyond the displayed maximum, and a very long line (a 64 KiB value).
    let many_errors = "x\n".repeat(3 * MAX_DISPLAYED_ERRORS);
    run_case(
        &mut rng,
        "many errors",
        many_errors.as_bytes(),
        &file_path,
        &mut tally,
    );
    let huge = format!("*.*.min_query_count = {}\n", "9".repeat(1 << 16));
    run_case(
        &mut rng,
        "64 KiB value",
        huge.as_bytes(),
        &file_path,
        &mut tally,
    );

    // What the random cases reach, without the fixed ones.
    tally.reached.fill(0);
    for case in 0..CASES {
        let mut text = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut text);
        }
        run_case(
            &mut rng,
            &format!("case {case}"),
            &text,
            &file_path,
            &mut tally,
        );
    }

    // The mutations must reach both outcomes, and bytes that are not UTF-8.
    assert!(tally.ok > CASES / 20, "only {} of {CASES} parsed", tally.ok);
    assert!(
        tally.invalid > CASES / 20,
        "only {} of {CASES} rejected",
        tally.invalid
    );
    assert!(
        tally.not_utf8 > CASES / 50,
        "only {} not UTF-8",
        tally.not_utf8
    );
    let reached: Vec<(&str, usize)> = MESSAGES.iter().copied().zip(tally.reached).collect();
    eprintln!(
        "config mutations: {} cases, {} parsed, {} rejected, {} not UTF-8, slowest {:?}, \
         {:?} in all; messages: {reached:?}",
        CASES + REGRESSIONS.len() + 2,
        tally.ok,
        tally.invalid,
        tally.not_utf8,
        tally.slowest,
        started.elapsed()
    );
    // With the release build's 12,000 cases every message is reached several times; with
    // the debug build's fewer, the rarest ones may not be.
    if !cfg!(debug_assertions) {
        for (part, seen) in reached {
            assert!(seen > 0, "no mutation reached the message {part:?}");
        }
    }
}
