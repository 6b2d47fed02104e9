//! `mlperf-host plugins test`: a conformance suite for any SUT plugin, C or Rust. Each check
//! is a real, short LoadGen run (or a load, or a create and destroy) through the same session
//! a benchmark uses, judged by what the engine saw: every sample completed exactly once, no
//! failure, `destroy` returning, the accuracy log covering the data set once, token order.
//! With isolation (the default of the command) a plugin that crashes or hangs fails its check
//! with the cause, and the suite goes on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mlperf_loadgen::{AbandonHook, TestMode, TestScenario, TestSettings};

use crate::logs::ACCURACY_LOG;
use crate::plugin::isolated::Isolation;
use crate::plugin::{self, Instance, Plugin};
use crate::session::{
    EnginePlan, LogOptions, Observer, PluginPlan, RunOutcome, RunPlan, SamplePlacement, SamplePlan,
    SampleSetCalls, SampleTiming, Session, TestOutcome,
};

/// Samples in the data set the runs draw from (all of them in an accuracy run).
const SAMPLES: usize = 64;

/// What to test, and how.
pub struct Suite {
    /// A plugin library path, folder or name.
    pub spec: String,
    /// The configuration (TOML text) each instance is created with.
    pub config: String,
    /// Run each test's plugin in a process of its own.
    pub isolation: Option<Isolation>,
    /// A `.npy` data set for plugins that read sample data; index-only samples without one.
    pub dataset: Option<PathBuf>,
    /// How long a call, a drain or a `destroy` may take before its check fails.
    pub timeout: Duration,
    /// The config makes the plugin produce tokens: check a token run.
    pub tokens: bool,
    /// Where the runs' logs go.
    pub work_dir: PathBuf,
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail(String),
    /// Not applicable to this plugin.
    Skip(String),
}

/// What loading the plugin tells the checks.
struct Loaded {
    capabilities: Vec<&'static str>,
    /// It has `load_samples` or `unload_samples` (ABI 1.3).
    sample_set_calls: bool,
    /// It offers memory for the loaded samples (ABI 1.4).
    sample_memory: bool,
    /// The devices it lists for the config (ABI 1.4), or why they could not be listed.
    devices: Result<usize, String>,
}

/// How a run differs from a plain one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Plain,
    /// What a host of ABI 1.`minor` hands over.
    OlderHost(u32),
    /// One instance per listed device (ABI 1.4).
    Devices,
    /// The loaded samples kept in the host's memory, though the plugin offers its own.
    HostMemory,
}

impl Variant {
    fn folder_suffix(self) -> String {
        match self {
            Variant::Plain => String::new(),
            Variant::OlderHost(minor) => format!("-host-1.{minor}"),
            Variant::Devices => "-devices".into(),
            Variant::HostMemory => "-host-memory".into(),
        }
    }
}

/// A named check and its verdict.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub verdict: Verdict,
}

impl Suite {
    /// Runs every check, handing each to `report` as it is decided; returns them all.
    pub fn run(&self, mut report: impl FnMut(&Check)) -> Vec<Check> {
        let mut checks = Vec::new();
        let mut decide = |name: String, verdict: Verdict| {
            let check = Check { name, verdict };
            report(&check);
            checks.push(check);
        };
        let Loaded {
            capabilities,
            sample_set_calls,
            sample_memory,
            devices,
        } = match self.load() {
            Ok((summary, loaded)) => {
                decide(format!("loads ({summary})"), Verdict::Pass);
                loaded
            }
            Err(why) => {
                decide("loads".into(), Verdict::Fail(why));
                return checks;
            }
        };
        decide(
            "creates an instance with its config, and destroy returns".into(),
            self.create_and_destroy(),
        );
        let mut sets = SetTally::default();
        for scenario in TestScenario::ALL {
            for mode in [TestMode::PerformanceOnly, TestMode::AccuracyOnly] {
                let name = format!(
                    "{scenario:?} {}: every sample completes exactly once",
                    mode_name(mode)
                );
                let (verdict, calls) = self.short_run(scenario, mode, false);
                sets.add(calls);
                decide(name, verdict);
            }
        }
        decide(
            "load_samples and unload_samples: each loaded set handed over, then released".into(),
            sets.verdict(sample_set_calls),
        );
        decide(
            "with a host of ABI 1.2: reads nothing past the host table's struct_size (no run description)".into(),
            self.as_older_host(2),
        );
        decide(
            "with a host of ABI 1.3: reads nothing past the run description's struct_size (no device)".into(),
            self.as_older_host(3),
        );
        let name = "devices: an instance per listed device, each given queries".to_string();
        match devices {
            Err(why) => decide(name, Verdict::Fail(why)),
            Ok(0) => decide(name, Verdict::Skip("it lists none; ABI 1.4".into())),
            Ok(listed) => decide(name, self.over_devices(listed)),
        }
        let name = "sample memory: the same results with the samples in the plugin's memory as in the host's".to_string();
        match (sample_memory, &self.dataset) {
            (false, _) => decide(
                name,
                Verdict::Skip("it offers none (allocate_samples, ABI 1.4)".into()),
            ),
            (true, None) => decide(
                name,
                Verdict::Skip("needs samples with data (--dataset)".into()),
            ),
            (true, Some(_)) => decide(name, self.same_results_in_host_memory()),
        }
        let name = "Server with tokens: a first token before each completion".to_string();
        match (self.tokens, capabilities.contains(&"tokens")) {
            (true, true) => decide(
                name,
                self.short_run(TestScenario::Server, TestMode::PerformanceOnly, true)
                    .0,
            ),
            (true, false) => decide(name, Verdict::Fail("no tokens capability".into())),
            (false, _) => decide(
                name,
                Verdict::Skip("--tokens, with a config that makes the plugin report tokens".into()),
            ),
        }
        checks
    }

