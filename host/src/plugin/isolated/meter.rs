//! The host's side of an isolated power meter (`--power plugin:…` with `--isolate process`):
//! the meter's plugin is opened in a child process (`mlperf-host isolated-meter`), and each
//! [`PowerSource`] call is a line to its stdin answered by a line on its stdout, waited for
//! within a bound. A process that crashes, exits or stops answering fails the measurement with
//! the cause; the run, its logs and its performance result go on.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mlperf_power::{Phase, PowerSource, SourceError, SourceInfo, Trace};
use serde::de::DeserializeOwned;

use super::host::ended;
use super::protocol::{self, MeterOpened, ToMeter};
use super::Isolation;
use crate::plugin::power::STOP_GRACE;

/// The hidden subcommand the meter's process runs.
pub const METER_SUBCOMMAND: &str = "isolated-meter";

/// How long `prepare`, `start` and `finish` may take (the readings are on the meter's own
/// thread; these calls only set it going), and how much longer than the meter's own bound
/// `stop` may.
const CALL_PATIENCE: Duration = Duration::from_secs(5);
/// How long a process whose answers ended is given to exit (it is killed then).
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A power plugin's meter living in a process of its own.
pub struct IsolatedMeter {
    info: SourceInfo,
    needs_ranging: bool,
    channel: Channel,
}

impl IsolatedMeter {
    /// Starts the process, which opens the meter `spec` (`plugin:PATH_OR_NAME?k=v`) as the
    /// host would; refuses as the host would, or with why the process could not answer.
    pub fn spawn(spec: &str, isolation: &Isolation) -> Result<IsolatedMeter, SourceError> {
        let refuse = |message: String| SourceError::Spec {
            spec: spec.to_owned(),
            message,
        };
        let mut child = Command::new(&isolation.executable)
            .arg(METER_SUBCOMMAND)
            .arg(std::process::id().to_string())
            .arg(spec)
            // As the plugin's process: out of the terminal's Ctrl-C, ended with the host.
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| {
                refuse(format!(
                    "cannot start the power plugin process ({}): {e}",
                    isolation.executable.display()
                ))
            })?;
        let (commands, stdout) = (child.stdin.take(), child.stdout.take());
        let process = Arc::new(Process {
            child: Mutex::new(child),
            closing: AtomicBool::new(false),
            spec: spec.to_owned(),
        });
        let (sender, answers) = mpsc::channel();
        // Dropped on any error below: the process is let go (killed if need be).
        let mut channel = Channel {
            commands,
            answers,
            reader: None,
            process: Arc::clone(&process),
            gone: None,
        };
        let reader = std::thread::Builder::new()
            .name("mlperf-meter-answers".into())
            .spawn(move || read_answers(stdout, sender, &process))
            .map_err(|e| {
                refuse(format!(
                    "cannot start the power plugin process (thread): {e}"
                ))
            })?;
        channel.reader = Some(reader);
        // Opening may find and set up a device: as long as a plugin's start may take.
        let patience = isolation.stall_timeout.max(Duration::from_secs(60));
        let opened: MeterOpened = channel.call(None, patience).map_err(refuse)??;
        Ok(IsolatedMeter {
            info: opened.info,
            needs_ranging: opened.needs_ranging,
            channel,
        })
    }

    fn forward<T: DeserializeOwned>(
        &mut self,
        command: ToMeter,
        limit: Duration,
    ) -> Result<T, SourceError> {
        self.channel
            .call(Some(&command), limit)
            .map_err(|message| SourceError::Failed {
                name: self.info.name.clone(),
                message,
            })?
    }
}

impl PowerSource for IsolatedMeter {
    fn info(&self) -> SourceInfo {
        self.info.clone()
    }

    fn needs_ranging(&self) -> bool {
        self.needs_ranging
    }

    fn prepare(&mut self, phase: Phase) -> Result<(), SourceError> {
        self.forward(ToMeter::Prepare(phase), CALL_PATIENCE)
    }

    fn start(&mut self, mark: &str) -> Result<(), SourceError> {
        let mark = mark.to_owned();
        self.forward(ToMeter::Start { mark }, CALL_PATIENCE)
    }

