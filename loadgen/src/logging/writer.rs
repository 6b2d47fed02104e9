//! The log-writing thread: detail lines and accuracy entries arrive over a channel and are
//! written off the issuing thread, buffered, and flushed often enough that a run that dies
//! leaves its evidence behind.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::accuracy::AccuracyFileWriter;
use super::detail::DetailEntry;
use crate::settings::{LogOutputSettings, DEFAULT_PREFIX};
use crate::types::AccuracyRecord;

/// What the engine sends to the writer.
pub(crate) enum LogMessage {
    Detail(DetailEntry),
    /// Holds back later detail lines until the matching `Release` (keys the official log
    /// prints before issuing but that are only known once counted).
    Hold,
    Release(Vec<DetailEntry>),
    Accuracy(AccuracyRecord),
    /// Trace events, already formatted, one per line.
    Trace(String),
    /// Ends the writer even while clones of the sender live on (a SUT may keep a completer).
    Close,
}

/// The paths of one test's log files.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogFiles {
    pub summary: PathBuf,
    pub detail: PathBuf,
    pub accuracy: PathBuf,
    pub trace: PathBuf,
    pub result: PathBuf,
}

impl LogFiles {
    /// `<outdir>/<prefix>[<datetime>_]{summary,detail}<suffix>.txt` and so on, as upstream.
    pub fn new(outdir: &Path, settings: &LogOutputSettings, test_datetime: &str) -> Self {
        let stem = |name: &str, extension: &str| {
            let mut file = settings.prefix.clone();
            if settings.prefix_with_datetime {
                file.push_str(test_datetime);
                file.push('_');
            }
            file.push_str(name);
            file.push_str(&settings.suffix);
            file.push_str(extension);
            outdir.join(file)
        };
        LogFiles {
            summary: stem("summary", ".txt"),
            detail: stem("detail", ".txt"),
            accuracy: stem("accuracy", ".json"),
            trace: stem("trace", ".json"),
            // Ours, not upstream's: `result.json` by one name for programs, but for a prefix
            // of the caller's or a datetime, which tell runs in one folder apart.
            result: if settings.prefix == DEFAULT_PREFIX && !settings.prefix_with_datetime {
                outdir.join(format!("result{}.json", settings.suffix))
            } else {
                stem("result", ".json")
            },
        }
    }

    /// The files of a test logged with the default output settings (`mlperf_log_detail.txt`
    /// and so on): what every other program reads back.
    pub fn standard(outdir: &Path) -> Self {
        LogFiles::new(outdir, &LogOutputSettings::default(), "")
    }
}

/// How often buffered detail lines reach the file at the latest.
const FLUSH_INTERVAL: Duration = Duration::from_millis(200);

pub(crate) struct LogWriter {
    sender: Option<mpsc::Sender<LogMessage>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl LogWriter {
    /// Creates the files up front, so an unwritable directory fails before anything runs.
    pub(crate) fn open(files: &LogFiles, pid: u32, trace: Option<u64>) -> io::Result<Self> {
        let detail = LineFile::new(create(&files.detail)?, &files.detail);
        let accuracy = AccuracyFileWriter::new(create(&files.accuracy)?)
            .map_err(|e| named(&files.accuracy, e))?;
        let trace = match trace {
            Some(origin_us) => {
                let mut file = create(&files.trace)?;
                file.write_all(super::trace::HEADER.as_bytes())
                    .map_err(|e| named(&files.trace, e))?;
                Some((file, origin_us))
            }
            None => None,
        };
        let files = files.clone();
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("mlperf-log".to_string())
            .spawn(move || {
                let mut detail = detail;
                write_loop(&receiver, &mut detail, accuracy, trace, pid, &files)
                    .map_err(|e| detail.failed(e))
            })?;
        Ok(LogWriter {
            sender: Some(sender),
            thread: Some(thread),
        })
    }

    pub(crate) fn sender(&self) -> mpsc::Sender<LogMessage> {
        self.sender.clone().expect("sender lives until finish")
    }

    /// Closes the channel and waits for everything to be written.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.close()
    }

