//! A run's power result: each meter's trace accounted over the LoadGen window as MLPerf's
//! power checker does, the scenario's metric, and why it may not count; rendered as the
//! console's Power Summary block and as JSON (power_summary.json, result.json).

use std::fmt::Write as _;

use mlperf_power::{
    account, metrics, EnergyReport, PerformanceFigures, PowerMetrics, PowerScenario, Provenance,
    RunWindow, Scope, SourceInfo, Trace,
};
use serde_json::{json, Value};

/// One meter over one run.
#[derive(Debug, Clone)]
pub struct SourceResult {
    pub info: SourceInfo,
    /// Where its trace was written (relative to the output directory), if it was.
    pub trace_file: Option<String>,
    pub energy: Option<EnergyReport>,
    pub metrics: Option<PowerMetrics>,
    /// Why the power result is INVALID; empty when it is VALID.
    pub reasons: Vec<String>,
    /// What the meter said beside its samples (PTDaemon's Watts and Uncertainty, read
    /// failures, counter resets).
    pub notes: Vec<String>,
}

impl SourceResult {
    /// Accounts `trace` (or the meter's failure) over `window`.
    pub fn new(
        info: SourceInfo,
        trace: Result<&Trace, String>,
        window: &RunWindow,
        scenario: PowerScenario,
        figures: &PerformanceFigures,
    ) -> SourceResult {
        let mut result = SourceResult {
            info,
            trace_file: None,
            energy: None,
            metrics: None,
            reasons: Vec::new(),
            notes: Vec::new(),
        };
        match trace {
            Ok(trace) => {
                result.notes = trace.notes.clone();
                let energy = account(trace, window, result.info.period);
                result.metrics = metrics(&energy, scenario, figures);
                result.reasons.extend(energy.problems.iter().cloned());
                result.notes.extend(energy.warnings.iter().cloned());
                if result.metrics.is_none() && energy.mean_watts.is_some() {
                    result.reasons.push(
                        "no power metric: the run's result figures are missing or zero".into(),
                    );
                }
                result.energy = Some(energy);
            }
            Err(message) => result.reasons.push(message),
        }
        result
    }

    pub fn is_valid(&self) -> bool {
        self.reasons.is_empty()
    }

    pub fn is_simulated(&self) -> bool {
        self.info.provenance == Provenance::Simulated
    }

    /// " (simulated)", " (component)" or nothing: what a verdict is of.
    pub fn label(&self) -> &'static str {
        match (&self.info.scope, self.info.provenance) {
            (_, Provenance::Simulated) => " (simulated)",
            (Scope::Component(_), _) => " (component)",
            _ => "",
        }
    }

    /// What MLPerf reports as power: a real wall meter's figure.
    pub fn is_mlperf_power(&self) -> bool {
        self.info.scope == Scope::Wall && !self.is_simulated()
    }

    /// What the figure is: wall power or a component estimate, and from what.
    pub fn describe(&self) -> String {
        let what = match &self.info.scope {
            Scope::Wall => "wall power".to_owned(),
            Scope::Component(part) => format!("component estimate ({part}), not MLPerf power"),
        };
        let from = match self.info.provenance {
            Provenance::Ptd => "PTDaemon analyzer",
            Provenance::OnHost => "on-host counters",
            Provenance::Simulated => "SIMULATED, not a measurement",
        };
        format!("{what}; {from}")
    }
}

/// Every meter of a run, and the run they measured.
#[derive(Debug, Clone)]
pub struct PowerResult {
    pub window: RunWindow,
    pub scenario: PowerScenario,
    pub figures: PerformanceFigures,
    pub sources: Vec<SourceResult>,
    /// The ranging run's results, when the meters needed one.
    pub ranging: Option<Vec<SourceResult>>,
}

impl PowerResult {
    pub fn is_valid(&self) -> bool {
        self.sources.iter().all(SourceResult::is_valid)
    }

