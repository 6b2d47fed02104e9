//! The summary arithmetic at the real case count (43, so numpy's pairwise
//! summation matters) including a NaN row, against accuracy_kits.main() run
//! on the same values (logs/agg43/).

mod common;

use common::{fixture_dir, read_json, repr_f64};
use mlperf_kits19::accuracy::{CaseScore, Summary};

#[test]
fn mean_csv_and_line_match_for_43_cases() {
    let scores = read_json("logs/agg43/scores.json");
    let rows: Vec<CaseScore> = scores
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_array().unwrap();
            let v = r[1].as_array().unwrap();
            CaseScore::new(r[0].as_str().unwrap(), repr_f64(&v[0]), repr_f64(&v[1]))
        })
        .collect();
    assert_eq!(rows.len(), 43);
    let summary = Summary::new(rows);
    let dir = fixture_dir().join("logs/agg43");
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.to_csv(), csv);
    let out = std::fs::read_to_string(dir.join("accuracy.stdout")).unwrap();
    let line = out.lines().find(|l| l.starts_with("Accuracy:")).unwrap();
    assert_eq!(summary.accuracy_line(), line);

    // a left-to-right mean would not have matched the last bits
    let k: Vec<f64> = summary.cases.iter().map(|c| c.kidney).collect();
    let naive = k.iter().fold(0.0, |a, b| a + b) / 43.0;
    assert_ne!(
        naive, summary.mean_kidney,
        "fixture should exercise pairwise summation"
    );
}
