//! What `run` and `audit` show on the terminal while a session works: the summary, accuracy,
//! power and verification blocks on stdout (unless `--quiet`), the progress bar on stderr.

use std::io::IsTerminal;
use std::path::Path;

use mlperf_host::benchmark::accuracy::Score;
use mlperf_host::compliance::{AccuracyFallback, Verification};
use mlperf_host::loadgen::ProgressHandle;
use mlperf_host::power::{result as power_result, PowerResult};
use mlperf_host::session::{AuditPlan, Observer, SessionError};

use super::progress::ProgressWatcher;

/// The terminal's view of a session: the blocks on stdout, the progress bar on stderr.
pub(crate) struct Console {
    quiet: bool,
    /// The progress bar even when quiet (`campaign` shows each run's bar, not its blocks).
    bar: bool,
    progress: Option<ProgressWatcher>,
}

impl Console {
    /// `quiet`: errors only.
    pub(crate) fn new(quiet: bool) -> Console {
        Console {
            quiet,
            bar: !quiet,
            progress: None,
        }
    }

    /// Only the progress bar: no blocks on stdout.
    pub(crate) fn bar_only() -> Console {
        Console {
            quiet: true,
            bar: true,
            progress: None,
        }
    }
}

impl Observer for Console {
    fn ranging_started(&mut self, out: &Path) {
        if !self.quiet {
            println!(
                "Ranging run (power analyzer ranges on automatic), logs in {}",
                out.display()
            );
        }
    }

    fn test_starting(&mut self) -> Option<ProgressHandle> {
        // The bar: on a terminal, not --quiet; the watcher also runs for the debug log.
        self.progress = ProgressWatcher::start(self.bar && std::io::stderr().is_terminal());
        self.progress.as_ref().map(ProgressWatcher::handle)
    }

    fn test_finished(&mut self) {
        if let Some(progress) = self.progress.take() {
            progress.finish();
        }
    }

    fn summary(&mut self, text: &str) {
        if !self.quiet {
            print!("{text}");
        }
    }

    fn accuracy(&mut self, score: &Score) {
        if !self.quiet {
            print!("{}", score.report());
        }
    }

    fn power(&mut self, result: &PowerResult) {
        if !self.quiet {
            print!("{}", power_result::render(result));
        }
    }

    fn power_failed(&mut self, error: &SessionError) {
        eprintln!("error: no power result: {}", super::error_chain(error));
    }

    fn compliance_starting(&mut self, plan: &AuditPlan) {
        if !self.quiet {
            let audit_config = plan.run.audit_config.as_deref().unwrap_or(Path::new("?"));
            println!(
                "{} for {}: {}; the compliance run's logs in {}",
                plan.test,
                plan.run.model,
                audit_config.display(),
                plan.run.out.display()
            );
        }
    }

    fn verification(&mut self, path: &Path, verification: &Verification) {
        if !self.quiet {
            // With what the official script prints to the console only.
            for note in &verification.console_notes {
                println!("{note}");
            }
            println!("\n{}:", path.display());
            print!("{}", verification.text);
        }
    }

    fn accuracy_fallback(&mut self, result: Option<&AccuracyFallback>, accuracy_dir: &Path) {
        if self.quiet {
            return;
        }
        let Some(result) = result else {
            println!(
                "The responses differ; no benchmark with an accuracy metric (--benchmark) to score the baseline and compliance accuracy in {}",
                accuracy_dir.display()
            );
            return;
        };
        println!(
            "\nThe responses differ: accuracy of the accuracy run on the {} records of the samples the compliance run logged, and of the compliance run ({}):",
            result.baseline_records,
            accuracy_dir.display()
        );
        print!("baseline:   {}", result.baseline.report());
        print!("compliance: {}", result.compliance.report());
        match result.delta_percent {
            Some(delta) => println!(
                "delta {delta:.3} %: {} the {:.1} % the submission checker accepts",
                if result.within_delta() {
                    "within"
                } else {
                    "beyond"
                },
                result.allowed_delta_percent
            ),
            None => println!("the compliance accuracy is 0: the submission checker fails it"),
        }
    }
}