    fn close(&mut self) -> io::Result<()> {
        if let Some(sender) = self.sender.take() {
            let _ = sender.send(LogMessage::Close);
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the log writer thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn create(path: &Path) -> io::Result<BufWriter<File>> {
    create_fresh(path)
        .map(|file| BufWriter::with_capacity(1 << 16, file))
        .map_err(|e| named(path, e))
}

/// `e`, its message naming `path`.
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The detail log: written whole lines at a time, so that a write that fails (a full disk, a
/// file size limit) can leave the file cut back to its last whole line rather than mid-line,
/// where a reader would take the torn line for a corrupt log.
struct LineFile {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    /// Bytes handed to the buffer, and of those, the bytes known to be in the file.
    accepted: u64,
    durable: u64,
    /// Where each line not yet known to be in the file ends (a failed flush may have written
    /// some of them).
    pending_ends: Vec<u64>,
}

impl LineFile {
    fn new(out: BufWriter<File>, path: &Path) -> LineFile {
        LineFile {
            out: Some(out),
            path: path.to_path_buf(),
            accepted: 0,
            durable: 0,
            pending_ends: Vec::new(),
        }
    }

    fn write_line(&mut self, line: &str) -> io::Result<()> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| io::Error::other("closed"))?;
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        self.accepted += line.len() as u64 + 1;
        self.pending_ends.push(self.accepted);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| io::Error::other("closed"))?;
        out.flush()?;
        self.durable = self.accepted;
        self.pending_ends.clear();
        Ok(())
    }

    /// After `e` failed a write: the buffer dropped unwritten, the file cut back to the last
    /// whole line known written, and `e` naming the file and what is left of it.
    fn failed(&mut self, e: io::Error) -> io::Error {
        let Some(out) = self.out.take() else {
            return e;
        };
        let (file, _unwritten) = out.into_parts();
        let written = file.metadata().map_or(self.durable, |m| m.len());
        let whole = (self.pending_ends.iter().rev())
            .find(|&&end| end <= written)
            .map_or(self.durable, |&end| end.max(self.durable));
        let cut = match file.set_len(whole) {
            Ok(()) => format!("cut back to its last whole line, at {whole} bytes"),
            Err(_) => "its last line may be torn".to_string(),
        };
        // An error from another file names it already.
        if e.to_string().contains(&*self.path.to_string_lossy()) {
            return io::Error::new(e.kind(), format!("{e}; the detail log is {cut}"));
        }
        io::Error::new(e.kind(), format!("{}: {e}; {cut}", self.path.display()))
    }
}

fn write_loop(
    receiver: &mpsc::Receiver<LogMessage>,
    detail: &mut LineFile,
    mut accuracy: AccuracyFileWriter<BufWriter<File>>,
    mut trace: Option<(BufWriter<File>, u64)>,
    pid: u32,
    files: &LogFiles,
) -> io::Result<()> {
    let accuracy_error = |e| named(&files.accuracy, e);
    let trace_error = |e| named(&files.trace, e);
    let mut held: Option<Vec<DetailEntry>> = None;
    let mut last_flush = Instant::now();
    loop {
        let message = match receiver.recv_timeout(FLUSH_INTERVAL) {
            Ok(message) => Some(message),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let mut urgent = false;
        match message {
            None => {}
            Some(LogMessage::Detail(entry)) => {
                // Errors reach the file at once, as upstream flushes them.
                urgent = entry.is_error;
                match held.as_mut() {
                    Some(queue) => queue.push(entry),
                    None => write_detail(detail, &entry, pid)?,
                }
            }
            Some(LogMessage::Hold) => {
                held.get_or_insert_with(Vec::new);
            }
            Some(LogMessage::Release(entries)) => {
                for entry in entries.iter().chain(held.take().unwrap_or_default().iter()) {
                    write_detail(detail, entry, pid)?;
                }
            }
            Some(LogMessage::Accuracy(record)) => {
                accuracy.write(&record).map_err(accuracy_error)?;
            }
            Some(LogMessage::Trace(events)) => {
                if let Some((file, _)) = trace.as_mut() {
                    file.write_all(events.as_bytes()).map_err(trace_error)?;
                }
            }
            Some(LogMessage::Close) => break,
        }
        if urgent || last_flush.elapsed() >= FLUSH_INTERVAL {
            detail.flush()?;
            accuracy.flush().map_err(accuracy_error)?;
            last_flush = Instant::now();
        }
    }
    for entry in held.take().unwrap_or_default() {
        write_detail(detail, &entry, pid)?;
    }
    detail.flush()?;
    if let Some((mut file, origin_us)) = trace {
        file.write_all(super::trace::footer(origin_us).as_bytes())
            .and_then(|()| file.flush())
            .map_err(trace_error)?;
    }
    accuracy.finish().map_err(accuracy_error)
}

fn write_detail(out: &mut LineFile, entry: &DetailEntry, pid: u32) -> io::Result<()> {
    out.write_line(&entry.to_line(pid))
}

/// A new file at `path`, never written through a symlink: what was there (a file, or a
/// symlink, which is removed rather than followed) goes first, and the file is created
/// exclusively, so a symlink put there meanwhile makes it fail instead of redirecting the log.
fn create_fresh(path: &Path) -> io::Result<File> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Writes `contents` to a temporary name beside `path`, then renames it into place, so a
/// reader never sees half a file.
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let write = || -> io::Result<()> {
        let mut file = create_fresh(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    };
    write().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}
