//! The RNG primitives against every vector of golden/rng_primitives.json (official wheel).

use crate::support;

use mlperf_loadgen::rng::{
    exponential_gap_ns, generate_canonical, period_ns, shuffle, uniform_int, Mt19937,
};
use serde_json::Value;

const QSL_SEED: u64 = 2_085_463_073_848_966_840;
const SAMPLE_SEED: u64 = 2_747_215_439_041_700_203;
const SCHEDULE_SEED: u64 = 16_159_082_839_903_944_936;

fn vectors() -> Value {
    support::golden("rng_primitives.json")
}

fn u64s(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn mt19937_outputs() {
    let v = vectors();
    let mut rng = Mt19937::new(5489);
    let mut last = 0;
    for _ in 0..10_000 {
        last = rng.next_u32();
    }
    assert_eq!(u64::from(last), v["mt19937_default_seed_5489_output_10000"]);
    for (name, seed) in [
        ("qsl", QSL_SEED),
        ("sample", SAMPLE_SEED),
        ("schedule", SCHEDULE_SEED),
    ] {
        let mut rng = Mt19937::new(seed);
        let got: Vec<u64> = (0..10).map(|_| u64::from(rng.next_u32())).collect();
        assert_eq!(got, u64s(&v["mt19937_first10"][name]), "engine {name}");
    }
}

#[test]
fn uniform_int_lemire() {
    let v = vectors();
    let cases = v["uniform_int_0_to_n_minus_1_first20_seed_sample_index"]
        .as_object()
        .unwrap();
    assert!(cases.len() >= 6);
    for (n, expected) in cases {
        let n: u64 = n.parse().unwrap();
        let mut rng = Mt19937::new(SAMPLE_SEED);
        let got: Vec<u64> = (0..20).map(|_| uniform_int(&mut rng, 0, n - 1)).collect();
        assert_eq!(got, u64s(expected), "U(0, {n} - 1)");
    }
}

#[test]
fn shuffle_paired_and_single_paths() {
    let v = vectors();
    let cases = v["shuffle_iota_n_first20_seed_qsl"].as_object().unwrap();
    let mut checked = 0;
    for (key, expected) in cases {
        if key.ends_with("_rng_next_after") {
            continue;
        }
        let n: usize = key.parse().unwrap();
        let mut rng = Mt19937::new(QSL_SEED);
        let mut values: Vec<u64> = (0..n as u64).collect();
        shuffle(&mut values, &mut rng);
        let expected = u64s(expected);
        assert_eq!(&values[..expected.len()], &expected[..], "shuffle of {n}");
        if let Some(next) = cases.get(&format!("{key}_rng_next_after")) {
            assert_eq!(
                u64::from(rng.next_u32()),
                next.as_u64().unwrap(),
                "draws consumed by shuffle of {n}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} shuffle vectors");
}

#[test]
fn canonical_exponential_and_periods() {
    let v = vectors();
    let mut rng = Mt19937::new(SCHEDULE_SEED);
    for pair in v["generate_canonical_first10_seed_schedule"]
        .as_array()
        .unwrap()
    {
        let value = generate_canonical(&mut rng);
        let bits = u64::from_str_radix(pair[1].as_str().unwrap(), 16).unwrap();
        assert_eq!(value.to_bits(), bits, "{value} vs {}", pair[0]);
    }
    let mut rng = Mt19937::new(SCHEDULE_SEED);
    let gaps: Vec<u64> = (0..20)
        .map(|_| exponential_gap_ns(&mut rng, 1000.0) as u64)
        .collect();
    assert_eq!(gaps, u64s(&v["server_interarrival_ns_qps1000_first20"]));
    let periods = &v["fixed_period_ns"];
    assert_eq!(period_ns(1000.0) as u64, periods["qps1000"]);
    assert_eq!(period_ns(3.0) as u64, periods["qps3"]);
    assert_eq!(
        period_ns(1e9 / 1e6) as u64,
        periods["ss_expected_latency_ns_1e6"]
    );
}

#[test]
fn accuracy_log_values() {
    let v = vectors();
    for (seed, expected) in v["accuracy_log_offset"].as_object().unwrap() {
        let mut rng = Mt19937::new(seed.parse().unwrap());
        assert_eq!(
            generate_canonical(&mut rng),
            expected.as_f64().unwrap(),
            "offset seed {seed}"
        );
    }
    let mut rng = Mt19937::new(5489);
    for expected in v["accuracy_log_val_first10_default_seed"]
        .as_array()
        .unwrap()
    {
        assert_eq!(generate_canonical(&mut rng), expected.as_f64().unwrap());
    }
}