    /// The checker's ranging rule, for the meters that had a ranging run (`ranged`, in
    /// meter order): a valid ranging average, and a testing average less than 5 % below it.
    pub fn compare_with_ranging(&mut self, ranged: &[bool]) {
        let Some(ranging) = &self.ranging else {
            return;
        };
        let mean = |r: &SourceResult| r.energy.as_ref().and_then(|e| e.mean_watts);
        let pairs = self.sources.iter_mut().zip(ranging).zip(ranged);
        for ((testing, ranging), _) in pairs.filter(|(_, ranged)| **ranged) {
            match (mean(testing), mean(ranging)) {
                (Some(testing_watts), Some(ranging_watts)) => {
                    if testing_watts <= 0.95 * ranging_watts {
                        testing.reasons.push(format!(
                            "the testing run's average power {testing_watts:.3} W is 5 % or \
                             more below the ranging run's {ranging_watts:.3} W"
                        ));
                    }
                }
                (_, None) => testing
                    .reasons
                    .push("the ranging run has no valid power sample in its window".into()),
                (None, Some(_)) => {}
            }
        }
    }
}

/// The scenario's performance figure the metric divides by, and its label.
fn performance_line(scenario: PowerScenario, figures: &PerformanceFigures) -> (String, String) {
    match scenario {
        PowerScenario::Offline if figures.tokens => {
            ("Tokens per second".into(), fixed(figures.per_second))
        }
        PowerScenario::Offline => ("Samples per second".into(), fixed(figures.per_second)),
        PowerScenario::Server if figures.tokens => (
            "Completed tokens per second".into(),
            fixed(figures.per_second),
        ),
        PowerScenario::Server => (
            "Completed samples per second".into(),
            fixed(figures.per_second),
        ),
        PowerScenario::SingleStream | PowerScenario::MultiStream => {
            ("Query count".into(), figures.query_count.to_string())
        }
    }
}

fn fixed(value: f64) -> String {
    format!("{value:.3}")
}

fn optional(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), fixed)
}

/// The console block printed after the LoadGen summary (one section per meter).
pub fn render(result: &PowerResult) -> String {
    let mut out = String::new();
    let rule = "================================================";
    let _ = writeln!(out, "\n{rule}\nPower Summary\n{rule}");
    let (begin, end) = result.window.strings();
    let mut line = |key: &str, value: &str| {
        let _ = writeln!(out, "{key} : {value}");
    };
    line("Run window (UTC)", &format!("{begin} to {end}"));
    line("Run window (s)", &format!("{:.3}", result.window.seconds()));
    let (label, value) = performance_line(result.scenario, &result.figures);
    line(&label, &value);
    for (index, source) in result.sources.iter().enumerate() {
        let _ = writeln!(out);
        render_source(
            &mut out,
            index,
            source,
            result.scenario,
            result.figures.samples_per_query,
        );
    }
    if let Some(ranging) = &result.ranging {
        let _ = writeln!(out);
        for source in ranging {
            let watts = source.energy.as_ref().and_then(|e| e.mean_watts);
            let _ = writeln!(
                out,
                "Ranging run, {} : average {} W{}",
                source.info.name,
                optional(watts),
                source.label()
            );
        }
    }
    out
}

fn render_source(
    out: &mut String,
    index: usize,
    source: &SourceResult,
    scenario: PowerScenario,
    samples_per_query: u64,
) {
    let mut line = |key: &str, value: &str| {
        let _ = writeln!(out, "{key} : {value}");
    };
    line(&format!("Meter {}", index + 1), &source.info.name);
    line("Measures", &source.describe());
    line("Identity", &source.info.identity);
    if let Some(file) = &source.trace_file {
        line("Trace", file);
    }
    if let Some(energy) = &source.energy {
        line(
            "Samples in window",
            &format!(
                "{} ({} invalid), largest gap {:.3} s",
                energy.samples,
                energy.invalid_samples,
                energy.largest_gap.as_secs_f64()
            ),
        );
        line("Average power (W)", &optional(energy.mean_watts));
        line(
            "Min / max power (W)",
            &format!(
                "{} / {}",
                optional(energy.min_watts),
                optional(energy.max_watts)
            ),
        );
        line("Energy (J)", &optional(energy.energy_joules));
        line("Trapezoid energy (J)", &optional(energy.trapezoid_joules));
        if energy.counter_joules.is_some() {
            line("Counter energy (J)", &optional(energy.counter_joules));
        }
    }
    match &source.metrics {
        Some(PowerMetrics::Throughput {
            per_joule,
            per_joule_label,
            ..
        }) => line(per_joule_label, &fixed(*per_joule)),
        Some(PowerMetrics::Energy {
            millijoules_per_query,
            per_joule,
            per_joule_label,
        }) => {
            let label = if scenario == PowerScenario::MultiStream {
                format!("Energy per query (mJ, {samples_per_query} samples/query)")
            } else {
                "Energy per query (mJ)".to_owned()
            };
            line(&label, &fixed(*millijoules_per_query));
            line(per_joule_label, &fixed(*per_joule));
        }
        None => {}
    }
    let verdict = if source.is_valid() {
        "VALID"
    } else {
        "INVALID"
    };
    line("Power result", &format!("{verdict}{}", source.label()));
    for reason in &source.reasons {
        let _ = writeln!(out, "  * {reason}");
    }
    for note in &source.notes {
        let _ = writeln!(out, "Note : {note}");
    }
}

