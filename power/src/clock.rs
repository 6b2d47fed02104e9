//! UTC wall-clock times as MLPerf writes them (`MM-DD-YYYY HH:MM:SS.mmm`, milliseconds
//! truncated: LoadGen's `power_begin`/`power_end` and PTDaemon's sample stamps), and the run
//! window they bound.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The span the power metric covers: LoadGen's `power_begin` (wall clock at the first issue)
/// to `power_end` (begin plus the monotonic time to the last completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunWindow {
    pub begin: SystemTime,
    pub end: SystemTime,
}

impl RunWindow {
    /// The window as LoadGen forms it: `begin` plus the monotonic `active` duration.
    pub fn from_start(begin: SystemTime, active: Duration) -> RunWindow {
        RunWindow {
            begin,
            end: begin + active,
        }
    }

    /// The window of two MLPerf time strings (e.g. the detail log's power_begin/power_end).
    pub fn parse(begin: &str, end: &str) -> Result<RunWindow, String> {
        let window = RunWindow {
            begin: parse_utc(begin)?,
            end: parse_utc(end)?,
        };
        if window.end < window.begin {
            return Err(format!("power_end {end:?} is before power_begin {begin:?}"));
        }
        Ok(window)
    }

    pub fn seconds(&self) -> f64 {
        self.end
            .duration_since(self.begin)
            .unwrap_or_default()
            .as_secs_f64()
    }

    /// Strictly inside, as the checker filters samples.
    pub fn contains(&self, time: SystemTime) -> bool {
        self.begin < time && time < self.end
    }

    /// (power_begin, power_end) as LoadGen logs them.
    pub fn strings(&self) -> (String, String) {
        (format_utc(self.begin), format_utc(self.end))
    }
}

/// `MM-DD-YYYY HH:MM:SS.mmm` in UTC, milliseconds truncated.
pub fn format_utc(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let of_day = seconds % 86_400;
    format!(
        "{month:02}-{day:02}-{year:04} {:02}:{:02}:{:02}.{:03}",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since.subsec_millis()
    )
}

/// Parses `MM-DD-YYYY HH:MM:SS[.fff]` as UTC.
pub fn parse_utc(text: &str) -> Result<SystemTime, String> {
    let bad = || format!("{text:?} is not a time of the form MM-DD-YYYY HH:MM:SS.mmm");
    let (date, time) = text.trim().split_once(' ').ok_or_else(bad)?;
    let numbers = |part: &str, separator: char| -> Result<Vec<u64>, String> {
        part.split(separator)
            .map(|n| n.parse::<u64>().map_err(|_| bad()))
            .collect()
    };
    let date = numbers(date, '-')?;
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let clock = numbers(clock, ':')?;
    let (&[month, day, year], &[hour, minute, second]) = (date.as_slice(), clock.as_slice()) else {
        return Err(bad());
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return Err(bad());
    }
    // Four-digit years only: a bigger one would overflow the arithmetic below.
    if second > 60
        || !(1970..=9999).contains(&year)
        || !fraction.chars().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction
            .chars()
            .chain("000000000".chars())
            .take(9)
            .collect();
        digits.parse::<u32>().map_err(|_| bad())?
    };
    let days = days_from_civil(year as i64, month as u32, day as u32);
    let seconds = days as u64 * 86_400 + hour * 3600 + minute * 60 + second;
    Ok(UNIX_EPOCH + Duration::new(seconds, nanos))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month as i64 + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day as i64 - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_as_loadgen_writes_power_times() {
        // 2025-07-31 12:22:36.142999 UTC, as in the official wheel's example logs.
        let time = UNIX_EPOCH + Duration::new(1_753_964_556, 142_999_000);
        assert_eq!(format_utc(time), "07-31-2025 12:22:36.142");
        assert_eq!(
            parse_utc("07-31-2025 12:22:36.142").unwrap(),
            UNIX_EPOCH + Duration::new(1_753_964_556, 142_000_000)
        );
        assert_eq!(format_utc(UNIX_EPOCH), "01-01-1970 00:00:00.000");
        assert_eq!(
            format_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "02-29-2000 00:00:00.000"
        );
        for days in [0i64, 59, 365, 10_957, 11_016, 20_000, 50_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn bad_times_say_what_is_expected() {
        for text in [
            "",
            "07-31-2025",
            "31-07-2025 12:22:36",
            "07-31-2025 25:00:00",
            "x y",
        ] {
            let error = parse_utc(text).unwrap_err();
            assert!(error.contains("MM-DD-YYYY"), "{text}: {error}");
        }
        assert!(RunWindow::parse("07-31-2025 12:00:01", "07-31-2025 12:00:00").is_err());
    }

    #[test]
    fn the_window_is_open_at_both_ends() {
        let begin = UNIX_EPOCH + Duration::from_secs(100);
        let window = RunWindow::from_start(begin, Duration::from_millis(2500));
        assert!(!window.contains(begin));
        assert!(window.contains(begin + Duration::from_millis(1)));
        assert!(!window.contains(window.end));
        assert_eq!(window.seconds(), 2.5);
        assert_eq!(window.strings().1, "01-01-1970 00:01:42.500");
    }
}
