//! The replies of SPEC PTDaemon's text protocol, parsed. Pure functions, so each reply format
//! is tested on its own, with real PTDaemon replies where they are known (reference §1.2).

use crate::spl;
use crate::trace::PowerSample;

/// What `Hello` must be answered with; the official server refuses any other daemon.
pub const HELLO_REPLY: &str = "Hello, PTDaemon here!";
/// How a `Go` reply starts (it goes on with the sample count, interval and ramp-up).
pub const GO_REPLY: &str = "Starting untimed measurement";
/// How a `Stop` reply starts.
pub const STOP_REPLY: &str = "Stopping untimed measurement";

/// An `Identify` reply: `model,interval_ms,can_watts,…,version=<ver>-<crc>-<date>,OS=…,…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Field 0, as the checker takes it (e.g. `YokogawaWT330`, `Dummy`).
    pub model: String,
    /// The text after `version=`, e.g. `1.11.1-c2b6b6cc-20240212`.
    pub version: Option<String>,
    /// The whole reply, kept as the source's identity.
    pub reply: String,
}

impl Identity {
    /// The version as the checker reads it: the text between `version=` and the next `-`.
    pub fn checker_version(&self) -> Option<&str> {
        self.version
            .as_deref()
            .map(|v| v.split('-').next().unwrap_or(v))
    }

    /// Whether this is SPEC's Dummy device (what the simulator says it is) rather than an
    /// analyzer: its readings are made up and must be labelled so.
    pub fn is_simulated(&self) -> bool {
        self.model.eq_ignore_ascii_case("dummy")
            || self.reply.to_ascii_lowercase().contains("simulator")
    }
}

pub fn parse_identify(reply: &str) -> Result<Identity, String> {
    let reply = reply.trim();
    if reply.is_empty() || is_error(reply) {
        return Err(format!("{reply:?} is not an identification"));
    }
    let fields: Vec<&str> = reply.split(',').map(str::trim).collect();
    let model = fields.first().copied().unwrap_or_default();
    if model.is_empty() || fields.len() < 2 {
        return Err(format!(
            "{reply:?} is not an identification (model,interval,…,version=…)"
        ));
    }
    let version = fields
        .iter()
        .find_map(|f| f.strip_prefix("version="))
        .map(str::to_owned);
    Ok(Identity {
        model: model.to_owned(),
        version,
        reply: reply.to_owned(),
    })
}

/// An `RR` reply, `Ranges,<A_auto>,<A_range>,<V_auto>,<V_range>`: auto flags are -1 unknown,
/// 0 off, 1 on; a range > 0 is the range in amps or volts, -1 unknown. A multichannel meter
/// sends a group of four a channel, the sum channel first; that first group is kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranges {
    pub amps_auto: i32,
    pub amps: f64,
    pub volts_auto: i32,
    pub volts: f64,
}

impl Ranges {
    /// The `SR,A,…` value that puts the current range back as it was. As the official server
    /// does, a fixed range when auto-ranging was off and the range known, else `Auto`.
    pub fn restore_amps(&self) -> String {
        restore(self.amps_auto, self.amps)
    }

    /// The `SR,V,…` value that puts the voltage range back as it was.
    pub fn restore_volts(&self) -> String {
        restore(self.volts_auto, self.volts)
    }
}

fn restore(auto: i32, range: f64) -> String {
    if auto == 0 && range > 0.0 && range.is_finite() {
        range.to_string()
    } else {
        "Auto".to_owned()
    }
}

pub fn parse_ranges(reply: &str) -> Result<Ranges, String> {
    let bad = || format!("{reply:?} is not Ranges,<A_auto>,<A_range>,<V_auto>,<V_range>");
    let fields: Vec<&str> = reply.trim().split(',').map(str::trim).collect();
    if fields.first() != Some(&"Ranges") || fields.len() < 5 {
        return Err(bad());
    }
    let number = |i: usize| fields[i].parse::<f64>().map_err(|_| bad());
    let flag = |i: usize| -> Result<i32, String> {
        let value = number(i)?;
        if [-1.0, 0.0, 1.0].contains(&value) {
            Ok(value as i32)
        } else {
            Err(bad())
        }
    };
    Ok(Ranges {
        amps_auto: flag(1)?,
        amps: number(2)?,
        volts_auto: flag(3)?,
        volts: number(4)?,
    })
}

/// The sample count of an `RL` header, `Last N samples`.
pub fn parse_sample_count(reply: &str) -> Result<usize, String> {
    let words: Vec<&str> = reply.split_whitespace().collect();
    match words.as_slice() {
        ["Last", count, ..] => count
            .parse()
            .map_err(|_| format!("{reply:?}: {count:?} is not a sample count")),
        _ => Err(format!("{reply:?} is not an `RL` header (Last N samples)")),
    }
}

