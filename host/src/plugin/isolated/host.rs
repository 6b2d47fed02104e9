//! The host's side of an isolated plugin: the plugin's process started and watched, queries
//! written to the issue ring, completions read from the completion ring and handed to the
//! engine. Whatever happens to the process (a crash, `exit()`, an OOM kill, a stop, a call
//! that never returns) ends the run INVALID with the cause, and the host goes on to write
//! every log.

use std::io::BufReader;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::HumanCount;

use super::child::{CONTROL_FD, IMAGES_FD, REGION_FD};
use super::protocol::{self, TimedModule, ToHost, ToPlugin};
use super::region::*;
use super::shm::{send_fd, Mapping};
use crate::loadgen::{Completer, QuerySample, QuerySampleResponse, ResponseId, SystemUnderTest};
use crate::plugin::sut::refuse;
use crate::plugin::PluginBackend;
use crate::plugin::{Destroyed, PluginError};
use crate::samples::{LoadedSamples, SampleArena};

/// The hidden subcommand the plugin's process runs.
pub const SUBCOMMAND: &str = "isolated-plugin";

/// A process whose heartbeat has not advanced for this long is stopped (or frozen) and is
/// killed.
const HEARTBEAT_STALL: Duration = Duration::from_millis(1_500);
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
    completer: OnceLock<Completer>,
    /// A failure before the first issue (lost: the process is gone), handed over then.
    early_failure: Mutex<Option<(String, bool)>>,
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
        if let Some(completer) = self.completer.get() {
            return match lost {
                true => completer.fail_lost(message),
                false => completer.fail(message),
            };
        }
        let mut early = self.early_failure.lock().unwrap_or_else(|p| p.into_inner());
        early.get_or_insert((message, lost));
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
    /// `flush_queries` calls sent to the plugin's process (a running count).
    flushes_asked: AtomicU64,
    stall_timeout: Duration,
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
            completer: OnceLock::new(),
            early_failure: Mutex::new(None),
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
            flushes_asked: AtomicU64::new(0),
            stall_timeout: isolation.stall_timeout,
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

    fn load_samples(&self, indices: &[usize]) -> Result<(), String> {
        self.sample_set(true, indices)
    }

    fn unload_samples(&self, indices: &[usize]) -> Result<(), String> {
        self.sample_set(false, indices)
    }
}

impl SystemUnderTest for IsolatedSut {
    fn name(&self) -> &str {
        &self.name
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let link = &self.inner.link;
        if link.completer.get().is_none() {
            link.completer.get_or_init(|| completer.clone());
            let early = link
                .early_failure
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some((message, lost)) = early {
                link.fail(message, lost);
                return refuse(samples, completer);
            }
        }
        if link.gone.load(Ordering::Relaxed) {
            return refuse(samples, completer);
        }
        // An issuing thread behind schedule issues without waiting in between: it takes the
        // completions that are back as it goes, and says so (the process then does not wake
        // the reader, which would only contend with it for the ring, and for its core).
        if self.inner.outstanding() {
            self.inner.mark_polled();
            self.inner.take_completions();
        }
        let key = prepared_key(samples);
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

/// Watches the process until it exits: its exit, a stopped heartbeat and a call that does
/// not return end the run.
fn watch(mut child: Child, inner: &Inner) {
    let link = &inner.link;
    let header = inner.region.header();
    let mut beat = header.heartbeat.0.load(Ordering::Relaxed);
    let mut beat_seen = Instant::now();
    let mut call_seen = (0, 0, Instant::now());
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return exited(inner, status),
            Ok(None) => {}
            Err(error) => {
                tracing::error!(%error, "cannot watch the plugin process");
                return;
            }
        }
        let now = header.heartbeat.0.load(Ordering::Relaxed);
        if now != beat {
            (beat, beat_seen) = (now, Instant::now());
        } else if beat != 0 && beat_seen.elapsed() > HEARTBEAT_STALL {
            link.kill(format!(
                "plugin process stopped responding (no heartbeat for {:.1} s) after {} samples",
                HEARTBEAT_STALL.as_secs_f64(),
                HumanCount(link.completed.load(Ordering::Relaxed))
            ));
        }
        // A call stalls when it runs on with no sample completing: one call may answer a
        // whole Offline query inline.
        let calls = header.calls.0.load(Ordering::Acquire);
        let completed = link.completed.load(Ordering::Relaxed);
        if (calls, completed) != (call_seen.0, call_seen.1) {
            call_seen = (calls, completed, Instant::now());
        } else if calls % 2 == 1 && call_seen.2.elapsed() > inner.stall_timeout {
            let call = call_name(header.call.0.load(Ordering::Relaxed));
            link.kill(format!(
                "plugin {} {call} has not returned after {:?} (the plugin process was killed after {} samples)",
                link.plugin,
                inner.stall_timeout,
                HumanCount(completed)
            ));
        }
        std::thread::sleep(WATCH_EVERY);
    }
}

