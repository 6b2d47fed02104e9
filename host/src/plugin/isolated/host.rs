//! The host's side of an isolated plugin: the plugin's process started and watched, queries
//! written to the issue ring, completions read from the completion ring and handed to the
//! engine. Whatever happens to the process (a crash, `exit()`, an OOM kill, a stop, a call
//! that never returns) ends the run INVALID with the cause, and the host goes on to write
//! every log. The watcher is `watch.rs`; the completion ring's reading, `completions.rs`.

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::child::{CONTROL_FD, IMAGES_FD, REGION_FD};
use super::protocol::{self, TimedModule, ToHost, ToPlugin};
use super::region::*;
use super::shm::{send_fd, Mapping};
use crate::loadgen::{Completer, QuerySample, SystemUnderTest};
use crate::plugin::completer_slot::CompleterSlot;
use crate::plugin::sut::refuse;
use crate::plugin::PluginBackend;
use crate::plugin::{Destroyed, PluginError};
use crate::samples::{LoadedSamples, SampleArena};

mod completions;
mod watch;

use completions::receive_completions;
pub(super) use watch::ended;
use watch::{read_control, watch};

/// The hidden subcommand the plugin's process runs.
pub const SUBCOMMAND: &str = "isolated-plugin";

/// How often the watcher looks at the process.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// How to start the plugin's process.
#[derive(Debug, Clone)]
pub struct Isolation {
    /// The `mlperf-host` executable (run with the hidden subcommand).
    pub executable: PathBuf,
    /// A call into the plugin that has not returned after this long ends the run; so does a
    /// start or a `destroy` that takes longer.
    pub stall_timeout: Duration,
    /// Timed preprocessing, run in the plugin's process.
    pub timed_preprocess: Option<TimedModule>,
}

/// What the host and its threads share about the process.
struct Link {
    plugin: String,
    /// The run's completer, and a failure before the first issue (lost: the process is gone).
    completer: CompleterSlot,
    /// The process is gone or being killed: nothing more comes from it.
    gone: AtomicBool,
    /// The process has exited (the watcher reaped it).
    exited: AtomicBool,
    /// The host asked the process to destroy the instance and exit.
    stopping: AtomicBool,
    /// Why the host killed the process, when it did.
    kill_cause: Mutex<Option<String>>,
    /// Samples whose completion reached the host.
    completed: AtomicU64,
    /// The completion reader has taken everything the exited process published.
    drained: AtomicBool,
    /// The exit has been handled: its failure, if any, reported.
    exit_handled: AtomicBool,
    pid: u32,
}

impl Link {
    fn fail(&self, message: String, lost: bool) {
        self.completer.fail(message, lost);
    }