/// One `RL` line, `Time,MM-DD-YYYY HH:MM:SS.mmm,Watts,w,Volts,v,Amps,a,PF,pf` (multichannel
/// meters add per-channel fields, which are not read). Bad readings come as `-1`, `nan` or
/// `inf`; they parse, and [`PowerSample::is_valid`] leaves them out. A field of -1 for volts,
/// amps or power factor means the meter does not have it.
pub fn parse_sample(line: &str) -> Result<PowerSample, String> {
    let (mut sample, _mark) = spl::parse_line(line)?;
    let known = |value: Option<f64>| value.filter(|v| *v != -1.0);
    sample.volts = known(sample.volts);
    sample.amps = known(sample.amps);
    sample.power_factor = known(sample.power_factor);
    Ok(sample)
}

/// A `Watts` reply, `Watts,<avg>,<min>,<max>,<samples>,<errors>,<valid>`: the meter's own
/// statistics of the last measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WattsSummary {
    pub average: f64,
    pub min: f64,
    pub max: f64,
    pub samples: u64,
    pub errors: u64,
    pub valid: u64,
}

pub fn parse_watts(reply: &str) -> Result<WattsSummary, String> {
    let fields = summary_fields(reply, "Watts", 6)?;
    Ok(WattsSummary {
        average: number(fields[0], reply)?,
        min: number(fields[1], reply)?,
        max: number(fields[2], reply)?,
        samples: count(fields[3], reply)?,
        errors: count(fields[4], reply)?,
        valid: count(fields[5], reply)?,
    })
}

/// An `Uncertainty` reply, `Uncertainty,<avg>,<min>,<max>,<total>,<invalid>,<valid>,<unknown>`;
/// avg/min/max are fractions (0.003 is 0.3 %).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UncertaintySummary {
    pub average: f64,
    pub min: f64,
    pub max: f64,
    pub total: u64,
    pub invalid: u64,
    pub valid: u64,
    pub unknown: u64,
}

pub fn parse_uncertainty(reply: &str) -> Result<UncertaintySummary, String> {
    let fields = summary_fields(reply, "Uncertainty", 7)?;
    Ok(UncertaintySummary {
        average: number(fields[0], reply)?,
        min: number(fields[1], reply)?,
        max: number(fields[2], reply)?,
        total: count(fields[3], reply)?,
        invalid: count(fields[4], reply)?,
        valid: count(fields[5], reply)?,
        unknown: count(fields[6], reply)?,
    })
}

/// The `length` fields after `keyword,`.
fn summary_fields<'a>(
    reply: &'a str,
    keyword: &str,
    length: usize,
) -> Result<Vec<&'a str>, String> {
    let fields: Vec<&str> = reply.trim().split(',').map(str::trim).collect();
    if fields.first() != Some(&keyword) || fields.len() < length + 1 {
        return Err(format!(
            "{reply:?} is not a {keyword} reply ({keyword} and {length} numbers)"
        ));
    }
    Ok(fields[1..=length].to_vec())
}

fn number(field: &str, reply: &str) -> Result<f64, String> {
    field
        .parse()
        .map_err(|_| format!("{reply:?}: {field:?} is not a number"))
}

/// A count, written as an integer or, by some meters, as a float with no fraction.
fn count(field: &str, reply: &str) -> Result<u64, String> {
    field.parse::<u64>().or_else(|_| {
        field
            .parse::<f64>()
            .ok()
            .filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v < u64::MAX as f64)
            .map(|v| v as u64)
            .ok_or_else(|| format!("{reply:?}: {field:?} is not a count"))
    })
}

/// Whether a reply is one of PTDaemon's refusals rather than an answer.
pub fn is_error(reply: &str) -> bool {
    let reply = reply.trim_start();
    reply.starts_with("Error")
        || reply.starts_with("Unknown command")
        || reply.starts_with("Invalid number of parameters")
}

