//! Gamma-distributed draws from mt19937 (Marsaglia and Tsang's method), for bursty arrivals.

use mlperf_loadgen::rng::{generate_canonical, Mt19937};

/// A draw of Gamma(shape, scale = 1).
pub(crate) fn gamma(rng: &mut Mt19937, shape: f64) -> f64 {
    if shape < 1.0 {
        // Gamma(k) = Gamma(k + 1) * U^(1/k) for k < 1.
        let u = open_unit(rng);
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = open_unit(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A standard normal draw (Box and Muller).
fn normal(rng: &mut Mt19937) -> f64 {
    let u1 = open_unit(rng);
    let u2 = generate_canonical(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Uniform in (0, 1): never 0, whose logarithm is infinite.
fn open_unit(rng: &mut Mt19937) -> f64 {
    loop {
        let u = generate_canonical(rng);
        if u > 0.0 {
            return u;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(shape: f64) -> (f64, f64) {
        let mut rng = Mt19937::new(7);
        let draws: Vec<f64> = (0..400_000).map(|_| gamma(&mut rng, shape)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let variance =
            draws.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / draws.len() as f64;
        (mean, variance)
    }

    #[test]
    fn draws_have_the_shapes_mean_and_variance() {
        // Gamma(k, 1): mean k, variance k.
        for shape in [0.25, 0.5, 1.0, 2.0, 9.0] {
            let (mean, variance) = moments(shape);
            assert!((mean / shape - 1.0).abs() < 0.01, "k={shape}: mean {mean}");
            assert!(
                (variance / shape - 1.0).abs() < 0.04,
                "k={shape}: variance {variance}"
            );
        }
    }
}
