//! Token lengths for synthetic requests: fixed, uniform, normal or from a histogram file,
//! drawn from LoadGen's mt19937 so that a seed gives the same lengths on every machine.

use mlperf_loadgen::rng::{generate_canonical, uniform_int, Mt19937};

/// How many tokens each synthetic prompt (or answer) holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Lengths {
    Fixed(usize),
    /// Uniform over `[low, high]`, both included.
    Uniform {
        low: usize,
        high: usize,
    },
    /// Normal, rounded, and kept to at least 1.
    Normal {
        mean: f64,
        sd: f64,
    },
    /// Lengths in proportion to their weights (a histogram file's lines).
    Histogram {
        lengths: Vec<usize>,
        /// Running sums of the weights, the last their total.
        cumulative: Vec<f64>,
    },
}

impl Lengths {
    /// `fixed:N`, `uniform:LOW:HIGH`, `normal:MEAN:SD` or `hist:FILE`.
    pub fn parse(text: &str) -> Result<Lengths, String> {
        if let Some(file) = text.strip_prefix("hist:") {
            let histogram = std::fs::read_to_string(file)
                .map_err(|e| format!("{text:?}: cannot read {file}: {e}"))?;
            return Lengths::histogram(&histogram).map_err(|why| format!("{file}: {why}"));
        }
        let parts: Vec<&str> = text.split(':').collect();
        let bad = || {
            format!(
                "{text:?}: expected fixed:N, uniform:LOW:HIGH, normal:MEAN:SD or hist:FILE (tokens)"
            )
        };
        let count = |s: &str| s.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(bad);
        let real = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(bad)
        };
        match parts[..] {
            ["fixed", n] => Ok(Lengths::Fixed(count(n)?)),
            ["uniform", low, high] => {
                let (low, high) = (count(low)?, count(high)?);
                if low > high {
                    return Err(format!("{text:?}: LOW is above HIGH"));
                }
                Ok(Lengths::Uniform { low, high })
            }
            ["normal", mean, sd] => {
                let mean = real(mean)?;
                if mean < 1.0 {
                    return Err(format!("{text:?}: the mean must be at least 1 token"));
                }
                Ok(Lengths::Normal {
                    mean,
                    sd: real(sd)?,
                })
            }
            _ => Err(bad()),
        }
    }

    /// A histogram's text: a line per length, `LENGTH,WEIGHT` (or `LENGTH WEIGHT`; a weight
    /// of any non-negative size), `#` comments and blank lines skipped.
    pub fn histogram(text: &str) -> Result<Lengths, String> {
        let (mut lengths, mut cumulative, mut total) = (Vec::new(), Vec::new(), 0.0);
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let bad = || format!("line {}: {line:?}: expected LENGTH,WEIGHT", number + 1);
            let [length, weight] = fields[..] else {
                return Err(bad());
            };
            let length = length
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(bad)?;
            let weight = weight
                .parse::<f64>()
                .ok()
                .filter(|w| w.is_finite() && *w >= 0.0)
                .ok_or_else(bad)?;
            total += weight;
            lengths.push(length);
            cumulative.push(total);
        }
        if total <= 0.0 {
            return Err("no length has a weight above 0".to_string());
        }
        Ok(Lengths::Histogram {
            lengths,
            cumulative,
        })
    }

    /// The longest length it draws (normal: mean + 6 standard deviations).
    pub fn most(&self) -> usize {
        match *self {
            Lengths::Fixed(n) => n,
            Lengths::Uniform { high, .. } => high,
            Lengths::Normal { mean, sd } => (mean + 6.0 * sd).ceil() as usize,
            Lengths::Histogram { ref lengths, .. } => lengths.iter().copied().max().unwrap_or(1),
        }
    }

    pub fn draw(&self, rng: &mut Mt19937) -> usize {
        match *self {
            Lengths::Histogram {
                ref lengths,
                ref cumulative,
            } => {
                let total = cumulative.last().copied().unwrap_or(0.0);
                let at = generate_canonical(rng) * total;
                let bin = cumulative.partition_point(|&sum| sum <= at);
                lengths[bin.min(lengths.len() - 1)]
            }
            Lengths::Fixed(n) => n,
            Lengths::Uniform { low, high } => uniform_int(rng, low as u64, high as u64) as usize,
            Lengths::Normal { mean, sd } => {
                // Box-Muller on two canonical draws; 1 − u keeps the logarithm finite.
                let (u, v) = (generate_canonical(rng), generate_canonical(rng));
                let z = (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
                ((mean + sd * z).round() as usize).clamp(1, self.most())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(lengths: Lengths) -> (f64, f64, usize, usize) {
        let mut rng = Mt19937::new(5);
        let draws: Vec<f64> = (0..20_000).map(|_| lengths.draw(&mut rng) as f64).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        let min = draws.iter().copied().fold(f64::INFINITY, f64::min) as usize;
        let max = draws.iter().copied().fold(0.0, f64::max) as usize;
        (mean, sd, min, max)
    }

    #[test]
    fn each_distribution_has_its_moments_and_bounds() {
        assert_eq!(moments(Lengths::Fixed(7)), (7.0, 0.0, 7, 7));
        let (mean, _, min, max) = moments(Lengths::Uniform { low: 16, high: 64 });
        assert!((mean - 40.0).abs() < 0.5, "{mean}");
        assert_eq!((min, max), (16, 64));
        let (mean, sd, min, _) = moments(Lengths::Normal {
            mean: 128.0,
            sd: 16.0,
        });
        assert!(
            (mean - 128.0).abs() < 0.5 && (sd - 16.0).abs() < 0.5,
            "{mean} {sd}"
        );
        assert!(min >= 1);
    }

    #[test]
    fn a_histogram_draws_its_lengths_in_proportion_to_their_weights() {
        let lengths =
            Lengths::histogram("# length, weight\n16,1\n64 3\n\n100,0 # never\n").unwrap();
        let mut rng = Mt19937::new(9);
        let draws: Vec<usize> = (0..40_000).map(|_| lengths.draw(&mut rng)).collect();
        let share = draws.iter().filter(|&&n| n == 64).count() as f64 / draws.len() as f64;
        // 3 of 4; 3 binomial standard deviations of 40,000 draws are 0.0065.
        assert!((share - 0.75).abs() < 0.0065, "{share}");
        assert!(draws.iter().all(|&n| n == 16 || n == 64));
        assert_eq!(lengths.most(), 100);
        for (text, why) in [
            ("16", "line 1: \"16\": expected LENGTH,WEIGHT"),
            ("0,1", "expected LENGTH,WEIGHT"),
            ("8,-1", "expected LENGTH,WEIGHT"),
            ("8,0", "no length has a weight above 0"),
        ] {
            let error = Lengths::histogram(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn lengths_parse_and_bad_ones_are_named() {
        assert_eq!(Lengths::parse("fixed:128"), Ok(Lengths::Fixed(128)));
        assert_eq!(
            Lengths::parse("uniform:8:32"),
            Ok(Lengths::Uniform { low: 8, high: 32 })
        );
        assert_eq!(
            Lengths::parse("normal:100:10"),
            Ok(Lengths::Normal {
                mean: 100.0,
                sd: 10.0
            })
        );
        assert!(Lengths::parse("uniform:9:8")
            .unwrap_err()
            .contains("LOW is above HIGH"));
        assert!(Lengths::parse("fixed:0")
            .unwrap_err()
            .contains("expected fixed:N"));
        assert!(Lengths::parse("zipf:1")
            .unwrap_err()
            .contains("expected fixed:N"));
    }
}
