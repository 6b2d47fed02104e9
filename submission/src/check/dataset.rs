//! `[dataset-hash]`: every run of a benchmark in a system's results ran the same data set. The
//! runs log its sha256 (`sut_dataset_sha256`, the native engine's detail log) and `submit`
//! files it in measurements.json (`dataset_sha256`, for runs of either engine).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Context;
use crate::logs::{DetailLog, DATASET_SHA256, DETAIL_LOG};
use crate::rule::Rule;
use crate::rules::Rules;
use crate::scenario::Scenario;
use crate::scenario_files::DATASET_SHA256_FIELD;
use crate::tree::{performance_run, subdirectories};

/// Compares the hashes under `benchmark_dir`; scenarios the rules give another accuracy
/// sample count (a subset of the data set) are compared among themselves.
pub(super) fn check(
    context: &mut Context,
    benchmark_dir: &Path,
    rules: &Rules,
    scenarios: &[Scenario],
) {
    let mut groups: BTreeMap<u64, Vec<(PathBuf, String)>> = BTreeMap::new();
    for scenario in scenarios {
        let dir = benchmark_dir.join(scenario.as_str());
        let group = groups
            .entry(rules.accuracy_sample_count_for(*scenario))
            .or_default();
        group.extend(hashes_in(&dir));
    }
    for hashes in groups.values() {
        let Some((first_file, first)) = hashes.first() else {
            continue;
        };
        if let Some((file, other)) = hashes.iter().find(|(_, h)| h != first) {
            let message = format!(
                "the runs of {} used different data sets: sha256 {first} ({}) and {other} ({})",
                rules.benchmark,
                context.file(first_file).display(),
                context.file(file).display()
            );
            context.error(benchmark_dir, Rule::DatasetHash, message);
        }
    }
}

/// The hashes a scenario folder states: measurements.json's, and each detail log's.
fn hashes_in(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let measurements = dir.join("measurements.json");
    if let Some(digest) = std::fs::read_to_string(&measurements)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get(DATASET_SHA256_FIELD)?.as_str().map(String::from))
    {
        found.push((measurements, digest));
    }
    let mut logs = vec![
        dir.join("accuracy").join(DETAIL_LOG),
        performance_run(dir).join(DETAIL_LOG),
    ];
    for test in subdirectories(dir)
        .into_iter()
        .filter(|d| d.starts_with("TEST"))
    {
        logs.push(performance_run(&dir.join(&test)).join(DETAIL_LOG));
    }
    for log in logs {
        if let Some(digest) = DetailLog::read(&log)
            .ok()
            .and_then(|l| l.str(DATASET_SHA256).map(String::from))
        {
            found.push((log, digest));
        }
    }
    found
}