/// A range for `SR`, rounded up to 6 decimals so it is never below the value measured (and
/// does not carry binary noise such as 1.0068652000000001).
pub fn format_range(value: f64) -> String {
    let scaled = value * 1e6;
    let nearest = scaled.round();
    let rounded = if (scaled - nearest).abs() < 1e-3 {
        nearest
    } else {
        scaled.ceil()
    };
    let text = format!("{:.6}", rounded / 1e6);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::parse_utc;

    #[test]
    fn identify_keeps_model_and_version_and_knows_the_dummy() {
        // A real reply (power-dev#287).
        let real = "YokogawaWT330,1000,1,1,1,1,0,0,1,version=1.10.0-ed9a21d2-20220817,OS=Linux,\
                    mode=power,1,1,1,0,0,no_cal_date,YOKOGAWA;WT333;C2SF14011V;F1.01EM";
        let identity = parse_identify(real).unwrap();
        assert_eq!(identity.model, "YokogawaWT330");
        assert_eq!(identity.checker_version(), Some("1.10.0"));
        assert!(!identity.is_simulated());
        let dummy = parse_identify(
            "Dummy,1000,1,1,1,1,0,0,0,version=0.0.0-sim-20261121,OS=Linux,mode=power,0,0,1,0,0,\
             no_cal_date,mlperf-host simulator\r",
        )
        .unwrap();
        assert_eq!(dummy.model, "Dummy");
        assert_eq!(dummy.checker_version(), Some("0.0.0"));
        assert!(dummy.is_simulated());
        assert!(!dummy.reply.ends_with('\r'));
        for bad in ["", "Unknown command", "Error: Meter busy", "Dummy"] {
            assert!(parse_identify(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ranges_parse_and_restore_as_the_official_server_does() {
        let ranges = parse_ranges("Ranges,0,20,0,300").unwrap();
        assert_eq!(
            ranges,
            Ranges {
                amps_auto: 0,
                amps: 20.0,
                volts_auto: 0,
                volts: 300.0
            }
        );
        assert_eq!(
            (ranges.restore_volts(), ranges.restore_amps()),
            ("300".into(), "20".into())
        );
        // Auto on, or unknown: back to Auto. Multichannel: the sum channel's group.
        let ranges = parse_ranges("Ranges,1,-1.0,-1,-1,0,5,0,150").unwrap();
        assert_eq!(ranges.amps_auto, 1);
        assert_eq!(
            (ranges.restore_volts(), ranges.restore_amps()),
            ("Auto".into(), "Auto".into())
        );
        assert_eq!(
            parse_ranges("Ranges,0,0.5,0,150.5").unwrap().restore_amps(),
            "0.5"
        );
        for bad in [
            "Ranges,0,20,0",
            "Range,0,20,0,300",
            "Ranges,2,20,0,300",
            "Ranges,0,x,0,300",
            "",
        ] {
            assert!(
                parse_ranges(bad).unwrap_err().contains("Ranges,<A_auto>"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn rl_header_and_lines_parse_with_bad_readings_invalid() {
        assert_eq!(parse_sample_count("Last 12 samples"), Ok(12));
        assert_eq!(parse_sample_count("Last 0 samples"), Ok(0));
        assert!(parse_sample_count("Invalid number of parameters").is_err());
        assert!(parse_sample_count("Last many samples").is_err());

        let sample = parse_sample(
            "Time,11-21-2026 10:00:01.250,Watts,201.300000,Volts,229.130000,Amps,0.925000,PF,0.950000",
        )
        .unwrap();
        assert_eq!(sample.time, parse_utc("11-21-2026 10:00:01.250").unwrap());
        assert_eq!(sample.watts, 201.3);
        assert_eq!(
            (sample.volts, sample.amps, sample.power_factor),
            (Some(229.13), Some(0.925), Some(0.95))
        );
        assert!(sample.is_valid());

        let missing = parse_sample(
            "Time,11-21-2026 10:00:02.250,Watts,-1.000000,Volts,-1.000000,Amps,-1.000000,PF,-1.000000",
        )
        .unwrap();
        assert!(!missing.is_valid());
        assert_eq!(missing.volts, None);
        let nan = parse_sample("Time,11-21-2026 10:00:03.250,Watts,nan,Volts,230,Amps,inf,PF,-1")
            .unwrap();
        assert!(nan.watts.is_nan() && !nan.is_valid());
        assert_eq!(nan.power_factor, None);
        assert!(parse_sample("Time,11-21-2026 10:00:03.250,Watts,abc").is_err());
        assert!(parse_sample("ERROR: Bad watts reading nan").is_err());
    }

    #[test]
    fn watts_and_uncertainty_replies_parse() {
        let watts = parse_watts("Watts,200.200000,199.5,201.0,63,0,63").unwrap();
        assert_eq!(watts.average, 200.2);
        assert_eq!((watts.samples, watts.errors, watts.valid), (63, 0, 63));
        assert_eq!(parse_watts("Watts,1,1,1,3.0,0,3").unwrap().samples, 3);
        let uncertainty = parse_uncertainty("Uncertainty,0.003,0.002,0.004,63,0,63,0").unwrap();
        assert_eq!(uncertainty.max, 0.004);
        assert_eq!((uncertainty.total, uncertainty.unknown), (63, 0));
        assert!(
            parse_uncertainty("Uncertainty,-1,-1,-1,5,0,0,5")
                .unwrap()
                .average
                < 0.0
        );
        for bad in [
            "Watts,1,2",
            "Unknown command",
            "Watts,a,1,1,1,1,1",
            "Watts,1,1,1,-3,0,0",
        ] {
            assert!(parse_watts(bad).is_err(), "{bad:?}");
        }
        assert!(parse_uncertainty("Watts,1,1,1,1,1,1,1").is_err());
    }

    #[test]
    fn ranges_are_written_rounded_up() {
        assert_eq!(format_range(230.0), "230");
        assert_eq!(format_range(230.45), "230.45");
        assert_eq!(format_range(1.1 * 0.915332), "1.006866");
        assert_eq!(format_range(1.1 * 1.0), "1.1");
        assert_eq!(format_range(0.0000004), "0.000001");
        assert!(is_error("Error: Meter busy") && !is_error("Range A changed"));
    }
}