fn exited(inner: &Inner, status: ExitStatus) {
    let link = &inner.link;
    let orderly = link.stopping.load(Ordering::SeqCst) && status.success();
    let killed = link
        .kill_cause
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    link.gone.store(true, Ordering::SeqCst);
    link.exited.store(true, Ordering::SeqCst);
    // The completions published before the exit count: the reader takes them first.
    let deadline = Instant::now() + Duration::from_secs(1);
    while !link.drained.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let cause = killed.unwrap_or_else(|| {
        let samples = HumanCount(link.completed.load(Ordering::Relaxed));
        format!("plugin process {} after {samples} samples", ended(status))
    });
    if !orderly {
        tracing::error!("{cause}");
        link.kill_cause
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(cause.clone());
        // Wake an issuer waiting for room.
        wake(&inner.region.header().issue.producer_asleep.0);
        link.fail(cause, true);
    }
    link.exit_handled.store(true, Ordering::SeqCst);
}

fn read_control(control: UnixStream, link: &Link, replies: mpsc::Sender<ToHost>) {
    let mut control = BufReader::new(control);
    loop {
        match protocol::receive::<ToHost>(&mut control) {
            Ok(Some(reply)) => {
                let _ = replies.send(reply);
            }
            Ok(None) => return,
            Err(error) => {
                link.fail(format!("plugin process: {error}"), false);
                return;
            }
        }
    }
}

/// Responses are handed to the engine in batches of at most this many.
const BATCH: usize = 256;

/// Rounds the host's reader spins before it sleeps: the issuing thread takes completions
/// itself while it waits for a query, so the reader mostly serves plugins that complete from
/// threads of their own.
const READER_SPINS: u32 = 500;
/// Rounds the issuing thread polls for a completion when it is about to wait (a plugin
/// answering inline answers within them; a slower one is left to the reader).
const ISSUER_POLLS: u32 = 2_000;

/// How long a call waits for the report of a process that is gone.
const EXIT_PATIENCE: Duration = Duration::from_secs(5);

/// Reads the completion ring until the process has exited and the ring is empty. While the
/// issuing thread polls, the completions are its to take: the reader sleeps, so that it takes
/// no core from the issuing thread or the plugin's process.
fn receive_completions(inner: &Inner) {
    let header = inner.region.header();
    let link = &inner.link;
    let polled = || header.done_polled.0.load(Ordering::Relaxed) != 0;
    loop {
        if !polled() {
            match inner.take_completions() {
                Some(0) | None => {}
                Some(_) => continue,
            }
        }
        if link.exited.load(Ordering::SeqCst) && !inner.completion_ready() {
            if inner.take_completions() == Some(0) {
                link.drained.store(true, Ordering::SeqCst);
                return;
            }
            continue;
        }
        let spins = if polled() { 0 } else { READER_SPINS };
        let woken = wait_until(
            &header.done.consumer_asleep.0,
            spins,
            Duration::from_millis(50),
            || !polled() && inner.completion_ready(),
        );
        if woken && inner.consuming.load(Ordering::Relaxed) {
            // The issuing thread is taking them.
            std::thread::yield_now();
        } else if !woken && inner.completion_ready() {
            // Left waiting a whole timeout while the issuing thread polls: taken anyway.
            inner.take_completions();
        }
    }
}

impl Inner {
    /// Whether samples written to the issue ring have not come back yet.
    #[inline]
    fn outstanding(&self) -> bool {
        self.issued.load(Ordering::Relaxed) != self.link.completed.load(Ordering::Relaxed)
    }

    /// Tells the process that the issuing thread takes the completions itself. Left set while
    /// it comes back soon (every issuing thread polls before it waits): a store per query
    /// would move the flag's cache line between the processes.
    #[inline]
    fn mark_polled(&self) {
        let polled = &self.region.header().done_polled.0;
        if polled.load(Ordering::Relaxed) == 0 {
            polled.store(1, Ordering::SeqCst);
        }
    }