    fn stop(&mut self) -> Result<Trace, SourceError> {
        // The process's own stop gives up on a stalled read after this; its message wins.
        let bound = STOP_GRACE + self.info.period * 3;
        self.forward(ToMeter::Stop, bound + CALL_PATIENCE)
    }

    fn finish(&mut self) -> Result<(), SourceError> {
        // A process already gone (its measurement failed with the cause) has nothing to let go.
        if self.channel.gone.is_some() {
            return Ok(());
        }
        self.forward(ToMeter::Finish, CALL_PATIENCE)
    }
}

/// The meter's process, shared with the thread reading its answers.
struct Process {
    child: Mutex<Child>,
    /// The host let it go, or killed it itself: its end is no news.
    closing: AtomicBool,
    spec: String,
}

impl Process {
    /// Waits at most `limit` for the process to exit; how it ended (`None`: it has not).
    fn exit_cause(&self, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            match self.lock().try_wait() {
                Ok(Some(status)) => return Some(format!("power plugin process {}", ended(status))),
                Ok(None) => {}
                Err(error) => {
                    return Some(format!("cannot watch the power plugin process: {error}"))
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn kill(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let mut child = self.lock();
        // Under the lock, so never a process reaped meanwhile (whose id may be reused).
        let _ = child.kill();
        let _ = child.wait();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Child> {
        self.child.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The lines to and from the process.
struct Channel {
    commands: Option<ChildStdin>,
    answers: Receiver<String>,
    reader: Option<JoinHandle<()>>,
    process: Arc<Process>,
    /// Why the process is gone, once it is: every later call fails with it.
    gone: Option<String>,
}

impl Channel {
    /// Sends `command` (none: reads the first line) and waits at most `limit` for the answer:
    /// the meter's own result, or `Err` with why the process did not give one.
    fn call<T: DeserializeOwned>(
        &mut self,
        command: Option<&ToMeter>,
        limit: Duration,
    ) -> Result<Result<T, SourceError>, String> {
        if let Some(cause) = &self.gone {
            return Err(cause.clone());
        }
        let answer = self.exchange(command, limit);
        if let Err(cause) = &answer {
            self.gone = Some(cause.clone());
        }
        answer
    }

    fn exchange<T: DeserializeOwned>(
        &mut self,
        command: Option<&ToMeter>,
        limit: Duration,
    ) -> Result<Result<T, SourceError>, String> {
        if let (Some(command), Some(commands)) = (command, self.commands.as_mut()) {
            if protocol::send(commands, command).is_err() {
                return Err(self.lost());
            }
        }
        match self.answers.recv_timeout(limit) {
            Ok(line) => serde_json::from_str(&line).map_err(|e| {
                self.process.kill();
                format!("power plugin process answered {line:?} ({e}); it was killed")
            }),
            Err(RecvTimeoutError::Timeout) => {
                self.process.kill();
                Err(format!(
                    "power plugin process did not answer within {:.1} s; it was killed",
                    limit.as_secs_f64()
                ))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.lost()),
        }
    }

    /// The process's answers ended: why.
    fn lost(&self) -> String {
        self.process.exit_cause(EXIT_GRACE).unwrap_or_else(|| {
            self.process.kill();
            "power plugin process closed its answers; it was killed".into()
        })
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.process.closing.store(true, Ordering::SeqCst);
        // The end of its input: the process destroys the meter's instance and exits.
        drop(self.commands.take());
        if self.process.exit_cause(STOP_GRACE).is_none() {
            self.process.kill();
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Hands the process's answers over, line by line; when they end with a process the host did
/// not let go, says why at once (not only at the next call).
fn read_answers(stdout: Option<ChildStdout>, answers: Sender<String>, process: &Process) {
    let lines = stdout
        .into_iter()
        .flat_map(|out| BufReader::new(out).lines());
    for line in lines.map_while(Result::ok) {
        if answers.send(line).is_err() {
            break;
        }
    }
    drop(answers);
    if process.closing.load(Ordering::SeqCst) {
        return;
    }
    if let Some(cause) = process.exit_cause(EXIT_GRACE) {
        if !process.closing.load(Ordering::SeqCst) {
            tracing::error!("power source {}: {cause}", process.spec);
        }
    }
}