fn scenario_name(scenario: PowerScenario) -> &'static str {
    match scenario {
        PowerScenario::SingleStream => "SingleStream",
        PowerScenario::MultiStream => "MultiStream",
        PowerScenario::Server => "Server",
        PowerScenario::Offline => "Offline",
    }
}

fn source_json(source: &SourceResult) -> Value {
    let energy = source.energy.as_ref().map(|e| {
        json!({
            "window_seconds": e.window_seconds,
            "samples": e.samples,
            "invalid_samples": e.invalid_samples,
            "average_watts": e.mean_watts,
            "energy_joules": e.energy_joules,
            "trapezoid_joules": e.trapezoid_joules,
            "counter_joules": e.counter_joules,
            "min_watts": e.min_watts,
            "max_watts": e.max_watts,
            "largest_gap_seconds": e.largest_gap.as_secs_f64(),
        })
    });
    let metric = source.metrics.as_ref().map(|m| match m {
        PowerMetrics::Throughput {
            watts,
            per_joule,
            per_joule_label,
        } => json!({
            "power_metric": watts,
            "power_metric_units": "Watts",
            "efficiency": per_joule,
            "efficiency_label": per_joule_label,
        }),
        PowerMetrics::Energy {
            millijoules_per_query,
            per_joule,
            per_joule_label,
        } => json!({
            "power_metric": millijoules_per_query,
            "power_metric_units": "millijoules",
            "efficiency": per_joule,
            "efficiency_label": per_joule_label,
        }),
    });
    let scope = match &source.info.scope {
        Scope::Wall => "wall".to_owned(),
        Scope::Component(part) => format!("component: {part}"),
    };
    let provenance = match source.info.provenance {
        Provenance::Ptd => "ptdaemon",
        Provenance::OnHost => "on-host",
        Provenance::Simulated => "simulated",
    };
    json!({
        "source": source.info.name,
        "identity": source.info.identity,
        "scope": scope,
        "provenance": provenance,
        "simulated": source.is_simulated(),
        "period_seconds": source.info.period.as_secs_f64(),
        "trace_file": source.trace_file,
        "accounting": energy,
        "metric": metric,
        "valid": source.is_valid(),
        "invalid_reasons": source.reasons,
        "notes": source.notes,
    })
}

