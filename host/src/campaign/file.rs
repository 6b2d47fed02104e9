//! The campaign file: what a whole submission is made of, as the submitter writes it
//! (configs/campaign.example.toml documents every key). Paths are relative to the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::CampaignError;

/// A campaign file, read and its paths made absolute.
#[derive(Debug, Clone)]
pub struct CampaignFile {
    pub path: PathBuf,
    pub system: PathBuf,
    /// Runs, journal, tree and report.
    pub dir: PathBuf,
    pub round: Option<String>,
    pub division: Option<String>,
    pub engine: Option<String>,
    pub power: PowerChoice,
    pub benchmarks: Vec<BenchmarkEntry>,
}

/// How the performance runs are measured for power.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerChoice {
    None,
    /// Our meters (`run --power`), for development runs.
    Meters(Vec<String>),
    /// MLCommons' power client wraps each performance run: the command that starts it, without
    /// the `-w`, `-L`, `-o` and `-l` the campaign adds.
    PowerDev {
        client: String,
    },
}

/// One benchmark of the campaign.
#[derive(Debug, Clone)]
pub struct BenchmarkEntry {
    /// Its name in the plan, the journal and the run folders.
    pub name: String,
    /// A name in configs/benchmarks/ or a definition's path.
    pub benchmark: String,
    pub plugin: Option<String>,
    pub plugin_config: Option<PathBuf>,
    pub plugin_set: Vec<(String, String)>,
    pub user_conf: Option<PathBuf>,
    /// The scenarios asked for; None: the round's required ones for the system type.
    pub scenarios: Option<Vec<String>>,
    /// Scenarios beyond the required ones.
    pub optional: Vec<String>,
    pub tune: bool,
    /// Each run's plugin in a child process (`run --isolate process`): a crash of it fails
    /// the run, not the campaign.
    pub isolate: bool,
    /// TestSettings overrides (`run --set`).
    pub set: Vec<(String, String)>,
    /// measurements.json fields the runs cannot tell (`starting_weights_filename`, …), written
    /// into every scenario folder of the benchmark.
    pub measurements: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    system: PathBuf,
    dir: Option<PathBuf>,
    round: Option<String>,
    division: Option<String>,
    engine: Option<String>,
    power: Option<RawPower>,
    #[serde(default, rename = "benchmark")]
    benchmarks: Vec<RawBenchmark>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPower {
    #[serde(default)]
    meters: Vec<String>,
    power_dev_client: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBenchmark {
    name: String,
    benchmark: Option<String>,
    plugin: Option<String>,
    plugin_config: Option<PathBuf>,
    #[serde(default)]
    plugin_set: toml::Table,
    user_conf: Option<PathBuf>,
    scenarios: Option<Vec<String>>,
    #[serde(default)]
    optional: Vec<String>,
    #[serde(default)]
    tune: bool,
    #[serde(default)]
    isolate: bool,
    #[serde(default)]
    set: toml::Table,
    #[serde(default)]
    measurements: BTreeMap<String, String>,
}

impl CampaignFile {
    pub fn read(path: &Path) -> Result<CampaignFile, CampaignError> {
        let text = mlperf_submission::input_file::read_to_string(path).map_err(|e| {
            CampaignError::File {
                path: path.to_path_buf(),
                message: e.to_string(),
            }
        })?;
        CampaignFile::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<CampaignFile, CampaignError> {
        let invalid = |message: String| CampaignError::File {
            path: path.to_path_buf(),
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| invalid(e.message().to_string()))?;
        let path = std::path::absolute(path).map_err(|e| invalid(e.to_string()))?;
        let base = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let resolve = |p: &Path| base.join(p);
        let power = match raw.power {
            None => PowerChoice::None,
            Some(RawPower {
                meters,
                power_dev_client: None,
            }) if meters.is_empty() => PowerChoice::None,
            Some(RawPower {
                meters,
                power_dev_client: None,
            }) => PowerChoice::Meters(meters),
            Some(RawPower {
                meters,
                power_dev_client: Some(client),
            }) => {
                if !meters.is_empty() {
                    return Err(invalid(
                        "power: give meters (our meters, development runs) or power_dev_client (MLCommons' power client), not both".into(),
                    ));
                }
                if client.trim().is_empty() {
                    return Err(invalid("power.power_dev_client is empty".into()));
                }
                PowerChoice::PowerDev { client }
            }
        };
        if raw.benchmarks.is_empty() {
            return Err(invalid(
                "no [[benchmark]]: a campaign needs at least one".into(),
            ));
        }
        let mut benchmarks: Vec<BenchmarkEntry> = Vec::new();
        for raw in raw.benchmarks {
            if !is_folder_name(&raw.name) {
                return Err(invalid(format!(
                    "benchmark name {:?}: letters, digits, '.', '-' and '_' only (it names folders)",
                    raw.name
                )));
            }
            if benchmarks.iter().any(|b| b.name == raw.name) {
                return Err(invalid(format!("benchmark {:?} is given twice", raw.name)));
            }
            let key = |table: &str| format!("benchmark {}: {table}", raw.name);
            benchmarks.push(BenchmarkEntry {
                benchmark: raw.benchmark.clone().map_or_else(
                    || raw.name.clone(),
                    |b| {
                        // A path is relative to the campaign file; a name stays a name.
                        if b.ends_with(".toml") {
                            resolve(Path::new(&b)).display().to_string()
                        } else {
                            b
                        }
                    },
                ),
                plugin: raw.plugin.map(|p| {
                    if p.contains('/') {
                        resolve(Path::new(&p)).display().to_string()
                    } else {
                        p
                    }
                }),
                plugin_config: raw.plugin_config.as_deref().map(resolve),
                plugin_set: flatten(&raw.plugin_set, "")
                    .map_err(|e| invalid(format!("{}: {e}", key("plugin_set"))))?,
                user_conf: raw.user_conf.as_deref().map(resolve),
                scenarios: raw.scenarios,
                optional: raw.optional,
                tune: raw.tune,
                isolate: raw.isolate,
                set: flatten(&raw.set, "").map_err(|e| invalid(format!("{}: {e}", key("set"))))?,
                measurements: raw
                    .measurements
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect(),
                name: raw.name,
            });
        }
        let dir = match raw.dir {
            Some(dir) => resolve(&dir),
            None => path.with_extension(""),
        };
        Ok(CampaignFile {
            system: resolve(&raw.system),
            dir,
            round: raw.round,
            division: raw.division,
            engine: raw.engine,
            power,
            benchmarks,
            path,
        })
    }
}

fn is_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// A table as `KEY=VALUE` pairs (dotted keys for nested tables), values as `--set` and
/// `--plugin-set` take them.
fn flatten(table: &toml::Table, prefix: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for (key, value) in table {
        let key = format!("{prefix}{key}");
        let text = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Table(inner) => {
                pairs.extend(flatten(inner, &format!("{key}."))?);
                continue;
            }
            other => return Err(format!("{key} = {other}: a string, number or boolean")),
        };
        pairs.push((key, text));
    }
    Ok(pairs)
}

/// The key/value pairs by key, for lookups.
pub fn as_map(pairs: &[(String, String)]) -> BTreeMap<&str, &str> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CampaignFile, CampaignError> {
        CampaignFile::parse(text, Path::new("/tmp/c/edge.toml"))
    }

    #[test]
    fn paths_are_relative_to_the_file_and_tables_become_pairs() {
        let file = parse(
            r#"
system = "systems/box.json"
[power]
meters = ["sim:200"]
[[benchmark]]
name = "fmnist"
plugin = "plugins/libx.so"
plugin_set = { workers = 2, nested = { a = "b" } }
set = { min_duration_ms = 1000 }
"#,
        )
        .unwrap();
        assert_eq!(file.system, Path::new("/tmp/c/systems/box.json"));
        assert_eq!(file.dir, Path::new("/tmp/c/edge"));
        assert_eq!(file.power, PowerChoice::Meters(vec!["sim:200".into()]));
        let bench = &file.benchmarks[0];
        assert_eq!(bench.benchmark, "fmnist");
        assert_eq!(bench.plugin.as_deref(), Some("/tmp/c/plugins/libx.so"));
        assert_eq!(
            bench.plugin_set,
            vec![
                ("nested.a".to_string(), "b".to_string()),
                ("workers".to_string(), "2".to_string())
            ]
        );
        assert_eq!(bench.set, vec![("min_duration_ms".into(), "1000".into())]);
    }

    #[test]
    fn the_example_in_configs_reads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/campaign.example.toml");
        let file = CampaignFile::read(&path).unwrap();
        assert_eq!(file.benchmarks.len(), 1);
        let fmnist = &file.benchmarks[0];
        assert_eq!((fmnist.name.as_str(), fmnist.tune), ("fmnist", true));
        assert_eq!(fmnist.optional, vec!["Offline".to_string()]);
        assert!(file.dir.ends_with("campaigns/my-edge-box"));
        assert_eq!(file.power, PowerChoice::None);
    }

    #[test]
    fn mistakes_name_the_key() {
        let unknown = parse("system = \"s.json\"\nsytem = 1\n[[benchmark]]\nname = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("sytem"), "{unknown}");
        let twice = parse(
            "system = \"s.json\"\n[[benchmark]]\nname = \"a\"\n[[benchmark]]\nname = \"a\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(twice.contains("\"a\" is given twice"), "{twice}");
        let none = parse("system = \"s.json\"\n").unwrap_err().to_string();
        assert!(none.contains("[[benchmark]]"), "{none}");
        let both = parse("system = \"s.json\"\n[power]\nmeters = [\"sim:1\"]\npower_dev_client = \"c\"\n[[benchmark]]\nname = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(both.contains("not both"), "{both}");
        let path = parse("system = \"s.json\"\n[[benchmark]]\nname = \"../x\"\n")
            .unwrap_err()
            .to_string();
        assert!(path.contains("names folders"), "{path}");
    }
}
