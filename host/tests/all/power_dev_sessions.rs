//! Sessions of MLCommons' power workflow recorded on this machine (host/tests/data/power_dev,
//! its README says how): `power check` gives the verdicts power-dev's own `check.py` gave on
//! each session and on mutated copies, `submit` files each session whole, and `check` reports
//! what power-dev's checks report, a simulated analyzer as an error unless `--allow-short`.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use support::{copy_dir, describe, TempDir};

const SESSIONS: [&str; 3] = ["offline", "singlestream", "two_analyzers"];

fn data() -> PathBuf {
    support::repo().join("host/tests/data/power_dev")
}

/// The session folder recorded under `name/` (the one folder there the client wrote).
fn session(name: &str) -> PathBuf {
    let dir = data().join(name);
    let mut sessions: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("run_1").is_dir())
        .collect();
    assert_eq!(sessions.len(), 1, "{}: {sessions:?}", dir.display());
    sessions.remove(0)
}

fn mlperf_host(args: &[&str]) -> Output {
    support::mlperf_host(&support::repo(), args)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// One check's verdict as printed: its name, whether it passed (`[x]`), and its reason.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Verdict {
    check: String,
    passed: bool,
    reason: Option<String>,
}

/// The verdicts of a check.py log (its `INFO:main:`/`ERROR:main:` prefixes dropped) or of
/// `power check`: `[x] name` / `[ ] name`, each reason on the lines beneath.
fn verdicts(text: &str) -> Vec<Verdict> {
    let mut found: Vec<Verdict> = Vec::new();
    let mut reason: Vec<String> = Vec::new();
    let close = |found: &mut Vec<Verdict>, reason: &mut Vec<String>| {
        if let Some(last) = found.last_mut() {
            let text = reason.join("\n").trim().to_string();
            last.reason = (!text.is_empty()).then_some(text);
        }
        reason.clear();
    };
    for line in text.lines() {
        let line = ["INFO:main:", "ERROR:main:", "WARNING:main:"]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
            .unwrap_or(line);
        if line.starts_with("ERROR: Not all")
            || line.starts_with("All checks passed")
            || line.starts_with("Not all checks passed")
            || line.starts_with("exit code:")
            || line.starts_with("Note: ")
        {
            break;
        }
        let record = line
            .strip_prefix("[x] ")
            .map(|name| (true, name))
            .or_else(|| line.strip_prefix("[ ] ").map(|name| (false, name)));
        match record {
            Some((passed, name)) => {
                close(&mut found, &mut reason);
                found.push(Verdict {
                    check: name.to_string(),
                    passed,
                    reason: None,
                });
            }
            None => reason.push(line.strip_prefix('\t').unwrap_or(line).to_string()),
        }
    }
    close(&mut found, &mut reason);
    found
}

/// `power check` on `dir`, its verdicts with the session's path written as `SESSION`.
fn power_check(dir: &Path) -> (Option<i32>, Vec<Verdict>) {
    let output = mlperf_host(&["power", "check", s(dir)]);
    let text = support::text(&output.stdout).replace(s(dir), "SESSION");
    let found = verdicts(&text);
    assert_eq!(found.len(), 11, "{}", describe(&output));
    (output.status.code(), found)
}

/// The two lists agree check for check: the same verdict, and check.py's reason word for
/// word, except where `power check` says more (which sources differ).
fn assert_agrees(ours: &[Verdict], check_py: &[Verdict], context: &str) {
    assert_eq!(ours.len(), check_py.len(), "{context}: {ours:#?}");
    for (ours, theirs) in ours.iter().zip(check_py) {
        assert_eq!(
            (&ours.check, ours.passed),
            (&theirs.check, theirs.passed),
            "{context}: {ours:#?}\ncheck.py: {theirs:#?}"
        );
        if ours.check.contains("sources checksum") && !ours.passed {
            let reason = ours.reason.as_deref().unwrap_or("");
            assert!(
                reason.contains("not those of a power-dev release"),
                "{reason}"
            );
            continue;
        }
        assert_eq!(ours.reason, theirs.reason, "{context}: {}", ours.check);
    }
}

