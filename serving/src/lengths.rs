//! Token lengths for synthetic requests: fixed, uniform or normal, drawn from LoadGen's
//! mt19937 so that a seed gives the same lengths on every machine.

use mlperf_loadgen::rng::{generate_canonical, uniform_int, Mt19937};

/// How many tokens each synthetic prompt holds.
#[derive(Debug, Clone, Copy, PartialEq)]
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
}

impl Lengths {
    /// `fixed:N`, `uniform:LOW:HIGH` or `normal:MEAN:SD`.
    pub fn parse(text: &str) -> Result<Lengths, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let bad =
            || format!("{text:?}: expected fixed:N, uniform:LOW:HIGH or normal:MEAN:SD (tokens)");
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

    /// The longest length it draws (normal: mean + 6 standard deviations).
    pub fn most(&self) -> usize {
        match *self {
            Lengths::Fixed(n) => n,
            Lengths::Uniform { high, .. } => high,
            Lengths::Normal { mean, sd } => (mean + 6.0 * sd).ceil() as usize,
        }
    }

    pub fn draw(&self, rng: &mut Mt19937) -> usize {
        match *self {
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
