//! The `mlperf-host` command.

mod cli;

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use mlperf_host::engine_bench::{self, BenchReport, Completion};
use mlperf_host::plugin::isolated;

#[derive(Parser)]
#[command(
    name = "mlperf-host",
    version,
    about = "MLPerf Inference benchmark host"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one LoadGen test with a backend plugin (by default the null plugin).
    Run(Box<cli::run_args::RunArgs>),
    /// Find the setting a scenario's run needs (expected latency, expected QPS, highest VALID
    /// target QPS) by short trial runs, and write it into a user.conf.
    Tune(Box<cli::tune::Args>),
    /// Score an accuracy log for a benchmark (writes accuracy.txt beside it).
    Accuracy(cli::benchmark::AccuracyArgs),
    /// Benchmark data sets: `preprocess` writes what the host hands a plugin for every sample,
    /// in the reference's cache layout.
    #[command(subcommand)]
    Dataset(cli::dataset::DatasetCommand),
    /// Measure the LoadGen engine's overhead against an in-process null SUT.
    Bench(BenchArgs),
    /// Backend plugins: list, inspect, test (the conformance suite), sdk (what a C or C++
    /// plugin builds against).
    #[command(subcommand)]
    Plugins(cli::plugins::PluginsCommand),
    /// Power results from a session's spl.txt and LoadGen logs.
    #[command(subcommand)]
    Power(cli::power::PowerCommand),
    /// Run a compliance test (TEST01, TEST04, TEST06, TEST07, TEST08, TEST09) and verify it against the submission's runs.
    Audit(Box<cli::audit::Args>),
    /// Draft the system description (systems/<system>.json) from this machine.
    Sysinfo(cli::sysinfo::Args),
    /// Assemble a submission tree from run directories, then check it.
    Submit(cli::submit::Args),
    /// A whole submission from one campaign file: every run the round requires, planned,
    /// run in order with a journal (resumable after any crash), filed, checked and reported.
    #[command(subcommand)]
    Campaign(cli::campaign::Command),
    /// LLM-serving style load through a plugin, point by point: closed-loop concurrency, or
    /// Poisson, gamma or constant arrivals at a rate (with an optional cap); TTFT, TPOT, E2E,
    /// throughput and goodput per point (sweep.json, sweep.csv).
    Sweep(Box<cli::sweep::Args>),
    /// Check a submission tree with the official checker's rules.
    Check(cli::check::Args),
    /// The results table (metric, validity, power, accuracy) of submission trees or run folders.
    Results(cli::results::Args),
    /// Whether a rerun reproduces a run: the result within 2 %, the same settings, seeds,
    /// plugin, model and data set.
    Compare(cli::compare::Args),
    /// An HTML report of run folders: verdict, metric, latency histogram and percentiles,
    /// rates over time, token latencies, power, settings.
    Report(cli::report::Args),
    /// The plugin's process of `run --isolate process` (started by the host, not by hand).
    #[command(name = "isolated-plugin", hide = true)]
    IsolatedPlugin {
        /// The host's process id: the plugin process ends with it.
        host_pid: u32,
    },
    /// The process of a power-meter plugin under `run --isolate process` (started by the host).
    #[command(name = "isolated-meter", hide = true)]
    IsolatedMeter {
        /// The host's process id: the meter's process ends with it.
        host_pid: u32,
        /// The `--power plugin:…` spec.
        spec: String,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Case {
    SingleStream,
    Offline,
    Server,
    /// Every case above, each in its own process.
    All,
    /// Two threads handing a word back and forth (`--queries` times): the floor of a
    /// SingleStream query that crosses cores, as an isolated plugin's does.
    RoundTrip,
}

#[derive(clap::Args)]
struct BenchArgs {
    #[arg(long, value_enum, default_value = "all")]
    case: Case,
    /// SingleStream: queries to issue.
    #[arg(long, default_value_t = 2_000_000, value_parser = cli::parse_count)]
    queries: u64,
    /// Offline: samples in the one query.
    #[arg(long, default_value_t = 10_000_000, value_parser = cli::parse_count)]
    samples: u64,
    /// Server: target queries per second.
    #[arg(long, default_value_t = 200_000.0, value_parser = cli::parse_rate)]
    qps: f64,
    /// Server: minimum duration in ms.
    #[arg(long, default_value_t = 10_000)]
    duration_ms: u64,
    /// How the null SUT completes samples.
    #[arg(long, value_enum, default_value = "inline")]
    completion: Completion,
    /// Samples in the sample library.
    #[arg(long, default_value_t = 1024)]
    qsl_samples: usize,
    /// Print one JSON object per case instead of a table.
    #[arg(long)]
    json: bool,
    /// Run the cases through this backend plugin instead of the in-process null SUT
    /// (`--completion worker` configures it with `workers = 1`).
    #[arg(long, value_name = "PATH")]
    plugin: Option<std::path::PathBuf>,
    /// With --plugin: run the plugin in a child process (`run --isolate process`).
    #[arg(long, requires = "plugin")]
    isolated: bool,
    /// The LoadGen that runs the cases: native; official (the official 6.0.17 C++ library,
    /// same SUT code); official-cpp (the official library with a null SUT written in C++,
    /// the baseline); both (native and official); all (the three, each case in turn).
    #[arg(long, value_enum, default_value = "native")]
    engine: BenchEngine,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BenchEngine {
    Native,
    Official,
    OfficialCpp,
    Both,
    All,
}

impl BenchEngine {
    fn engines(self) -> &'static [&'static str] {
        match self {
            BenchEngine::Native => &["native"],
            BenchEngine::Official => &["official"],
            BenchEngine::OfficialCpp => &["official-cpp"],
            BenchEngine::Both => &["native", "official"],
            BenchEngine::All => &["native", "official", "official-cpp"],
        }
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Run(args) => cli::run::main(&args),
        Command::Tune(args) => cli::tune::main(&args),
        Command::Accuracy(args) => cli::benchmark::accuracy_main(&args),
        Command::Dataset(command) => cli::dataset::main(&command),
        Command::Bench(args) => cli::exit_with(run_bench(&args)),
        Command::Plugins(command) => cli::plugins::main(&command),
        Command::Power(command) => cli::power::main(&command),
        Command::Audit(args) => cli::audit::main(&args),
        Command::Sysinfo(args) => cli::sysinfo::main(&args),
        Command::Submit(args) => cli::submit::main(&args),
        Command::Campaign(command) => cli::campaign::main(&command),
        Command::Check(args) => cli::check::main(&args),
        Command::Report(args) => cli::report::main(&args),
        Command::Results(args) => cli::results::main(&args),
        Command::Compare(args) => cli::compare::main(&args),
        Command::Sweep(args) => cli::sweep::main(&args),
        Command::IsolatedPlugin { host_pid } => child_process(|| isolated::child_main(host_pid)),
        Command::IsolatedMeter { host_pid, spec } => {
            child_process(|| isolated::meter_main(host_pid, &spec))
        }
    }
}

/// A process `--isolate process` starts: logs as the host's default, exits with `main`'s status.
fn child_process(main: impl FnOnce() -> i32) -> ExitCode {
    cli::init_logging(0, false);
    ExitCode::from(main() as u8)
}

fn run_bench(args: &BenchArgs) -> anyhow::Result<()> {
    if args.case == Case::RoundTrip {
        let report = engine_bench::cross_core_round_trip(args.queries);
        match args.json {
            true => println!("{}", serde_json::to_string(&report)?),
            false => print_report(&report),
        }
        return Ok(());
    }
    let several_engines = matches!(args.engine, BenchEngine::Both | BenchEngine::All);
    let reports = if args.case == Case::All || several_engines {
        let cases: Vec<(&str, &str)> = match args.case {
            Case::All => vec![
                ("single-stream", "inline"),
                ("offline", "inline"),
                ("server", "worker"),
            ],
            Case::SingleStream => vec![("single-stream", completion_name(args.completion))],
            Case::Offline => vec![("offline", completion_name(args.completion))],
            Case::Server => vec![("server", completion_name(args.completion))],
            Case::RoundTrip => unreachable!("handled above"),
        };
        let mut reports = Vec::new();
        for (case, completion) in cases {
            for engine in args.engine.engines() {
                reports.push(run_child(args, case, completion, engine)?);
            }
        }
        reports
    } else {
        let (name, settings) = match args.case {
            Case::SingleStream => (
                "single-stream",
                engine_bench::single_stream_settings(args.queries),
            ),
            Case::Offline => ("offline", engine_bench::offline_settings(args.samples)),
            Case::Server => (
                "server",
                engine_bench::server_settings(args.qps, args.duration_ms),
            ),
            Case::All | Case::RoundTrip => unreachable!(),
        };
        match &args.plugin {
            Some(path) => {
                anyhow::ensure!(
                    args.engine != BenchEngine::OfficialCpp,
                    "--plugin: the official-cpp engine runs its own C++ null SUT"
                );
                let workers = if args.completion == Completion::Worker {
                    1
                } else {
                    0
                };
                let config = format!("workers = {workers}");
                let isolation = args
                    .isolated
                    .then(|| mlperf_host::plugin::isolated::Isolation {
                        executable: std::env::current_exe().expect("this executable"),
                        stall_timeout: std::time::Duration::from_secs(60),
                        timed_preprocess: None,
                    });
                let spec = path.display().to_string();
                let sut = mlperf_host::plugin::Instance::open(
                    &spec,
                    &config,
                    false,
                    isolation.as_ref(),
                    None,
                )?;
                if args.case == Case::Offline {
                    sut.backend().reserve_samples(args.samples as usize);
                }
                let run = match args.engine {
                    BenchEngine::Official => engine_bench::official::run_case_with,
                    _ => engine_bench::run_case_with,
                };
                vec![run(
                    name,
                    &settings,
                    args.completion,
                    args.qsl_samples,
                    &sut,
                )?]
            }
            None => {
                let run = match args.engine {
                    BenchEngine::Official => engine_bench::official::run_case,
                    BenchEngine::OfficialCpp => engine_bench::official::run_case_cpp,
                    _ => engine_bench::run_case,
                };
                vec![run(name, &settings, args.completion, args.qsl_samples)?]
            }
        }
    };
    for report in &reports {
        if args.json {
            println!("{}", serde_json::to_string(report)?);
        } else {
            print_report(report);
        }
    }
    Ok(())
}

/// Runs one case in a fresh process so its peak memory is its own.
fn run_child(
    args: &BenchArgs,
    case: &str,
    completion: &str,
    engine: &str,
) -> anyhow::Result<BenchReport> {
    let exe = std::env::current_exe().context("locating the mlperf-host executable")?;
    let output = std::process::Command::new(exe)
        .args([
            "bench",
            "--json",
            "--case",
            case,
            "--completion",
            completion,
            "--engine",
            engine,
        ])
        .args(
            args.plugin
                .iter()
                .flat_map(|p| [std::ffi::OsStr::new("--plugin"), p.as_os_str()]),
        )
        .args(["--queries", &args.queries.to_string()])
        .args(["--samples", &args.samples.to_string()])
        .args(["--qps", &args.qps.to_string()])
        .args(["--duration-ms", &args.duration_ms.to_string()])
        .args(["--qsl-samples", &args.qsl_samples.to_string()])
        .args(args.isolated.then_some("--isolated"))
        .output()
        .with_context(|| format!("running the {case} benchmark"))?;
    anyhow::ensure!(
        output.status.success(),
        "the {case} benchmark failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout)?;
    let line = stdout
        .lines()
        .last()
        .context("the benchmark printed nothing")?;
    Ok(serde_json::from_str(line)?)
}

fn completion_name(completion: Completion) -> &'static str {
    match completion {
        Completion::Inline => "inline",
        Completion::Worker => "worker",
    }
}

fn print_report(r: &BenchReport) {
    println!(
        "{:<14} {:<8} {:<7} {:>10} queries {:>11} samples  {:>12.0}/s  start-up {:>8.2} ms  end {:>8.2} ms  peak RSS {:>7.1} MiB ({:.1} B/sample above start, {:.1} whole)  p99 {}  {}",
        r.case,
        r.engine,
        format!("{:?}", r.completion).to_lowercase(),
        r.queries,
        r.samples,
        r.throughput_per_s,
        r.startup_ms,
        r.end_of_run_ms,
        r.peak_rss_bytes as f64 / (1024.0 * 1024.0),
        r.bytes_per_sample,
        r.process_bytes_per_sample,
        r.p99_latency_ns.map_or("-".to_string(), |ns| format!("{ns} ns")),
        if r.valid { "VALID" } else { "INVALID" },
    );
}
