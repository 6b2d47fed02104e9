//! When requests start: the load modes, and the gaps between arrivals at a rate.

use mlperf_loadgen::rng::{exponential, Mt19937};

use crate::gamma::gamma;

/// Arrivals at a mean rate (requests per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps, as LoadGen's Server scenario.
    Poisson { rate: f64 },
    /// Gamma gaps of shape `burstiness` and mean 1/rate: burstier below 1 (coefficient of
    /// variation 1/sqrt(burstiness)), steadier above; 1 is Poisson.
    Gamma { rate: f64, burstiness: f64 },
    /// Every 1/rate seconds.
    Constant { rate: f64 },
}

/// How a point loads the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoadMode {
    /// Closed loop: this many requests in flight, a new one as soon as one ends.
    Concurrency(usize),
    /// Open loop: requests arrive as `arrivals` says; with `max_concurrency`, an arrival
    /// waits while that many are in flight (and is sent late, which the records show).
    Rate {
        arrivals: Arrivals,
        max_concurrency: Option<usize>,
    },
    /// Open loop at recorded times: request k at the k-th time of the point's schedule (a
    /// trace), on sample k; with `max_concurrency`, as for a rate.
    Replay { max_concurrency: Option<usize> },
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LoadError {
    #[error("the request rate must be a positive number of requests per second, not {0}")]
    Rate(f64),
    #[error("the burstiness factor must be a positive number, not {0}")]
    Burstiness(f64),
    #[error("the concurrency must be at least 1")]
    Concurrency,
    #[error("concurrency regions need C_min in 1..=32 and C_max above 32 and C_min, not {c_min}:{c_max}")]
    Regions { c_min: usize, c_max: usize },
    #[error("a replay needs the times of its requests (a trace)")]
    NoSchedule,
    #[error("{0} points: a curve has at most 32")]
    TooManyPoints(usize),
}

impl Arrivals {
    pub fn rate(&self) -> f64 {
        match *self {
            Arrivals::Poisson { rate }
            | Arrivals::Gamma { rate, .. }
            | Arrivals::Constant { rate } => rate,
        }
    }

    fn check(&self) -> Result<(), LoadError> {
        let rate = self.rate();
        if !(rate.is_finite() && rate > 0.0) {
            return Err(LoadError::Rate(rate));
        }
        if let Arrivals::Gamma { burstiness, .. } = *self {
            if !(burstiness.is_finite() && burstiness > 0.0) {
                return Err(LoadError::Burstiness(burstiness));
            }
        }
        Ok(())
    }
}

impl LoadMode {
    /// Refuses a rate, burstiness or concurrency that cannot be run.
    pub fn check(&self) -> Result<(), LoadError> {
        match *self {
            LoadMode::Concurrency(0)
            | LoadMode::Rate {
                max_concurrency: Some(0),
                ..
            }
            | LoadMode::Replay {
                max_concurrency: Some(0),
            } => Err(LoadError::Concurrency),
            LoadMode::Concurrency(_) | LoadMode::Replay { .. } => Ok(()),
            LoadMode::Rate { arrivals, .. } => arrivals.check(),
        }
    }
}

/// The gaps between arrivals, drawn from mt19937 with a fixed seed (a point is reproducible).
pub struct ArrivalClock {
    arrivals: Arrivals,
    rng: Mt19937,
}

impl ArrivalClock {
    pub fn new(arrivals: Arrivals, seed: u64) -> Result<ArrivalClock, LoadError> {
        arrivals.check()?;
        Ok(ArrivalClock {
            arrivals,
            rng: Mt19937::new(seed),
        })
    }

    /// The gap to the next arrival, in seconds.
    pub fn next_gap(&mut self) -> f64 {
        match self.arrivals {
            Arrivals::Poisson { rate } => exponential(&mut self.rng, rate),
            Arrivals::Gamma { rate, burstiness } => {
                gamma(&mut self.rng, burstiness) / (burstiness * rate)
            }
            Arrivals::Constant { rate } => 1.0 / rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and coefficient of variation of 200,000 gaps.
    fn gaps(arrivals: Arrivals) -> (f64, f64) {
        let mut clock = ArrivalClock::new(arrivals, 42).unwrap();
        let gaps: Vec<f64> = (0..200_000).map(|_| clock.next_gap()).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let variance =
            gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / gaps.len() as f64;
        (mean, variance.sqrt() / mean)
    }

    #[test]
    fn each_kind_of_arrival_has_its_mean_gap_and_dispersion() {
        for (arrivals, cv) in [
            (Arrivals::Poisson { rate: 500.0 }, 1.0),
            (
                Arrivals::Gamma {
                    rate: 500.0,
                    burstiness: 0.25,
                },
                2.0,
            ),
            (
                Arrivals::Gamma {
                    rate: 500.0,
                    burstiness: 4.0,
                },
                0.5,
            ),
            (Arrivals::Constant { rate: 500.0 }, 0.0),
        ] {
            let (mean, measured) = gaps(arrivals);
            assert!(
                (mean * 500.0 - 1.0).abs() < 0.01,
                "{arrivals:?}: mean {mean}"
            );
            assert!((measured - cv).abs() < 0.03, "{arrivals:?}: cv {measured}");
        }
    }

    #[test]
    fn rates_burstiness_and_concurrency_that_cannot_run_are_refused() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let arrivals = Arrivals::Poisson { rate };
            assert!(matches!(
                ArrivalClock::new(arrivals, 1).err(),
                Some(LoadError::Rate(_))
            ));
        }
        let bursty = Arrivals::Gamma {
            rate: 1.0,
            burstiness: 0.0,
        };
        assert_eq!(
            ArrivalClock::new(bursty, 1).err(),
            Some(LoadError::Burstiness(0.0))
        );
        assert_eq!(
            LoadMode::Concurrency(0).check(),
            Err(LoadError::Concurrency)
        );
        let capped = LoadMode::Rate {
            arrivals: Arrivals::Constant { rate: 1.0 },
            max_concurrency: Some(0),
        };
        assert_eq!(capped.check(), Err(LoadError::Concurrency));
        assert_eq!(
            LoadError::Rate(-1.0).to_string(),
            "the request rate must be a positive number of requests per second, not -1"
        );
    }
}