/// power_summary.json, and the `power` member of result.json.
pub fn to_json(result: &PowerResult) -> Value {
    let (begin, end) = result.window.strings();
    json!({
        "scenario": scenario_name(result.scenario),
        "power_begin": begin,
        "power_end": end,
        "window_seconds": result.window.seconds(),
        "performance": {
            "per_second": result.figures.per_second,
            "tokens": result.figures.tokens,
            "query_count": result.figures.query_count,
            "samples_per_query": result.figures.samples_per_query,
        },
        "valid": result.is_valid(),
        "simulated": result.sources.iter().any(SourceResult::is_simulated),
        // Whether any figure is MLPerf power (a real analyzer at the wall).
        "mlperf_power": result.sources.iter().any(SourceResult::is_mlperf_power),
        "sources": result.sources.iter().map(source_json).collect::<Vec<_>>(),
        "ranging": result.ranging.as_ref().map(|r| r.iter().map(source_json).collect::<Vec<_>>()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_power::PowerSample;
    use std::time::{Duration, UNIX_EPOCH};

    fn info(provenance: Provenance) -> SourceInfo {
        SourceInfo {
            name: "sim:200".into(),
            scope: Scope::Wall,
            provenance,
            period: Duration::from_secs(1),
            identity: "test meter".into(),
        }
    }

    /// 10 s window, samples each second from 0.5 s before to 0.5 s after at 200 W and 210 W.
    fn trace(watts: [f64; 2]) -> (Trace, RunWindow) {
        let begin = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let window = RunWindow {
            begin,
            end: begin + Duration::from_secs(10),
        };
        let samples = (0..12)
            .map(|i| {
                let time = begin - Duration::from_millis(500) + Duration::from_secs(i);
                PowerSample::watts(time, watts[i as usize % 2])
            })
            .collect();
        (
            Trace {
                samples,
                ..Trace::default()
            },
            window,
        )
    }

    #[test]
    fn single_stream_block_shows_the_checker_figures() {
        let (trace, window) = trace([200.0, 210.0]);
        let figures = PerformanceFigures {
            per_second: 0.0,
            tokens: false,
            query_count: 1000,
            samples_per_query: 1,
        };
        let source = SourceResult::new(
            info(Provenance::Simulated),
            Ok(&trace),
            &window,
            PowerScenario::SingleStream,
            &figures,
        );
        // Samples at 0.5 .. 9.5 s: ten, alternating 210 and 200 W: mean 205 W, 2050 J,
        // 2050 mJ per query over 1000 queries.
        let energy = source.energy.as_ref().unwrap();
        assert_eq!(energy.samples, 10);
        assert_eq!(energy.mean_watts, Some(205.0));
        let result = PowerResult {
            window,
            scenario: PowerScenario::SingleStream,
            figures,
            sources: vec![source],
            ranging: None,
        };
        let text = render(&result);
        assert!(text.contains("Energy per query (mJ) : 2050.000"), "{text}");
        assert!(text.contains("Queries per joule : 0.488"), "{text}");
        assert!(text.contains("Power result : VALID (simulated)"), "{text}");
        assert!(text.contains("SIMULATED, not a measurement"), "{text}");
        let json = to_json(&result);
        assert_eq!(json["sources"][0]["metric"]["power_metric"], 2050.0);
        assert_eq!(
            json["sources"][0]["metric"]["power_metric_units"],
            "millijoules"
        );
        assert_eq!(json["simulated"], true);
        assert_eq!(json["valid"], true);
    }

    #[test]
    fn a_lost_meter_or_a_low_testing_run_is_invalid() {
        let (trace, window) = trace([200.0, 200.0]);
        let figures = PerformanceFigures {
            per_second: 1000.0,
            tokens: false,
            query_count: 1,
            samples_per_query: 1,
        };
        let lost = SourceResult::new(
            info(Provenance::Ptd),
            Err("PTDaemon went away".into()),
            &window,
            PowerScenario::Offline,
            &figures,
        );
        assert!(!lost.is_valid());
        let (high, _) = trace_with(250.0);
        let ranging = SourceResult::new(
            info(Provenance::Ptd),
            Ok(&high),
            &window,
            PowerScenario::Offline,
            &figures,
        );
        let testing = SourceResult::new(
            info(Provenance::Ptd),
            Ok(&trace),
            &window,
            PowerScenario::Offline,
            &figures,
        );
        let mut result = PowerResult {
            window,
            scenario: PowerScenario::Offline,
            figures,
            sources: vec![testing, lost],
            ranging: Some(vec![ranging]),
        };
        result.compare_with_ranging(&[true, false]);
        assert!(!result.is_valid());
        let text = render(&result);
        assert!(text.contains("Samples per joule : 5.000"), "{text}");
        assert!(
            text.contains("5 % or more below the ranging run's 250.000 W"),
            "{text}"
        );
        assert!(text.contains("  * PTDaemon went away"), "{text}");
        assert!(!text.contains("simulated"), "{text}");
    }

    fn trace_with(watts: f64) -> (Trace, RunWindow) {
        trace([watts, watts])
    }
}