    fn kill(&self, cause: String) {
        self.kill_cause
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(cause);
        self.gone.store(true, Ordering::SeqCst);
        if !self.exited.load(Ordering::SeqCst) {
            // SAFETY: signals the process this host started and has not reaped yet.
            unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

struct Inner {
    region: Region,
    link: Arc<Link>,
    images: UnixStream,
    replies: Mutex<Receiver<ToHost>>,
    /// The issue ring's producer state.
    producer: Mutex<IssueProducer>,
    /// Samples written to the issue ring.
    issued: AtomicU64,
    /// The large query sent ahead (`prepare_query`): its first sample id and length.
    prepared: Mutex<Option<(u64, usize)>>,
    /// Held by whoever reads the completion ring (the reader thread or the issuing thread).
    consuming: AtomicBool,
    /// The issuing thread never takes completions: the reader thread takes every one.
    reader_only: AtomicBool,
    /// `flush_queries` calls sent to the plugin's process (a running count).
    flushes_asked: AtomicU64,
    stall_timeout: Duration,
    /// Where hand-overs and the plugin's timing reports are noted, when the run divides its
    /// latencies.
    timing: std::sync::OnceLock<crate::timing::TimingSink>,
    /// Where the plugin's tokens after the first and its single samples' failures go (ABI 1.5),
    /// when a sweep takes them; without, a failure fails the run, as `fail` does.
    tokens: std::sync::OnceLock<Arc<dyn crate::plugin::TokenReports>>,
    failures: std::sync::OnceLock<Arc<dyn crate::plugin::FailureReports>>,
    /// The plugin's name, once its process said it (for the messages it fails a run with).
    name: std::sync::OnceLock<String>,
}

/// The next issue entry to write, and the consumer's tail when last read.
#[derive(Clone, Copy, Default)]
struct IssueProducer {
    head: u64,
    tail: u64,
}

/// A plugin instance living in a process of its own.
pub struct IsolatedSut {
    inner: Arc<Inner>,
    name: String,
    capabilities: u64,
    /// The plugin has load_samples or unload_samples: sets go to its process.
    takes_sample_sets: bool,
    attributes: Vec<(String, String)>,
    provenance: Vec<(String, String)>,
    threads: Vec<JoinHandle<()>>,
    destroyed: bool,
}

impl IsolatedSut {
    /// Starts the process, which loads the plugin `spec` and creates an instance configured
    /// by `config`; `samples`: issued samples carry data (sample images follow at loads).
    pub fn spawn(
        spec: &str,
        config: &str,
        samples: bool,
        isolation: &Isolation,
        run: Option<&crate::plugin::RunDescription>,
    ) -> Result<IsolatedSut, PluginError> {
        let failed = |what: &str, e: std::io::Error| PluginError::Isolated {
            message: format!("cannot start the plugin process ({what}): {e}"),
        };
        let (region_fd, region) = Region::create().map_err(|e| failed("shared memory", e))?;
        let (control, control_child) = UnixStream::pair().map_err(|e| failed("socket", e))?;
        let (images, images_child) = UnixStream::pair().map_err(|e| failed("socket", e))?;
        let passed = [
            region_fd.as_raw_fd(),
            control_child.as_raw_fd(),
            images_child.as_raw_fd(),
        ];
        let mut command = Command::new(&isolation.executable);
        command
            .arg(SUBCOMMAND)
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            // Its own process group: a Ctrl-C at the terminal reaches the host, which aborts
            // the test in order, not the plugin (which dies with the host in any case).
            .process_group(0);
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec.
        unsafe { command.pre_exec(move || place_descriptors(passed)) };
        let child = command
            .spawn()
            .map_err(|e| failed(&isolation.executable.display().to_string(), e))?;
        drop((region_fd, control_child, images_child));

        let link = Arc::new(Link {
            plugin: spec.to_string(),
            completer: CompleterSlot::default(),
            gone: AtomicBool::new(false),
            exited: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            kill_cause: Mutex::new(None),
            completed: AtomicU64::new(0),
            drained: AtomicBool::new(false),
            exit_handled: AtomicBool::new(false),
            pid: child.id(),
        });
        let (reply, replies) = mpsc::channel();
        let reader = control.try_clone().map_err(|e| failed("socket", e))?;
        let inner = Arc::new(Inner {
            region,
            link: Arc::clone(&link),
            images,
            replies: Mutex::new(replies),
            producer: Mutex::new(IssueProducer::default()),
            issued: AtomicU64::new(0),
            prepared: Mutex::new(None),
            consuming: AtomicBool::new(false),
            reader_only: AtomicBool::new(false),
            flushes_asked: AtomicU64::new(0),
            stall_timeout: isolation.stall_timeout,
            timing: std::sync::OnceLock::new(),
            tokens: std::sync::OnceLock::new(),
            failures: std::sync::OnceLock::new(),
            name: std::sync::OnceLock::new(),
        });
        let mut threads = Vec::new();
        let spawn = |name: &str, work: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(work)
                .map_err(|e| failed("thread", e))
        };
        threads.push(spawn(
            "mlperf-isolated-watch",
            Box::new({
                let inner = Arc::clone(&inner);
                move || watch(child, &inner)
            }),
        )?);
        threads.push(spawn(
            "mlperf-isolated-control",
            Box::new({
                let link = Arc::clone(&link);
                move || read_control(reader, &link, reply)
            }),
        )?);
        threads.push(spawn(
            "mlperf-isolated-completions",
            Box::new({
                let inner = Arc::clone(&inner);
                move || receive_completions(&inner)
            }),
        )?);
        let mut sut = IsolatedSut {
            inner,
            name: String::new(),
            attributes: Vec::new(),
            capabilities: 0,
            takes_sample_sets: false,
            provenance: Vec::new(),
            threads,
            destroyed: false,
        };
        let mut control = control;
        let start = ToPlugin::Start {
            spec: spec.to_string(),
            config: config.to_string(),
            samples,
            timed_preprocess: isolation.timed_preprocess.clone(),
            run: run.cloned(),
        };
        protocol::send(&mut control, &start).map_err(|e| failed("control socket", e))?;
        match sut
            .inner
            .reply(isolation.stall_timeout.max(Duration::from_secs(60)))
        {
            Ok(ToHost::Ready {
                name,
                capabilities,
                takes_sample_sets,
                attributes,
                provenance,
            }) => {
                let _ = sut.inner.name.set(name.clone());
                sut.name = name;
                sut.capabilities = capabilities;
                sut.takes_sample_sets = takes_sample_sets;
                sut.attributes = attributes;
                sut.provenance = provenance;
                sut.provenance
                    .push(("plugin_isolation".into(), "process".into()));
                Ok(sut)
            }
            Ok(ToHost::StartFailed { message }) => Err(PluginError::Isolated { message }),
            Ok(other) => Err(PluginError::Isolated {
                message: format!("the plugin process answered {other:?} to start"),
            }),
            Err(why) => Err(PluginError::Isolated {
                message: format!("the plugin process did not start the plugin: {why}"),
            }),
        }
    }

    /// Has the process call the plugin's `load_samples` (`load`) or `unload_samples` with the
    /// samples of `indices`, and waits for it.
    fn sample_set(&self, load: bool, indices: &[usize]) -> Result<(), String> {
        // A plugin without the calls (ABI 1.2) costs no round trip; a process that is gone
        // holds nothing to release (its end already failed the run).
        if !self.takes_sample_sets || !load && self.inner.link.gone.load(Ordering::SeqCst) {
            return Ok(());
        }
        let kind = if load { KIND_LOAD } else { KIND_UNLOAD };
        let gone = || self.inner.cause().unwrap_or_default();
        self.inner
            .push(indices.len() + 1, |i| match i {
                0 => IssueEntry {
                    id: 0,
                    index: indices.len() as u64,
                    kind,
                },
                i => IssueEntry {
                    id: 0,
                    index: indices[i - 1] as u64,
                    kind: 0,
                },
            })
            .map_err(|_| gone())?;
        // The watcher kills a call that stalls; this wait only outlasts it.
        match self
            .inner
            .reply(self.inner.stall_timeout + Duration::from_secs(5))?
        {
            ToHost::SampleSet { error: None } => Ok(()),
            ToHost::SampleSet { error: Some(error) } => Err(error),
            other => Err(format!(
                "the plugin process answered {other:?} to the sample set"
            )),
        }
    }

    /// See [`Inner::leave_completions_to_reader`].
    pub(crate) fn leave_completions_to_reader(&self) {
        self.inner.leave_completions_to_reader();
    }

    /// The tokens after each answer's first (ABI 1.5) go to `reports` (set once).
    pub(crate) fn report_tokens_to(&self, reports: Arc<dyn crate::plugin::TokenReports>) {
        let _ = self.inner.tokens.set(reports);
        let wanted = &self.inner.region.header().tokens_wanted.0;
        wanted.store(1, Ordering::Release);
    }

    /// Single samples' failures (ABI 1.5) go to `reports` (set once) instead of failing the
    /// run.
    pub(crate) fn report_failures_to(&self, reports: Arc<dyn crate::plugin::FailureReports>) {
        let _ = self.inner.failures.set(reports);
    }

    /// Destroys the instance and ends the process, waiting at most `limit` for the plugin's
    /// `destroy`; not `returned` when it had not by then (the process is killed), `returned`
    /// for a process that had already ended (its end failed the run). The process counts the
    /// plugin's callbacks that come after destroy returned.
    pub fn destroy_within(mut self, limit: Duration) -> Destroyed {
        self.destroyed = true;
        let inner = &self.inner;
        inner.link.stopping.store(true, Ordering::SeqCst);
        // A process already gone (and reported) has nothing left to destroy.
        let mut returned = inner.link.gone.load(Ordering::SeqCst);
        let mut late_callbacks = 0;
        if !returned {
            let asked = inner.push(1, |_| IssueEntry {
                kind: KIND_DESTROY,
                ..IssueEntry::default()
            });
            if let (
                Ok(()),
                Ok(ToHost::Destroyed {
                    late_callbacks: late,
                }),
            ) = (asked, inner.reply(limit))
            {
                (returned, late_callbacks) = (true, late);
            }
        }
        if late_callbacks > 0 {
            tracing::error!(
                "plugin {} called the host {late_callbacks} times after its destroy returned: a thread of it outlives destroy",
                self.name
            );
        }
        if !returned && !inner.link.exited.load(Ordering::SeqCst) {
            inner
                .link
                .kill(format!("plugin {} destroy did not return", self.name));
        }
        self.join();
        Destroyed {
            returned,
            late_callbacks,
        }
    }

    fn join(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.inner.link.exited.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for IsolatedSut {
    fn drop(&mut self) {
        if !self.destroyed {
            self.inner.link.stopping.store(true, Ordering::SeqCst);
            self.inner.link.kill("the host dropped the plugin".into());
            self.join();
        }
    }
}

impl Inner {
    /// The next reply on the control socket, waiting at most `limit` (less if the process
    /// dies).
    fn reply(&self, limit: Duration) -> Result<ToHost, String> {
        let replies = self.replies.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no answer within {limit:?}"));
            }
            match replies.recv_timeout(left.min(Duration::from_millis(50))) {
                Ok(reply) => return Ok(reply),
                Err(RecvTimeoutError::Disconnected) => return Err(self.cause_once_known()),
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(cause) = self.cause() {
                        return Err(cause);
                    }
                }
            }
        }
    }

    /// Why the process is gone, when its control socket has closed: the watcher may not have
    /// reaped it yet (a signal, an exit status), so it is given a moment.
    fn cause_once_known(&self) -> String {
        // The watcher names the cause after the reader has taken what the process published
        // (up to a second).
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let named = self
                .link
                .kill_cause
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            if let Some(cause) = named {
                return cause;
            }
            if Instant::now() >= deadline {
                return self.cause().unwrap_or_else(|| "the process ended".into());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Why the process is gone, once it is.
    fn cause(&self) -> Option<String> {
        if !self.link.gone.load(Ordering::SeqCst) {
            return None;
        }
        let cause = self
            .link
            .kill_cause
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        Some(
            cause
                .clone()
                .unwrap_or_else(|| "the plugin process ended".into()),
        )
    }

    /// Writes `count` entries to the issue ring, waiting for room; `Err(written)` when the
    /// process went away first.
    fn push(&self, count: usize, entry: impl Fn(usize) -> IssueEntry) -> Result<(), usize> {
        let ring = &self.region.header().issue;
        // Server's issue threads push at once.
        let mut producer = self.producer.lock().unwrap_or_else(|p| p.into_inner());
        let IssueProducer { mut head, mut tail } = *producer;
        let mut result = Ok(());
        for i in 0..count {
            if head - tail >= ISSUE_SLOTS {
                tail = ring.tail.0.load(Ordering::Acquire);
                if head - tail >= ISSUE_SLOTS {
                    wake(&ring.consumer_asleep.0);
                    let room = || head - ring.tail.0.load(Ordering::Acquire) < ISSUE_SLOTS;
                    while !wait_until(&ring.producer_asleep.0, SPINS, WATCH_EVERY, room) {
                        if self.link.gone.load(Ordering::SeqCst) {
                            break;
                        }
                    }
                    if !room() {
                        result = Err(i);
                        break;
                    }
                    tail = ring.tail.0.load(Ordering::Acquire);
                }
            }
            // SAFETY: the issue ring's producer (under the lock), in a slot the consumer has
            // passed (room checked above).
            unsafe { self.region.issue_slot(head).publish(head, entry(i)) };
            head += 1;
        }
        wake(&ring.consumer_asleep.0);
        *producer = IssueProducer { head, tail };
        result
    }

    /// Hands the process a set of samples as an image in a memory file it maps read-only.
    fn send_image(&self, set: &LoadedSamples) -> Result<(), String> {
        let len = set.image_len();
        let (fd, mut mapping) = Mapping::create("mlperf-host-samples", len)
            .map_err(|e| format!("cannot share the loaded samples ({len} bytes): {e}"))?;
        set.write_image(mapping.bytes_mut());
        drop(mapping);
        let gone = || self.cause().unwrap_or_default();
        self.push(1, |_| IssueEntry {
            kind: KIND_SAMPLES,
            ..IssueEntry::default()
        })
        .map_err(|_| gone())?;
        send_fd(&self.images, fd.as_raw_fd())
            .map_err(|e| format!("cannot hand the loaded samples to the plugin process: {e}"))?;
        match self.reply(self.stall_timeout)? {
            ToHost::SamplesMapped { error: None } => Ok(()),
            ToHost::SamplesMapped { error: Some(error) } => Err(format!(
                "the plugin process could not map the loaded samples: {error}"
            )),
            other => Err(format!(
                "the plugin process answered {other:?} to the loaded samples"
            )),
        }
    }
}

impl PluginBackend for IsolatedSut {
    fn attributes(&self) -> &[(String, String)] {
        &self.attributes
    }

    fn provenance(&self) -> Vec<(String, String)> {
        self.provenance.clone()
    }

    /// The plugin's MLPERF_CAP_* bits, as its process reported them.
    fn capabilities(&self) -> u64 {
        self.capabilities
    }

    /// Has the process size (and touch) its hand-over buffers for a query of `samples`, and
    /// waits for it: untimed, ahead of the test.
    fn reserve_samples(&self, samples: usize) -> bool {
        let asked = self.inner.push(1, |_| IssueEntry {
            id: 0,
            index: samples as u64,
            kind: KIND_RESERVE,
        });
        asked.is_ok()
            && matches!(
                self.inner.reply(self.inner.stall_timeout),
                Ok(ToHost::Reserved { ok: true })
            )
    }

    /// Sends every set `arena` is given to the process, before the load returns.
    fn read_samples_from(&mut self, arena: Arc<SampleArena>) {
        let inner: Weak<Inner> = Arc::downgrade(&self.inner);
        arena.mirror_to(Box::new(move |set| {
            if let Some(inner) = inner.upgrade() {
                if let Err(message) = inner.send_image(set) {
                    inner.link.fail(message, false);
                }
            }
        }));
    }

    fn note_timing(&self, sink: crate::timing::TimingSink) {
        let _ = self.inner.timing.set(sink);
    }

    fn load_samples(&self, indices: &[usize]) -> Result<(), PluginError> {
        self.sample_set(true, indices)
            .map_err(|message| PluginError::Isolated { message })
    }

    fn unload_samples(&self, indices: &[usize]) -> Result<(), PluginError> {
        self.sample_set(false, indices)
            .map_err(|message| PluginError::Isolated { message })
    }
}

impl SystemUnderTest for IsolatedSut {
    fn name(&self) -> &str {
        &self.name
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let link = &self.inner.link;
        if link.completer.arm(completer) {
            return refuse(samples, completer);
        }
        if link.gone.load(Ordering::Relaxed) {
            return refuse(samples, completer);
        }
        // An issuing thread behind schedule issues without waiting in between: it takes the
        // completions that are back as it goes, and says so (the process then does not wake
        // the reader, which would only contend with it for the ring, and for its core). Not a
        // sweep's, which leaves them all to the reader.
        if self.inner.outstanding() && !self.inner.reader_only.load(Ordering::Relaxed) {
            self.inner.mark_polled();
            self.inner.take_completions();
        }
        let key = prepared_key(samples);
        if let Some(timing) = self.inner.timing.get() {
            timing.handed_query(samples);
        }
        let prepared = key.is_some()
            && self
                .inner
                .prepared
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                == key;
        let pushed = match prepared {
            // Sent ahead, untimed: one entry issues it.
            true => self
                .inner
                .push(1, |_| IssueEntry {
                    id: samples[0].id.0,
                    index: samples.len() as u64,
                    kind: KIND_ISSUE_PREPARED,
                })
                .map_err(|_| 0),
            false => self.inner.push(samples.len(), |i| IssueEntry {
                id: samples[i].id.0,
                index: samples[i].index as u64,
                kind: if i == 0 { samples.len() as u64 } else { 0 },
            }),
        };
        let written = pushed.err().unwrap_or(samples.len());
        self.inner
            .issued
            .fetch_add(written as u64, Ordering::Relaxed);
        if written < samples.len() {
            refuse(&samples[written..], completer);
        }
    }

    fn prepare_query(&self, samples: &[QuerySample]) {
        let Some(key) = prepared_key(samples) else {
            return;
        };
        let mut prepared = self
            .inner
            .prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *prepared = None;
        if self.inner.link.gone.load(Ordering::Relaxed) {
            return;
        }
        let sent = self.inner.push(samples.len() + 1, |i| match i {
            0 => IssueEntry {
                id: 0,
                index: samples.len() as u64,
                kind: KIND_PREPARE,
            },
            i => IssueEntry {
                id: samples[i - 1].id.0,
                index: samples[i - 1].index as u64,
                kind: 0,
            },
        });
        if sent.is_ok() {
            *prepared = Some(key);
        }
    }

    fn issuer_idle(&self) {
        self.inner.poll_completions(None);
    }

    fn issuer_idle_until(&self, deadline: Instant) {
        self.inner.poll_completions(Some(deadline));
    }

    fn flush_queries(&self) {
        let asked = self.inner.flushes_asked.fetch_add(1, Ordering::Relaxed) + 1;
        let pushed = self.inner.push(1, |_| IssueEntry {
            kind: KIND_FLUSH,
            ..IssueEntry::default()
        });
        if pushed.is_ok() {
            self.inner.wait_for_flush(asked);
        }
    }
}

/// Queries at least this large (Offline's) are sent to the plugin's process when the engine
/// prepares them, outside the timed window, as in-process plugins get them converted then.
const PREPARE_AT: usize = 1024;

/// The key of a query worth sending ahead: its first sample id and length.
fn prepared_key(samples: &[QuerySample]) -> Option<(u64, usize)> {
    (samples.len() >= PREPARE_AT).then(|| (samples[0].id.0, samples.len()))
}

/// In the child between fork and exec: the passed descriptors to 3, 4 and 5, whatever their
/// numbers were (moved out of the way first, so no dup2 overwrites another's source).
fn place_descriptors(passed: [RawFd; 3]) -> std::io::Result<()> {
    let mut high = [0; 3];
    for (slot, fd) in high.iter_mut().zip(passed) {
        // SAFETY: fcntl on descriptors open in this process.
        *slot = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
        if *slot < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    for (fd, target) in high.into_iter().zip([REGION_FD, CONTROL_FD, IMAGES_FD]) {
        // SAFETY: as above; dup2 clears close-on-exec on the target.
        if unsafe { libc::dup2(fd, target) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