    /// Loads the library and checks its table: a summary, and what the checks need.
    fn load(&self) -> Result<(String, Loaded), String> {
        let path = plugin::resolve(&self.spec).map_err(|e| crate::error_chain(&e))?;
        let plugin = Plugin::open(&path).map_err(|e| crate::error_chain(&e))?;
        let info = &plugin.info;
        if info.kind != "sut" {
            return Err(format!(
                "a {} plugin, not a system-under-test backend",
                info.kind
            ));
        }
        let summary = format!(
            "{} {}, ABI {}, capabilities: {}",
            info.name,
            info.version,
            info.abi,
            match info.capabilities.is_empty() {
                true => "none".to_string(),
                false => info.capabilities.join(", "),
            }
        );
        let devices = plugin
            .devices(&self.config)
            .map(|listed| listed.len())
            .map_err(|e| crate::error_chain(&e));
        let loaded = Loaded {
            capabilities: info.capabilities.clone(),
            sample_set_calls: plugin.has_sample_set_calls(),
            sample_memory: plugin.offers_sample_memory(),
            devices,
        };
        Ok((summary, loaded))
    }

    fn create_and_destroy(&self) -> Verdict {
        let instance = match Instance::open(
            &self.spec,
            &self.config,
            self.dataset.is_some(),
            self.isolation.as_ref(),
            None,
        ) {
            Ok(instance) => instance,
            Err(error) => return Verdict::Fail(error.to_string()),
        };
        let destroyed = instance.destroy_within(self.timeout);
        match (destroyed.returned, destroyed.late_callbacks) {
            (false, _) => {
                Verdict::Fail(format!("destroy has not returned after {:?}", self.timeout))
            }
            (true, 0) => Verdict::Pass,
            (true, late) => Verdict::Fail(late_callbacks(late)),
        }
    }

    /// A SingleStream run with what a host of ABI 1.`minor` hands over: a 1.2 host table,
    /// past whose end `run` points nowhere, or a 1.3 run description, past whose end `device`
    /// does. A plugin that reads past a struct_size faults. Only isolated, where that fault
    /// ends the plugin's process and not the suite.
    fn as_older_host(&self, minor: u32) -> Verdict {
        if self.isolation.is_none() {
            return Verdict::Skip(
                "needs the plugin in a process of its own (drop --isolate none)".into(),
            );
        }
        match self.run_and_judge(
            TestScenario::SingleStream,
            TestMode::PerformanceOnly,
            false,
            Variant::OlderHost(minor),
        ) {
            Ok(_) => Verdict::Pass,
            Err(verdict) => verdict,
        }
    }

    /// A short run of `scenario` in `mode`, judged by what the engine saw; the sample sets
    /// handed to the plugin in it.
    fn short_run(
        &self,
        scenario: TestScenario,
        mode: TestMode,
        tokens: bool,
    ) -> (Verdict, Option<SampleSetCalls>) {
        match self.run_and_judge(scenario, mode, tokens, Variant::Plain) {
            Ok(outcome) => (Verdict::Pass, Some(outcome.sample_sets)),
            Err(verdict) => (verdict, None),
        }
    }