    /// Returns once the plugin's `flush_queries` has returned `asked` times, as the call
    /// returns in-process (one that never returns is the watcher's to end: it kills the
    /// process after the stall timeout), taking the completions that come meanwhile.
    fn wait_for_flush(&self, asked: u64) {
        let flushes = &self.region.header().flushes.0;
        let mut spins = 0u32;
        // A process killed (or dead) in the call: not before its failure is reported, or the
        // series could end VALID first.
        let mut gone_since = None;
        let mut ended = || {
            if self.link.exit_handled.load(Ordering::SeqCst) {
                return true;
            }
            // Should the watcher never report (it cannot wait on the process), not forever.
            let gone = self.link.gone.load(Ordering::SeqCst);
            gone && gone_since.get_or_insert_with(Instant::now).elapsed() > EXIT_PATIENCE
        };
        while flushes.load(Ordering::Acquire) < asked && !ended() {
            self.take_completions();
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    /// Whether the completion ring holds an entry not taken yet.
    #[inline]
    fn completion_ready(&self) -> bool {
        let tail = self.region.header().done.tail.0.load(Ordering::Acquire);
        self.region.done_slot(tail).holds(tail)
    }

    /// Hands the engine what the completion ring holds, unless another thread is at it
    /// (`None`); returns how many entries were taken.
    fn take_completions(&self) -> Option<u64> {
        // Nothing to take: no need for the (contended) flag.
        if !self.completion_ready() {
            return Some(0);
        }
        if self
            .consuming
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let header = self.region.header();
        let ring = &header.done;
        let link = &self.link;
        let start = ring.tail.0.load(Ordering::Relaxed);
        let mut tail = start;
        // Not initialised up front: that alone would cost more than a SingleStream query.
        let mut batch = [const { MaybeUninit::<QuerySampleResponse<'_>>::uninit() }; BATCH];
        let mut released = header.arena_tail.0.load(Ordering::Relaxed);
        loop {
            let mut kind = None;
            let mut filled = 0;
            let mut taken = 0;
            let mut emptied = false;
            while filled < BATCH {
                // SAFETY: the completion ring's one consumer (holding `consuming`).
                let Some(entry) = (unsafe { self.region.done_slot(tail).take(tail) }) else {
                    emptied = true;
                    break;
                };
                tail += 1;
                taken += 1;
                released = released.max(entry.offset.saturating_add(entry.length()));
                if entry.kind() == DONE_BATCH {
                    deliver(link, kind, written(&batch, filled));
                    (kind, filled) = (None, 0);
                    self.deliver_record(&entry, &mut batch);
                    // Its room is released before the next is read.
                    break;
                }
                if kind.is_some_and(|k| k != entry.kind()) {
                    deliver(link, kind, written(&batch, filled));
                    filled = 0;
                }
                kind = Some(entry.kind());
                batch[filled].write(QuerySampleResponse::with_tokens(
                    ResponseId(entry.id),
                    response_bytes(self, &entry),
                    entry.n_tokens(),
                ));
                filled += 1;
            }
            if taken == 0 {
                break;
            }
            deliver(link, kind, written(&batch, filled));
            header.arena_tail.0.store(released, Ordering::Release);
            ring.tail.0.store(tail, Ordering::Release);
            wake(&ring.producer_asleep.0);
            if emptied {
                break;
            }
        }
        self.consuming.store(false, Ordering::Release);
        Some(tail - start)
    }

    /// The issuing thread is about to wait (until `deadline`, when the next query is due):
    /// while samples are outstanding, it takes their completions itself for a short while,
    /// sparing the hand-over to the reader thread.
    fn poll_completions(&self, deadline: Option<Instant>) {
        if !self.outstanding() {
            return;
        }
        let header = self.region.header();
        let polled = &header.done_polled.0;
        self.mark_polled();
        let mut taken = 0;
        let mut due = false;
        for _ in 0..ISSUER_POLLS {
            taken += self.take_completions().unwrap_or(0);
            let settled = taken > 0 && !self.completion_ready();
            match deadline {
                // Waiting for completions: one is enough.
                None if settled => break,
                // Waiting for the next query: until nothing is outstanding or it is due.
                Some(deadline) => {
                    if settled && !self.outstanding() {
                        break;
                    }
                    if Instant::now() >= deadline {
                        due = true;
                        break;
                    }
                }
                None => {}
            }
            std::hint::spin_loop();
        }
        if !due && self.outstanding() {
            // A longer wait: the reader takes the rest, woken by the process from now on.
            polled.store(0, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            // A completion published while the producer saw the poll: the reader takes it.
            if self.completion_ready() {
                wake_anyway(&header.done.consumer_asleep.0);
            }
        }
    }

    /// Hands the engine the completions of a [`BatchRecord`], `batch` at a time; a corrupt
    /// record (the plugin wrote over the shared region) fails the run where it goes wrong.
    fn deliver_record<'a>(
        &'a self,
        entry: &DoneEntry,
        batch: &mut [MaybeUninit<QuerySampleResponse<'a>>; BATCH],
    ) {
        let corrupt = || {
            self.link.fail(
                format!(
                    "plugin process wrote a corrupt batch of completions ({} of them, {} bytes at {})",
                    entry.id,
                    entry.length(),
                    entry.offset
                ),
                false,
            )
        };
        let length = entry.length();
        let plain = entry.n_tokens() != 0;
        let described = match plain {
            true => BatchRecord::ID_BYTES,
            false => BatchRecord::DESCRIBED_BYTES,
        };
        let at = entry.offset % ARENA_BYTES;
        let n = entry.id;
        if length > MAX_ISOLATED_RESPONSE
            || at + length > ARENA_BYTES
            || n.checked_mul(described).is_none_or(|bytes| bytes > length)
        {
            return corrupt();
        }
        let n = n as usize;
        let record = self.region.arena(entry.offset, length) as *const u8;
        // Reads within the record's `length` bytes of the arena (checked above for the fixed
        // parts, per response for the bytes), which the process does not reuse until the host
        // releases them after delivery.
        let read_u32 = |at: usize| {
            // SAFETY: `at` within the record's fixed parts (callers).
            unsafe { (record.add(at) as *const u32).read_unaligned() }
        };
        let mut data_at = 16 * n;
        for first in (0..n).step_by(BATCH) {
            let count = BATCH.min(n - first);
            for (slot, i) in batch.iter_mut().zip(first..first + count) {
                // SAFETY: the i-th id, i < n, within the record (checked above).
                let id = unsafe { (record.add(8 * i) as *const u64).read_unaligned() };
                let (bytes, n_tokens): (&'a [u8], i64) = if plain {
                    (&[], 0)
                } else {
                    let bytes = read_u32(8 * n + 4 * i) as usize;
                    let n_tokens = read_u32(12 * n + 4 * i) as i32;
                    if (data_at + bytes) as u64 > length {
                        return corrupt();
                    }
                    // SAFETY: `bytes` bytes from `data_at`, within the record (checked).
                    let data = unsafe { std::slice::from_raw_parts(record.add(data_at), bytes) };
                    data_at += bytes;
                    (data, i64::from(n_tokens))
                };
                slot.write(QuerySampleResponse::with_tokens(
                    ResponseId(id),
                    bytes,
                    n_tokens,
                ));
            }
            deliver(&self.link, Some(DONE_COMPLETE), written(batch, count));
        }
    }
}

/// The first `filled` responses of `batch`.
fn written<'a, 'b>(
    batch: &'b [MaybeUninit<QuerySampleResponse<'a>>],
    filled: usize,
) -> &'b [QuerySampleResponse<'a>] {
    debug_assert!(filled <= batch.len());
    // SAFETY: the first `filled` elements are written (callers).
    unsafe { std::slice::from_raw_parts(batch.as_ptr() as *const QuerySampleResponse<'a>, filled) }
}

/// A completion's bytes in the arena; a corrupt entry (the plugin wrote over the shared
/// region) reads as empty and fails the run.
fn response_bytes<'a>(inner: &'a Inner, entry: &DoneEntry) -> &'a [u8] {
    let length = entry.length();
    if length == 0 {
        return &[];
    }
    let at = entry.offset % ARENA_BYTES;
    if length > MAX_ISOLATED_RESPONSE || at + length > ARENA_BYTES {
        inner.link.fail(
            format!(
                "plugin process wrote a corrupt completion (sample id {}, {} bytes at {})",
                entry.id, length, entry.offset
            ),
            false,
        );
        return &[];
    }
    // SAFETY: within the arena (checked); the process does not reuse these bytes until the
    // host releases them after delivery.
    unsafe { std::slice::from_raw_parts(inner.region.arena(entry.offset, length), length as usize) }
}

fn deliver(link: &Link, kind: Option<u64>, responses: &[QuerySampleResponse<'_>]) {
    if responses.is_empty() {
        return;
    }
    if kind == Some(DONE_FAIL) {
        // Also before the first issue: kept for it.
        for response in responses {
            link.fail(String::from_utf8_lossy(response.data).into_owned(), false);
        }
        return;
    }
    let Some(completer) = link.completer.get() else {
        return;
    };
    match kind {
        Some(DONE_COMPLETE) => {
            completer.query_samples_complete(responses);
            // Only the thread holding `consuming` delivers: no locked increment needed.
            let completed = link.completed.load(Ordering::Relaxed);
            link.completed
                .store(completed + responses.len() as u64, Ordering::Relaxed);
        }
        Some(DONE_FIRST_TOKEN) => completer.first_token_complete(responses),
        _ => {}
    }
}

/// How a process ended, as the messages say it: `killed by SIGSEGV`, `exited with status 0`.
pub(super) fn ended(status: ExitStatus) -> String {
    match (status.signal(), status.code()) {
        (Some(signal), _) => format!("killed by {}", signal_name(signal)),
        (None, Some(code)) => format!("exited with status {code}"),
        _ => "ended".into(),
    }
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL (the out-of-memory killer, or another process)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}