#[test]
fn power_check_agrees_with_check_py_on_every_recorded_session() {
    for name in SESSIONS {
        let dir = session(name);
        let recorded = std::fs::read_to_string(data().join(name).join("check_py.txt")).unwrap();
        let expected = verdicts(&recorded);
        assert_eq!(expected.len(), 11, "{recorded}");
        let (code, ours) = power_check(&dir);
        assert_agrees(&ours, &expected, name);
        let passed = recorded.contains("exit code: 0");
        assert_eq!(code, Some(if passed { 0 } else { 3 }), "{name}");
    }
}

/// Applies one of mutations.json's edits to the session copy in `dir`.
fn mutate(dir: &Path, mutation: &serde_json::Value) {
    if let Some(file) = mutation["remove"].as_str() {
        std::fs::remove_file(dir.join(file)).unwrap();
        return;
    }
    if let Some(scale) = mutation.get("scale_watts") {
        scale_watts(dir, scale);
        return;
    }
    let (change, add) = match (mutation.get("edit"), mutation.get("add")) {
        (Some(edit), None) => (edit, false),
        (None, Some(add)) => (add, true),
        _ => panic!("unknown mutation {mutation}"),
    };
    let path = dir.join(change["file"].as_str().unwrap());
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let pointer = change["pointer"].as_str().unwrap();
    if add {
        let target = json.pointer_mut(pointer).unwrap();
        *target = serde_json::json!(target.as_f64().unwrap() + change["delta"].as_f64().unwrap());
    } else {
        // The last token may name a member not there yet (server.json has no `debug`).
        let (parent, last) = pointer.rsplit_once('/').unwrap();
        let key = last.replace("~1", "/").replace("~0", "~");
        let object = json.pointer_mut(parent).unwrap().as_object_mut().unwrap();
        object.insert(key, change["value"].clone());
    }
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
}

/// Every sample's watts in an spl.txt times a factor (as record_check_py.py writes them), the
/// file's new SHA-1 recorded where the server recorded the old.
fn scale_watts(dir: &Path, scale: &serde_json::Value) {
    use sha1::{Digest, Sha1};
    let file = scale["file"].as_str().unwrap();
    let factor = scale["factor"].as_f64().unwrap();
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let scaled: Vec<String> = text
        .split('\n')
        .map(|line| {
            let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
            if line.starts_with("Time") && fields.len() > 3 {
                let watts: f64 = fields[3].parse().unwrap();
                fields[3] = format!("{:.6}", watts * factor);
            }
            fields.join(",")
        })
        .collect();
    std::fs::write(&path, scaled.join("\n")).unwrap();
    let digest: String = Sha1::digest(std::fs::read(&path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let descriptor = dir.join(scale["rehash"].as_str().unwrap());
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&descriptor).unwrap()).unwrap();
    json["results"][file] = serde_json::Value::String(digest);
    std::fs::write(&descriptor, serde_json::to_string_pretty(&json).unwrap()).unwrap();
}

#[test]
fn each_mutation_of_a_session_fails_the_check_it_fails_in_check_py() {
    let mutations: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(data().join("mutations.json")).unwrap())
            .unwrap();
    assert_eq!(mutations.len(), 7);
    let baseline = verdicts(&std::fs::read_to_string(data().join("offline/check_py.txt")).unwrap());
    for mutation in &mutations {
        let name = mutation["name"].as_str().unwrap();
        let temp = TempDir::new();
        let dir = temp.path().join("session");
        copy_dir(&session("offline"), &dir);
        mutate(&dir, mutation);
        let recorded =
            std::fs::read_to_string(data().join("offline/mutations").join(format!("{name}.txt")))
                .unwrap();
        let expected = verdicts(&recorded);
        let (code, ours) = power_check(&dir);
        assert_agrees(&ours, &expected, name);
        assert_eq!(code, Some(3), "{name}");
        // Exactly one check more fails than on the session as recorded.
        let newly_failed: Vec<&str> = ours
            .iter()
            .zip(&baseline)
            .filter(|(now, before)| before.passed && !now.passed)
            .map(|(now, _)| now.check.as_str())
            .collect();
        assert_eq!(newly_failed.len(), 1, "{name}: {newly_failed:?}");
    }
}