    fn run_and_judge(
        &self,
        scenario: TestScenario,
        mode: TestMode,
        tokens: bool,
        variant: Variant,
    ) -> Result<RunOutcome, Verdict> {
        let out = self.work_dir.join(format!(
            "{scenario:?}-{}{}{}",
            mode_name(mode),
            if tokens { "-tokens" } else { "" },
            variant.folder_suffix()
        ));
        let plan = self.plan(short_settings(scenario, mode, tokens), &out, variant);
        let outcome = match Session::new(&mut Quiet).run(&plan) {
            Ok(outcome) => outcome,
            Err(error) => return Err(Verdict::Fail(crate::error_chain(&error))),
        };
        let TestOutcome::Native(result) = &outcome.result else {
            return Err(Verdict::Fail("not a native engine result".into()));
        };
        if let Some(failure) = outcome.result.failure() {
            return Err(Verdict::Fail(failure));
        }
        let never: u64 = result.series.iter().map(|s| s.never_completed).sum();
        if never > 0 {
            return Err(Verdict::Fail(format!(
                "{never} samples never completed (nor after flush_queries; waited {:?})",
                self.timeout
            )));
        }
        let refused = result.anomalies;
        if refused.duplicate > 0 || refused.unknown > 0 {
            return Err(Verdict::Fail(format!(
                "{} completions of samples already completed, {} of ids never issued",
                refused.duplicate, refused.unknown
            )));
        }
        if outcome.destroy_stalled {
            return Err(Verdict::Fail(format!(
                "destroy has not returned after {:?}",
                self.timeout
            )));
        }
        if outcome.late_callbacks > 0 {
            return Err(Verdict::Fail(late_callbacks(outcome.late_callbacks)));
        }
        if let Some(error) = result
            .diagnostics
            .iter()
            .find(|d| d.severity == mlperf_loadgen::Severity::Error)
        {
            return Err(Verdict::Fail(error.message.clone()));
        }
        if mode == TestMode::AccuracyOnly {
            let total = result.qsl_total_sample_count;
            // MultiStream fills its last query up with samples again, as LoadGen does.
            let padded_to = match scenario {
                TestScenario::MultiStream => result.effective.samples_per_query as usize,
                _ => 1,
            };
            let log = out.join(ACCURACY_LOG);
            if let Err(why) = covers_the_data_set_once(&log, total, padded_to) {
                return Err(Verdict::Fail(why));
            }
        }
        Ok(outcome)
    }

    /// An Offline run over every device the plugin lists: judged as any run, and each device
    /// given its share of the query.
    fn over_devices(&self, listed: usize) -> Verdict {
        let outcome = match self.run_and_judge(
            TestScenario::Offline,
            TestMode::PerformanceOnly,
            false,
            Variant::Devices,
        ) {
            Ok(outcome) => outcome,
            Err(verdict) => return verdict,
        };
        let shares = &outcome.device_shares;
        if shares.len() != listed {
            return Verdict::Fail(format!(
                "{} instances ran for the {listed} devices listed",
                shares.len()
            ));
        }
        match shares.iter().find(|share| share.samples == 0) {
            Some(idle) => Verdict::Fail(format!(
                "device {} ({}) was given no samples",
                idle.ordinal, idle.name
            )),
            None => Verdict::Pass,
        }
    }

    /// An Offline accuracy run with the samples in the plugin's memory, and one with them in
    /// the host's: the same response for every sample.
    fn same_results_in_host_memory(&self) -> Verdict {
        let mut logs = Vec::new();
        for variant in [Variant::Plain, Variant::HostMemory] {
            if let Err(verdict) = self.run_and_judge(
                TestScenario::Offline,
                TestMode::AccuracyOnly,
                false,
                variant,
            ) {
                return verdict;
            }
            let out = self
                .work_dir
                .join(format!("Offline-accuracy{}", variant.folder_suffix()));
            match responses(&out.join(ACCURACY_LOG)) {
                Ok(responses) => logs.push(responses),
                Err(why) => return Verdict::Fail(why),
            }
        }
        let (own, host) = (&logs[0], &logs[1]);
        match own.iter().zip(host).find(|(a, b)| a != b) {
            Some(((index, data), (_, host_data))) => Verdict::Fail(format!(
                "sample {index}: {data} from the plugin's memory, {host_data} from the host's"
            )),
            None if own.len() != host.len() => Verdict::Fail(format!(
                "{} responses from the plugin's memory, {} from the host's",
                own.len(),
                host.len()
            )),
            None => Verdict::Pass,
        }
    }

