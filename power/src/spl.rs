//! `spl.txt`, the sample log of MLCommons' power workflow: one line a sample,
//! `Time,MM-DD-YYYY HH:MM:SS.mmm,Watts,W,Volts,V,Amps,A,PF,pf,Mark,mark` (UTC; multichannel
//! lines go on with per-channel fields, which are not read here).

use crate::clock::{format_utc, parse_utc};
use crate::trace::PowerSample;

/// One line of spl.txt: its sample and mark ("" when it has none).
pub fn parse_line(line: &str) -> Result<(PowerSample, String), String> {
    let fields: Vec<&str> = line.trim_end().split(',').collect();
    let value = |key: &str| -> Option<&str> {
        fields
            .iter()
            .position(|f| *f == key)
            .and_then(|i| fields.get(i + 1).copied())
    };
    let number = |key: &str| -> Result<Option<f64>, String> {
        value(key)
            .map(|v| {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{key} {v:?} is not a number"))
            })
            .transpose()
    };
    if fields.first() != Some(&"Time") {
        return Err("does not start with Time,".into());
    }
    let time = parse_utc(value("Time").ok_or("no time")?)?;
    let watts = number("Watts")?.ok_or("no Watts field")?;
    let sample = PowerSample {
        time,
        watts,
        volts: number("Volts")?,
        amps: number("Amps")?,
        power_factor: number("PF")?,
    };
    Ok((sample, value("Mark").unwrap_or("").to_owned()))
}

/// The line for `sample` with `mark` (-1 for fields the meter lacks, as PTDaemon writes).
pub fn format_line(sample: &PowerSample, mark: &str) -> String {
    let or_none = |v: Option<f64>| v.map_or("-1".to_owned(), |v| v.to_string());
    format!(
        "Time,{},Watts,{},Volts,{},Amps,{},PF,{},Mark,{mark}",
        format_utc(sample.time),
        sample.watts,
        or_none(sample.volts),
        or_none(sample.amps),
        or_none(sample.power_factor)
    )
}

/// Every sample of an spl.txt; an error names the line.
pub fn parse(text: &str) -> Result<Vec<(PowerSample, String)>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| parse_line(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_the_official_line() {
        let line = "Time,07-31-2025 12:22:36.142,Watts,201.300000,Volts,229.130000,Amps,\
                    1.090000,PF,0.806000,Mark,2025-07-31_12-20-00_resnet_testing";
        let (sample, mark) = parse_line(line).unwrap();
        assert_eq!(sample.watts, 201.3);
        assert_eq!(sample.volts, Some(229.13));
        assert_eq!(sample.power_factor, Some(0.806));
        assert_eq!(mark, "2025-07-31_12-20-00_resnet_testing");
        let again = format_line(&sample, &mark);
        assert_eq!(parse_line(&again).unwrap(), (sample, mark));
        assert!(again.starts_with("Time,07-31-2025 12:22:36.142,Watts,201.3,"));
    }

    #[test]
    fn multichannel_and_bad_readings_parse_or_name_the_line() {
        let multi = "Time,01-02-2026 00:00:01.000,Watts,-1,Volts,-1,Amps,-1,PF,-1,Mark,m,Ch1,\
                     Watts,10";
        let (sample, _) = parse_line(multi).unwrap();
        assert!(!sample.is_valid());
        let text = "Time,01-02-2026 00:00:01.000,Watts,5,Volts,1,Amps,1,PF,1,Mark,m\n\
                    Time,01-02-2026 00:00:02.000,Watts,abc,Volts,1,Amps,1,PF,1,Mark,m\n";
        let error = parse(text).unwrap_err();
        assert!(
            error.starts_with("line 2:") && error.contains("\"abc\""),
            "{error}"
        );
        assert!(parse_line("Watts,5").is_err());
    }
}