fn system_description(dir: &Path) -> PathBuf {
    support::system_description(dir, "sut1", "acme")
}

/// `submit --benchmark resnet50` of the sessions into `tree`: written, and failing its check
/// (short runs, no accuracy run, a simulated analyzer).
fn submit_as_resnet50(system_json: &Path, tree: &Path, sessions: &[PathBuf]) {
    let mut args = vec![
        "submit",
        "--benchmark",
        "resnet50",
        "--system",
        s(system_json),
        "--out",
        s(tree),
    ];
    args.extend(sessions.iter().map(|dir| s(dir)));
    let output = mlperf_host(&args);
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
}

/// `check --json` of `tree`: each power finding as (severity, rule, file relative to the
/// scenario folder `scenario`).
fn power_findings(
    tree: &Path,
    scenario: &str,
    allow_short: bool,
) -> BTreeSet<(String, String, String)> {
    let (_, findings) = support::check_json(tree, allow_short);
    let prefix = format!("closed/acme/results/sut1/resnet50/{scenario}/");
    findings
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("power-"))
        .filter_map(|f| {
            let file = f["file"].as_str().unwrap().strip_prefix(&prefix)?;
            Some((
                f["severity"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                file.to_string(),
            ))
        })
        .collect()
}

fn set(items: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn sessions_are_filed_whole_and_checked_as_check_py_checks_them() {
    let temp = TempDir::new();
    let system_json = system_description(temp.path());
    let tree = temp.path().join("tree");
    // Two sessions at once: one given as its folder, one as its run_1/.
    let offline = session("offline");
    let single_stream = session("singlestream");
    let submit = |extra: &[&str]| {
        let mut args = vec!["submit", "--system", s(&system_json), "--out", s(&tree)];
        args.extend_from_slice(extra);
        args.push(s(&offline));
        let run_1 = single_stream.join("run_1");
        args.push(s(&run_1));
        mlperf_host(&args)
    };
    // The official LoadGen's logs do not name the model: the error says which flag to add.
    let output = submit(&[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(
        support::text(&output.stderr).contains("give --benchmark"),
        "{}",
        describe(&output)
    );
    let output = submit(&["--benchmark", "resnet50"]);
    // The tree is written; its check fails (short runs, no accuracy run, the simulator).
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    for (scenario, session) in [("Offline", &offline), ("SingleStream", &single_stream)] {
        let filed = tree
            .join("closed/acme/results/sut1/resnet50")
            .join(scenario)
            .join("performance");
        for file in [
            "run_1/mlperf_log_detail.txt",
            "run_1/mlperf_log_summary.txt",
            "run_1/spl.txt",
            "ranging/mlperf_log_detail.txt",
            "ranging/mlperf_log_summary.txt",
            "ranging/spl.txt",
            "power/client.json",
            "power/client.log",
            "power/ptd_logs.txt",
            "power/server.json",
            "power/server.log",
        ] {
            assert_eq!(
                std::fs::read(filed.join(file)).unwrap(),
                std::fs::read(session.join(file)).unwrap(),
                "{scenario} {file}"
            );
        }
        // The checker's file list for run_1 has no place for ptd_out.txt.
        assert!(session.join("run_1/ptd_out.txt").is_file());
        assert!(!filed.join("run_1/ptd_out.txt").exists());
        // The checks check.py fails on a simulated analyzer, and the simulation itself;
        // the first sample after power_begin is a warning in both runs.
        let expected = set(&[
            (
                "error",
                "power-ptd-messages",
                "performance/power/server.json",
            ),
            ("error", "power-ptd-logs", "performance/power/ptd_logs.txt"),
            ("error", "power-ptd-config", "performance/power/server.json"),
            ("error", "power-simulated", "performance/power/server.json"),
            ("warning", "power-window", "performance/run_1/spl.txt"),
            ("warning", "power-window", "performance/ranging/spl.txt"),
        ]);
        assert_eq!(
            power_findings(&tree, scenario, false),
            expected,
            "{scenario}"
        );
        let accepted: BTreeSet<_> = expected
            .into_iter()
            .map(|(_, rule, file)| ("warning".to_string(), rule, file))
            .collect();
        assert_eq!(
            power_findings(&tree, scenario, true),
            accepted,
            "{scenario}"
        );
    }
    // A file the official checker's lists reject is an error.
    let run_1 = tree.join("closed/acme/results/sut1/resnet50/Offline/performance/run_1");
    std::fs::copy(offline.join("run_1/ptd_out.txt"), run_1.join("ptd_out.txt")).unwrap();
    assert!(power_findings(&tree, "Offline", true).contains(&(
        "error".to_string(),
        "power-files".to_string(),
        "performance/run_1/ptd_out.txt".to_string()
    )));
}

#[test]
fn power_report_names_a_simulated_analyzer_of_a_session() {
    let dir = session("offline");
    let output = mlperf_host(&["power", "report", "--json", s(&dir.join("run_1"))]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    assert_eq!(report["simulated"], true, "{report:#}");
    assert_eq!(report["mlperf_power"], false, "{report:#}");
    assert!(
        report["ranging"].is_array(),
        "the session's ranging run: {report:#}"
    );
    let identity = report["sources"][0]["identity"].as_str().unwrap();
    assert!(identity.contains("Dummy"), "{identity}");
    let output = mlperf_host(&["power", "report", s(&dir)]);
    let text = support::text(&output.stdout);
    assert!(text.contains("SIMULATED, not a measurement"), "{text}");
    assert!(!text.contains("PTDaemon analyzer\n"), "{text}");
    // The session folder reports as its testing run, with its power and the power chart.
    let temp = TempDir::new();
    let html = temp.path().join("report.html");
    support::assert_ok(&mlperf_host(&["report", "--out", s(&html), s(&dir)]));
    let page = std::fs::read_to_string(&html).unwrap();
    let watts = report["sources"][0]["metric"]["power_metric"]
        .as_f64()
        .unwrap();
    assert!(
        page.contains(&format!("<tr><th>Power</th><td>{watts:.3} Watts</td></tr>")),
        "{watts}"
    );
    assert!(page.contains("<svg"), "the power chart");
}

/// The official checker's power figures (official_checker/power_metrics.txt, its README says
/// how they were made): (tree, scenario) → (power_metric, avg_power_efficiency).
fn official_figures() -> Vec<(String, String, f64, f64)> {
    let text = std::fs::read_to_string(data().join("official_checker/power_metrics.txt")).unwrap();
    let (mut tree, mut scenario, mut metric) = (String::new(), String::new(), None);
    let mut figures = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("tree=ROOT/") {
            tree = rest.split_whitespace().next().unwrap().to_string();
        } else if let Some(rest) = line.strip_prefix("result ") {
            scenario = rest.rsplit('/').next().unwrap().to_string();
        } else if let Some(value) = line.strip_prefix("#   power_metric         = ") {
            metric = Some(value.trim().parse::<f64>().unwrap());
        } else if let Some(value) = line.strip_prefix("#   avg_power_efficiency = ") {
            let entry = (
                tree.clone(),
                scenario.clone(),
                metric.take().unwrap(),
                value.trim().parse::<f64>().unwrap(),
            );
            if !figures.contains(&entry) {
                figures.push(entry);
            }
        }
    }
    figures
}

fn close(ours: f64, official: f64) -> bool {
    (ours - official).abs() <= 1e-12 * official.abs()
}

/// Each session's first analyzer sample follows power_begin (the workload starts issuing
/// within a second of `Go`): the metric is still the official checker's, to the last digits,
/// for one analyzer and for two (spl.txt's summed watts).
#[test]
fn the_power_of_each_session_is_the_official_checkers() {
    let figures = official_figures();
    assert_eq!(figures.len(), 3, "{figures:?}");
    let temp = TempDir::new();
    let system_json = system_description(temp.path());
    for (tree_name, sessions) in [
        ("tree-a", vec![session("offline"), session("singlestream")]),
        ("tree-b", vec![session("two_analyzers")]),
    ] {
        let tree = temp.path().join(tree_name);
        submit_as_resnet50(&system_json, &tree, &sessions);
        let output = mlperf_host(&["results", "--format", "json", s(&tree)]);
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
        for (_, scenario, metric, efficiency) in figures.iter().filter(|f| f.0 == tree_name) {
            let row = rows
                .iter()
                .find(|r| r["scenario"] == scenario.as_str())
                .unwrap_or_else(|| panic!("{tree_name} {scenario}: {rows:#?}"));
            assert_eq!(row["power_simulated"], true, "{row}");
            let power = row["power"].as_f64().unwrap();
            assert!(
                close(power, *metric),
                "{tree_name} {scenario}: {power} vs {metric}"
            );
            let performance = tree
                .join("closed/acme/results/sut1/resnet50")
                .join(scenario)
                .join("performance");
            let output = mlperf_host(&["power", "report", "--json", s(&performance)]);
            let report: serde_json::Value = serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
            let ours = report["sources"][0]["metric"]["efficiency"]
                .as_f64()
                .unwrap();
            assert!(
                close(ours, *efficiency),
                "{tree_name} {scenario}: {ours} vs {efficiency}"
            );
            // The late first sample is said, not held against the result.
            assert_eq!(report["valid"], true, "{report:#}");
            let notes = report["sources"][0]["notes"].to_string();
            assert!(notes.contains("first sample"), "{notes}");
        }
    }
}

/// The v6.1 checker's nameplate rule for a system with power-dev results: the description's
/// system_power_capacity, else `<system>_power.yaml` (which submit files from beside the
/// description), else a warning.
#[test]
fn a_power_system_needs_its_nameplate_power() {
    let temp = TempDir::new();
    let system_json = system_description(temp.path());
    let tree = temp.path().join("tree");
    submit_as_resnet50(&system_json, &tree, &[session("offline")]);
    let systems = tree.join("closed/acme/systems");
    let yaml = systems.join("sut1_power.yaml");
    assert!(
        yaml.is_file(),
        "the draft YAML is filed beside the description"
    );
    let nameplate = |tree: &Path| -> BTreeSet<(String, String)> {
        support::check_json(tree, true)
            .1
            .iter()
            .filter(|f| f["rule"] == "nameplate-power")
            .map(|f| {
                let file = f["file"].as_str().unwrap();
                let name = file.rsplit('/').next().unwrap().to_string();
                (f["severity"].as_str().unwrap().to_string(), name)
            })
            .collect()
    };
    // system_power_capacity given (filled in): the YAML is not read.
    assert_eq!(nameplate(&tree), BTreeSet::new());
    let description = systems.join("sut1.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&description).unwrap()).unwrap();
    json.as_object_mut()
        .unwrap()
        .remove("system_power_capacity");
    std::fs::write(&description, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    // The draft YAML still to fill in: an error for each value.
    let found = nameplate(&tree);
    assert_eq!(
        found,
        BTreeSet::from([("error".to_string(), "sut1_power.yaml".to_string())])
    );
    let filled = std::fs::read_to_string(&yaml)
        .unwrap()
        .lines()
        .map(|line| match line.split_once(": \"FILL IN") {
            Some((key, _)) => format!("{key}: 1200"),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&yaml, filled).unwrap();
    assert_eq!(nameplate(&tree), BTreeSet::new());
    std::fs::remove_file(&yaml).unwrap();
    assert_eq!(
        nameplate(&tree),
        BTreeSet::from([("warning".to_string(), "sut1.json".to_string())])
    );
}