    fn plan(&self, settings: TestSettings, out: &Path, variant: Variant) -> RunPlan {
        let samples = match &self.dataset {
            Some(path) => SamplePlan::dataset(path.clone()),
            None => SamplePlan::Indices {
                total: SAMPLES,
                performance: SAMPLES,
            },
        };
        RunPlan {
            model: "conformance".into(),
            model_named: true,
            benchmark: None,
            settings,
            engine: EnginePlan::Native,
            audit_config: None,
            plugin: PluginPlan {
                spec: self.spec.clone(),
                config: self.config.clone(),
                context: None,
                isolation: self.isolation.clone(),
                logged_outputs: Vec::new(),
                postprocess: None,
                batching: Default::default(),
                as_host_of_1_2: variant == Variant::OlderHost(2),
                as_host_of_1_3: variant == Variant::OlderHost(3),
                devices: (variant == Variant::Devices).then_some(plugin::DeviceSelection::All),
                sample_memory: match variant {
                    Variant::HostMemory => SamplePlacement::Host,
                    _ => SamplePlacement::Plugin,
                },
            },
            samples,
            power: Vec::new(),
            out: out.to_path_buf(),
            results_dir: out.to_path_buf(),
            log: LogOptions {
                trace: false,
                sample_timing: SampleTiming::default(),
                drain_timeout: self.timeout,
                issue_spin: Duration::ZERO,
                stall_timeout: self.timeout,
            },
            on_abandoned: None::<AbandonHook>,
        }
    }
}

/// The sample sets of the runs that passed.
#[derive(Default)]
struct SetTally {
    runs: u64,
    loads: u64,
    /// A run whose loads and unloads differ: its calls.
    unpaired: Option<SampleSetCalls>,
    unload_failure: Option<String>,
}

impl SetTally {
    fn add(&mut self, calls: Option<SampleSetCalls>) {
        let Some(calls) = calls else {
            return;
        };
        self.runs += 1;
        self.loads += calls.loads;
        if let Some(failure) = &calls.unload_failure {
            self.unload_failure.get_or_insert(failure.clone());
        }
        if calls.loads != calls.unloads || calls.loads == 0 {
            self.unpaired.get_or_insert(calls);
        }
    }

    /// `has_calls`: the plugin's table has load_samples or unload_samples.
    fn verdict(&self, has_calls: bool) -> Verdict {
        if !has_calls {
            return Verdict::Skip("the plugin has neither function (ABI 1.3)".into());
        }
        if self.runs == 0 {
            return Verdict::Fail("no run passed".into());
        }
        if let Some(failure) = &self.unload_failure {
            return Verdict::Fail(failure.clone());
        }
        match &self.unpaired {
            Some(calls) => Verdict::Fail(format!(
                "a run loaded {} sets and released {}",
                calls.loads, calls.unloads
            )),
            None => Verdict::Pass,
        }
    }
}

/// Short settings for `scenario`: a few hundred samples, no minimum duration, bounds loose
/// enough that validity is not what is tested.
fn short_settings(scenario: TestScenario, mode: TestMode, tokens: bool) -> TestSettings {
    TestSettings {
        scenario,
        mode,
        min_duration_ms: 0,
        min_query_count: match scenario {
            TestScenario::MultiStream => 40,
            TestScenario::Offline => 2048,
            _ => 200,
        },
        single_stream_expected_latency_ns: 1_000_000.0,
        multi_stream_expected_latency_ns: 8_000_000.0,
        server_target_qps: 2_000.0,
        server_target_latency_ns: 1_000_000_000,
        offline_expected_qps: 1_000.0,
        use_token_latencies: tokens,
        ..TestSettings::default()
    }
}

/// The accuracy log holds one record for each of the data set's `total` samples, and as many
/// more as fill the last query up to a multiple of `padded_to` samples.
fn covers_the_data_set_once(log: &Path, total: usize, padded_to: usize) -> Result<(), String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let records: Vec<serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", log.display()))?;
    let indices: BTreeSet<u64> = records
        .iter()
        .filter_map(|r| r["qsl_idx"].as_u64())
        .collect();
    let expected = total.div_ceil(padded_to.max(1)) * padded_to.max(1);
    if records.len() != expected || indices.len() != total {
        return Err(format!(
            "the accuracy log has {} records of {} distinct samples for a data set of {total} ({expected} records expected)",
            records.len(),
            indices.len()
        ));
    }
    Ok(())
}

/// An accuracy log's responses as (sample index, data), in order of index and data: the
/// same for two runs of a deterministic plugin, whatever order its samples completed in.
fn responses(log: &Path) -> Result<Vec<(u64, String)>, String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let records: Vec<serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut responses: Vec<(u64, String)> = records
        .iter()
        .map(|r| {
            let index = r["qsl_idx"].as_u64().unwrap_or(u64::MAX);
            (index, r["data"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    responses.sort_unstable();
    Ok(responses)
}

fn late_callbacks(count: u64) -> String {
    format!("{count} callbacks after destroy returned: a thread of the plugin outlives destroy")
}

fn mode_name(mode: TestMode) -> &'static str {
    match mode {
        TestMode::AccuracyOnly => "accuracy",
        _ => "performance",
    }
}

/// Nothing shown: the suite prints one line per check.
struct Quiet;

impl Observer for Quiet {}
