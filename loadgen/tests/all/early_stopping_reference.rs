//! Early stopping against vectors generated from the Python reference
//! (`tests/tools/gen_early_stopping_vectors.py` over
//! `shared/reference/golden/reference_early_stopping.py`, which matches the official wheel).

use mlperf_loadgen::early_stopping::{
    percentile_estimate, server_check, PercentileEstimate, ServerEarlyStopping,
};
use serde_json::Value;
use std::thread;

fn load_vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/early_stopping_vectors.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

fn u64_field(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn f64_field(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn expected_estimate(v: &Value) -> PercentileEstimate {
    let processed = u64_field(v, "n");
    let min_queries = u64_field(v, "min_queries");
    match (v["discarded"].as_u64(), v["index"].as_u64()) {
        (Some(discarded), Some(index)) => PercentileEstimate::Estimate {
            processed,
            min_queries,
            discarded,
            index: index as usize,
        },
        (None, None) => PercentileEstimate::NotEnoughQueries {
            processed,
            min_queries,
        },
        _ => panic!("inconsistent vector {v}"),
    }
}

#[test]
fn single_stream_estimates_match_reference() {
    let vectors = load_vectors();
    let rows = vectors["single_stream"]
        .as_array()
        .expect("single_stream array");
    assert!(rows.len() >= 300, "only {} vectors", rows.len());
    for p in [0.9, 0.99, 0.999] {
        let max_n = rows
            .iter()
            .filter(|v| f64_field(v, "p") == p)
            .map(|v| u64_field(v, "n"))
            .max();
        assert_eq!(max_n, Some(1_000_000), "sweep for p = {p} reaches 10^6");
    }

    // Each estimate is independent (fresh finder), so spread them over threads; the
    // largest n dominate, hence round-robin from the most expensive.
    let mut order: Vec<&Value> = rows.iter().collect();
    order.sort_by_key(|v| std::cmp::Reverse(u64_field(v, "n")));
    let workers = thread::available_parallelism()
        .map_or(1, |w| w.get())
        .min(8);
    let failures: Vec<String> = thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<&Value> = order.iter().skip(w).step_by(workers).copied().collect();
                scope.spawn(move || {
                    mine.into_iter()
                        .filter_map(|v| {
                            let got = percentile_estimate(u64_field(v, "n"), f64_field(v, "p"));
                            let want = expected_estimate(v);
                            (got != want).then(|| format!("{v}: got {got:?}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn server_checks_match_reference() {
    let vectors = load_vectors();
    let rows = vectors["server"].as_array().expect("server array");
    assert!(rows.len() >= 300, "only {} vectors", rows.len());
    let mut failures = Vec::new();
    for v in rows {
        let (n, overlatency, p) = (
            u64_field(v, "n"),
            u64_field(v, "overlatency"),
            f64_field(v, "p"),
        );
        let want = ServerEarlyStopping {
            passed: v["passed"].as_bool().expect("passed"),
            processed: n,
            overlatency,
            required_queries: u64_field(v, "required_queries"),
            more_queries_needed: u64_field(v, "more_queries_needed"),
        };
        let got = server_check(n, overlatency, p);
        if got != want {
            failures.push(format!("{v}: got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
