//! `rapl[:ZONE,...][?period_ms=N&root=PATH]`: the CPU's RAPL energy counters through Linux
//! powercap (`/sys/class/powercap/intel-rapl:N`, sub-zones `intel-rapl:N:M`; AMD CPUs appear
//! there too). A component figure, never wall power.
//!
//! - No ZONE: every top-level package zone (`package-N`), summed. A ZONE is a directory
//!   (`intel-rapl:0:2`), a zone name (`dram`: every package's), a parent-qualified name
//!   (`package-0/dram`) or a name without its index (`package`: all packages). The selected
//!   zones are summed as they are: selecting `package` and `core` counts the cores twice.
//! - `period_ms`: the poll period, 100 ms by default. RAPL counters update about every
//!   millisecond and wrap at `max_energy_range_uj`, after minutes at a package's draw; a wrap
//!   between two polls is corrected, two are not, so open refuses a period in which a zone's
//!   counter could wrap at [`MOST_ZONE_WATTS`].
//! - `root`: the sysfs root, `/sys` by default (tests point it at a fake tree).
//!
//! This file also holds what the on-host sources share (`hwmon`, `nvml`): the spec's argument,
//! sysfs reads that name the file in their errors, the wrap-correcting counter and the poller
//! that reads a [`Meter`] on its own thread into a [`Trace`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::{PowerSource, Provenance, Scope, SourceError, SourceInfo};
use crate::trace::{PowerSample, Trace};

/// The source `rapl[:ZONE,...][?period_ms=N&root=PATH]` names.
pub fn open(spec: &str, argument: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    let argument = Argument::parse(spec, argument, &["period_ms", "root"])?;
    let root = argument.option("root").unwrap_or("/sys");
    let source = Rapl::with_root(
        spec,
        Path::new(root),
        &argument.selectors,
        argument.period(spec)?,
    )?;
    Ok(Box::new(source))
}

/// More than any one RAPL zone draws: the wrap check's bound.
pub const MOST_ZONE_WATTS: f64 = 1000.0;

/// RAPL zones under a sysfs root, summed, polled on their own thread.
pub struct Rapl(PolledSource);

impl Rapl {
    /// Opens the zones `selectors` name (all packages when empty) under
    /// `sysfs_root/class/powercap`, reading each counter once so that a missing or root-only
    /// counter fails here rather than at the end of a run.
    pub fn with_root(
        name: &str,
        sysfs_root: &Path,
        selectors: &[String],
        period: Duration,
    ) -> Result<Rapl, SourceError> {
        let error = |message: String| spec_error(name, message);
        let powercap = sysfs_root.join("class/powercap");
        let zones = list_zones(&powercap).map_err(error)?;
        let selected = select_zones(&powercap, &zones, selectors).map_err(error)?;
        let mut counters = Vec::new();
        for zone in &selected {
            let range_file = zone.directory.join("max_energy_range_uj");
            let range = read_integer(&range_file).map_err(|e| error(e.to_string()))?;
            let wrap_seconds = range as f64 * 1e-6 / MOST_ZONE_WATTS;
            if wrap_seconds <= period.as_secs_f64() {
                return Err(error(format!(
                    "{} says the counter wraps every {} µJ, which takes {wrap_seconds:.3} s \
                     at {MOST_ZONE_WATTS} W: poll faster than every {period:?}",
                    range_file.display(),
                    range
                )));
            }
            let energy_file = zone.directory.join("energy_uj");
            read_integer(&energy_file).map_err(|e| error(energy_read_error(&powercap, e)))?;
            counters.push((energy_file, range));
        }
        let labels: Vec<&str> = selected.iter().map(|z| z.label.as_str()).collect();
        let listing: Vec<String> = selected
            .iter()
            .map(|z| format!("{} ({})", z.file_name, z.label))
            .collect();
        let info = SourceInfo {
            name: name.to_owned(),
            scope: Scope::Component(format!("CPU {} (RAPL)", labels.join(" + "))),
            provenance: Provenance::OnHost,
            period,
            identity: format!(
                "RAPL energy counters, Linux powercap: {}",
                listing.join(", ")
            ),
        };
        Ok(Rapl(PolledSource::new(
            info,
            Box::new(RaplMeter { counters }),
        )))
    }
}

impl PowerSource for Rapl {
    fn info(&self) -> SourceInfo {
        self.0.info()
    }
    fn start(&mut self, mark: &str) -> Result<(), SourceError> {
        self.0.start(mark)
    }
    fn stop(&mut self) -> Result<Trace, SourceError> {
        self.0.stop()
    }
}

/// A powercap zone directory.
#[derive(Debug, Clone)]
struct Zone {
    /// `intel-rapl:0:2`.
    file_name: String,
    directory: PathBuf,
    /// `intel-rapl` or `intel-rapl-mmio` (the same package counters through MMIO).
    control: String,
    /// `[0]` for a package zone, `[0, 2]` for its sub-zone 2.
    indices: Vec<u32>,
    /// What its `name` file says: `package-0`, `dram`, `psys`.
    name: String,
    /// The name, qualified by its parent's for a sub-zone: `package-0/dram`.
    label: String,
}

/// Every RAPL zone under `powercap`, in index order.
fn list_zones(powercap: &Path) -> Result<Vec<Zone>, String> {
    let no_zones = || {
        format!(
            "no RAPL zones under {} (no RAPL driver loaded, a CPU without RAPL, or a container \
             that hides /sys/devices/virtual/powercap)",
            powercap.display()
        )
    };
    let entries = fs::read_dir(powercap).map_err(|_| no_zones())?;
    let mut zones = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some((control, indices)) = file_name.split_once(':') else {
            continue;
        };
        if control != "intel-rapl" && control != "intel-rapl-mmio" {
            continue;
        }
        let Ok(indices) = indices
            .split(':')
            .map(str::parse)
            .collect::<Result<Vec<u32>, _>>()
        else {
            continue;
        };
        let directory = powercap.join(&file_name);
        let name = read_text(&directory.join("name")).map_err(|e| e.to_string())?;
        zones.push(Zone {
            control: control.to_owned(),
            label: name.clone(),
            file_name,
            directory,
            indices,
            name,
        });
    }
    zones.sort_by(|a, b| (&a.control, &a.indices).cmp(&(&b.control, &b.indices)));
    let parents = zones.clone();
    for zone in zones.iter_mut().filter(|z| z.indices.len() > 1) {
        if let Some(parent) = parents
            .iter()
            .find(|p| p.control == zone.control && p.indices == zone.indices[..1])
        {
            zone.label = format!("{}/{}", parent.name, zone.name);
        }
    }
    if zones.is_empty() {
        return Err(no_zones());
    }
    Ok(zones)
}

/// The zones the selectors name, or the packages when there are none. The MMIO zones repeat
/// the package counters, so only their directory name selects them.
fn select_zones(
    powercap: &Path,
    zones: &[Zone],
    selectors: &[String],
) -> Result<Vec<Zone>, String> {
    let found = || {
        zones
            .iter()
            .map(|z| format!("{} ({})", z.file_name, z.label))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if selectors.is_empty() {
        let packages: Vec<Zone> = zones
            .iter()
            .filter(|z| z.control == "intel-rapl" && z.indices.len() == 1)
            .filter(|z| z.name.starts_with("package"))
            .cloned()
            .collect();
        if packages.is_empty() {
            return Err(format!(
                "no RAPL package zone under {}; found: {}. Name the zones to read, e.g. rapl:psys",
                powercap.display(),
                found()
            ));
        }
        return Ok(packages);
    }
    let matches = |zone: &Zone, selector: &str| {
        let by_name = zone.control == "intel-rapl"
            && (zone.name == selector
                || zone.label == selector
                || zone
                    .name
                    .rsplit_once('-')
                    .is_some_and(|(stem, index)| stem == selector && index.parse::<u32>().is_ok()));
        by_name || zone.file_name == selector
    };
    for selector in selectors {
        if !zones.iter().any(|zone| matches(zone, selector)) {
            return Err(format!(
                "no RAPL zone {selector:?} under {}; found: {}",
                powercap.display(),
                found()
            ));
        }
    }
    Ok(zones
        .iter()
        .filter(|zone| selectors.iter().any(|s| matches(zone, s)))
        .cloned()
        .collect())
}

/// Says plainly when the kernel keeps the counters from us: since Linux 5.10 `energy_uj` is
/// root-only (the PLATYPUS side channel), and a silent 0 J would be worse than no figure.
fn energy_read_error(powercap: &Path, error: FileError) -> String {
    match &error {
        FileError::Io(path, io) if io.kind() == io::ErrorKind::PermissionDenied => format!(
            "RAPL energy counters such as {} are readable by root only (Linux >= 5.10, \
             CVE-2020-8694): run as root, or `sudo chmod o+r {}/intel-rapl:*/energy_uj` \
             (until reboot; it reopens that side channel to every user)",
            path.display(),
            powercap.display()
        ),
        _ => error.to_string(),
    }
}

/// The selected zones' `energy_uj` counters, each with its `max_energy_range_uj`.
struct RaplMeter {
    counters: Vec<(PathBuf, u64)>,
}

impl Meter for RaplMeter {
    fn counters(&self) -> Vec<CounterKind> {
        self.counters
            .iter()
            .map(|&(_, range)| CounterKind {
                joules_per_count: 1e-6,
                range: Some(range),
            })
            .collect()
    }

    fn read(&mut self) -> Result<Reading, String> {
        let counts = self
            .counters
            .iter()
            .map(|(file, _)| read_integer(file).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        Ok(Reading {
            watts: None,
            counts,
        })
    }
}

// What the on-host sources share.

/// The poll period when the spec names none.
pub(super) const DEFAULT_PERIOD: Duration = Duration::from_millis(100);

pub(super) fn spec_error(spec: &str, message: impl Into<String>) -> SourceError {
    SourceError::Spec {
        spec: spec.to_owned(),
        message: message.into(),
    }
}

/// A spec's argument, `SELECTOR,...?key=value&key=value` (the options as in `sim:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Argument {
    pub selectors: Vec<String>,
    options: Vec<(String, String)>,
}

impl Argument {
    /// Splits `argument`, refusing options other than `known`, a repeated one and one
    /// without a value.
    pub fn parse(spec: &str, argument: &str, known: &[&str]) -> Result<Argument, SourceError> {
        let (base, query) = argument.split_once('?').unwrap_or((argument, ""));
        let selectors = base
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let mut options: Vec<(String, String)> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !known.contains(&key) {
                return Err(spec_error(
                    spec,
                    format!("unknown option {key:?} (known: {})", known.join(", ")),
                ));
            }
            if value.is_empty() {
                return Err(spec_error(spec, format!("option {key} wants a value")));
            }
            if options.iter().any(|(k, _)| k == key) {
                return Err(spec_error(spec, format!("option {key} given twice")));
            }
            options.push((key.to_owned(), value.to_owned()));
        }
        Ok(Argument { selectors, options })
    }

    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `period_ms`, or [`DEFAULT_PERIOD`].
    pub fn period(&self, spec: &str) -> Result<Duration, SourceError> {
        let Some(value) = self.option("period_ms") else {
            return Ok(DEFAULT_PERIOD);
        };
        value
            .parse::<u64>()
            .ok()
            .filter(|ms| (1..=3_600_000).contains(ms))
            .map(Duration::from_millis)
            .ok_or_else(|| {
                spec_error(
                    spec,
                    format!("period_ms={value:?}: want milliseconds, 1 to 3600000"),
                )
            })
    }
}

/// A sysfs file that could not be read, or held something else than expected.
#[derive(Debug)]
pub(super) enum FileError {
    Io(PathBuf, io::Error),
    Content(PathBuf, String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io(path, error) => write!(f, "cannot read {}: {error}", path.display()),
            FileError::Content(path, content) => write!(
                f,
                "{} holds {content:?} where a non-negative integer was expected",
                path.display()
            ),
        }
    }
}

/// A sysfs file's text, without its trailing newline.
pub(super) fn read_text(path: &Path) -> Result<String, FileError> {
    fs::read_to_string(path)
        .map(|text| text.trim().to_owned())
        .map_err(|e| FileError::Io(path.to_owned(), e))
}

/// A sysfs file holding one unsigned integer (a counter, microwatts).
pub(super) fn read_integer(path: &Path) -> Result<u64, FileError> {
    let text = read_text(path)?;
    text.parse()
        .map_err(|_| FileError::Content(path.to_owned(), text))
}

/// One of a meter's energy counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CounterKind {
    pub joules_per_count: f64,
    /// The largest value it reaches before it wraps to 0; None for one that does not wrap
    /// (a decrease is then a reset to 0, as when a driver reloads).
    pub range: Option<u64>,
}

/// One poll of a meter.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reading {
    /// Power now, for a meter that reads it.
    pub watts: Option<f64>,
    /// Raw counter values, one for each of the meter's [`CounterKind`]s.
    pub counts: Vec<u64>,
}

/// What a [`PolledSource`] reads each period, on its sampling thread.
pub(super) trait Meter: Send + 'static {
    /// The counters every [`Reading`] carries, in order (none for a power-only meter).
    fn counters(&self) -> Vec<CounterKind>;
    fn read(&mut self) -> Result<Reading, String>;
}

/// A raw energy counter followed across polls into a running total that does not wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WrappingCounter {
    range: Option<u64>,
    last: u64,
    total: u64,
}

impl WrappingCounter {
    pub fn new(range: Option<u64>, first: u64) -> WrappingCounter {
        WrappingCounter {
            range,
            last: first,
            total: 0,
        }
    }

    /// Takes the next reading; returns the count since the first. A decrease is one wrap,
    /// `(range - last) + raw` as Kepler counts it: the kernel's range is the largest value
    /// (2^32 - 1 units of the hardware's), so this is short by one unit (15 to 61 µJ) per
    /// wrap, which is nothing against minutes of a package's draw. Two wraps between polls
    /// cannot be seen: poll well within the range's time.
    pub fn update(&mut self, raw: u64) -> u64 {
        let increase = match self.range {
            _ if raw >= self.last => raw - self.last,
            Some(range) => range.saturating_sub(self.last).saturating_add(raw),
            None => raw,
        };
        self.total = self.total.saturating_add(increase);
        self.last = raw;
        self.total
    }
}

/// The poller's record between polls: the counters since the first poll and the energy at
/// the counter's last advance, from which the watts of counter-only meters are derived.
struct PollState {
    kinds: Vec<CounterKind>,
    counters: Option<Vec<WrappingCounter>>,
    last_advance: Option<(Instant, f64)>,
}

impl PollState {
    fn new(kinds: Vec<CounterKind>) -> PollState {
        PollState {
            kinds,
            counters: None,
            last_advance: None,
        }
    }

    /// Reads the meter once into `trace`: its energy since the first poll and its power, read
    /// or derived. A derived sample is the energy since the counter last advanced over the
    /// time since: a counter that updates slower than the poll would otherwise give 0 W
    /// samples (invalid to the checker) followed by doubled ones.
    fn poll(&mut self, meter: &mut dyn Meter, trace: &mut Trace) -> Result<(), String> {
        let reading = meter.read()?;
        let (time, instant) = (SystemTime::now(), Instant::now());
        if reading.counts.len() != self.kinds.len() {
            return Err(format!(
                "read {} energy counters where {} were expected",
                reading.counts.len(),
                self.kinds.len()
            ));
        }
        let mut derived_watts = None;
        if !self.kinds.is_empty() {
            let counters = self.counters.get_or_insert_with(|| {
                self.kinds
                    .iter()
                    .zip(&reading.counts)
                    .map(|(kind, &first)| WrappingCounter::new(kind.range, first))
                    .collect()
            });
            let joules: f64 = counters
                .iter_mut()
                .zip(&self.kinds)
                .zip(&reading.counts)
                .map(|((counter, kind), &raw)| counter.update(raw) as f64 * kind.joules_per_count)
                .sum();
            trace.energy.push((time, joules));
            match self.last_advance {
                Some((since, before)) if joules > before => {
                    let seconds = instant.duration_since(since).as_secs_f64();
                    derived_watts = (seconds > 0.0).then(|| (joules - before) / seconds);
                    self.last_advance = Some((instant, joules));
                }
                Some(_) => {}
                None => self.last_advance = Some((instant, joules)),
            }
        }
        if let Some(watts) = reading.watts.or(derived_watts) {
            trace.samples.push(PowerSample::watts(time, watts));
        }
        Ok(())
    }
}

/// The sampling thread: polls every `period` until told to stop, then once more at the next
/// tick, so the last interval is a whole period and the trace covers the stop. Tells `ready`
/// of its first sample, or of the failure that kept it from one (and then ends); a later
/// failed poll is a sample of -1 W, which the checker leaves out, as PTDaemon marks one.
fn sample(
    mut meter: Box<dyn Meter>,
    period: Duration,
    stop: Receiver<()>,
    ready: Sender<Result<(), String>>,
) -> (Box<dyn Meter>, Trace) {
    let mut state = PollState::new(meter.counters());
    let mut trace = Trace::default();
    let mut ready = Some(ready);
    let mut next = Instant::now();
    let mut stopping = false;
    loop {
        match state.poll(meter.as_mut(), &mut trace) {
            Ok(()) if !trace.samples.is_empty() => {
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Ok(()));
                }
            }
            Ok(()) => {}
            Err(message) => match ready.take() {
                Some(ready) => {
                    let _ = ready.send(Err(message));
                    return (meter, trace);
                }
                None => trace
                    .samples
                    .push(PowerSample::watts(SystemTime::now(), -1.0)),
            },
        }
        if stopping {
            return (meter, trace);
        }
        // A poll more than a period late starts the schedule afresh rather than catching up
        // in a burst of short intervals.
        next = (next + period).max(Instant::now());
        match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => {
                stopping = true;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
        }
    }
}

/// A [`Meter`] polled on its own thread between `start` and `stop`.
pub(super) struct PolledSource {
    info: SourceInfo,
    /// None while the sampling thread has it (or lost it by panicking).
    meter: Option<Box<dyn Meter>>,
    running: Option<Running>,
}

/// A sampling thread and the way to stop it; it hands the meter back with the trace.
struct Running {
    stop: Sender<()>,
    sampler: JoinHandle<(Box<dyn Meter>, Trace)>,
}

impl PolledSource {
    pub fn new(info: SourceInfo, meter: Box<dyn Meter>) -> PolledSource {
        PolledSource {
            info,
            meter: Some(meter),
            running: None,
        }
    }

    fn failed(&self, message: impl Into<String>) -> SourceError {
        SourceError::Failed {
            name: self.info.name.clone(),
            message: message.into(),
        }
    }

    /// How long `start` waits for the first sample: a counter-only meter gives its first one
    /// when its counter first advances, a period or so after the first poll.
    fn first_sample_wait(&self) -> Duration {
        (self.info.period * 3).max(Duration::from_secs(2))
    }
}

impl PowerSource for PolledSource {
    fn info(&self) -> SourceInfo {
        self.info.clone()
    }

    /// Returns once the first sample is in, so that a run issued right after is covered.
    fn start(&mut self, _mark: &str) -> Result<(), SourceError> {
        if self.running.is_some() {
            return Err(self.failed("started twice"));
        }
        let meter = self
            .meter
            .take()
            .ok_or_else(|| self.failed("its sampling thread panicked in an earlier run"))?;
        let (stop, stopped) = mpsc::channel();
        let (ready, first_sample) = mpsc::channel();
        let period = self.info.period;
        let sampler = std::thread::Builder::new()
            .name("power-on-host".into())
            .spawn(move || sample(meter, period, stopped, ready))
            .map_err(|e| self.failed(format!("cannot start its sampling thread: {e}")))?;
        let wait = self.first_sample_wait();
        let trouble = match first_sample.recv_timeout(wait) {
            Ok(Ok(())) => None,
            Ok(Err(message)) => Some(message),
            Err(RecvTimeoutError::Timeout) => Some(format!(
                "no reading in {wait:?}: its energy counter did not advance"
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Some("its sampling thread ended before its first reading".into())
            }
        };
        match trouble {
            None => {
                self.running = Some(Running { stop, sampler });
                Ok(())
            }
            Some(message) => {
                let _ = stop.send(());
                if let Ok((meter, _)) = sampler.join() {
                    self.meter = Some(meter);
                }
                Err(self.failed(message))
            }
        }
    }

    fn stop(&mut self) -> Result<Trace, SourceError> {
        let Running { stop, sampler } = self
            .running
            .take()
            .ok_or_else(|| self.failed("not started"))?;
        let _ = stop.send(());
        let (meter, trace) = sampler
            .join()
            .map_err(|_| self.failed("its sampling thread panicked"))?;
        self.meter = Some(meter);
        Ok(trace)
    }
}

/// Fake sysfs trees for the on-host sources' tests.
#[cfg(test)]
pub(super) mod fake {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system's temporary one, removed on drop.
    pub struct FakeRoot(pub PathBuf);

    impl FakeRoot {
        pub fn new(what: &str) -> FakeRoot {
            static COUNT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "mlperf-power-{what}-{}-{}",
                std::process::id(),
                COUNT.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            FakeRoot(path)
        }

        /// Writes `contents` at `relative`, making its directories.
        pub fn write(&self, relative: &str, contents: &str) -> PathBuf {
            let path = self.0.join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // Through a rename, so that a poller never reads a half-written file.
            let partial = path.with_extension("partial");
            std::fs::write(&partial, contents).unwrap();
            std::fs::rename(&partial, &path).unwrap();
            path
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for FakeRoot {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeRoot;
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const FAST: Duration = Duration::from_millis(10);
    /// An Intel package's `max_energy_range_uj`: 2^32 units of 61 µJ.
    const RANGE: u64 = 262_143_328_850;

    fn zone(root: &FakeRoot, directory: &str, name: &str, energy_uj: u64, range_uj: u64) {
        let base = format!("class/powercap/{directory}");
        root.write(&format!("{base}/name"), &format!("{name}\n"));
        root.write(&format!("{base}/energy_uj"), &format!("{energy_uj}\n"));
        root.write(
            &format!("{base}/max_energy_range_uj"),
            &format!("{range_uj}\n"),
        );
    }

    /// Two packages with core and dram sub-zones, psys and an MMIO copy of package 0.
    fn two_packages() -> FakeRoot {
        let root = FakeRoot::new("rapl");
        root.write("class/powercap/intel-rapl/enabled", "1\n");
        zone(&root, "intel-rapl:0", "package-0", 1_000, RANGE);
        zone(&root, "intel-rapl:0:0", "core", 10, RANGE);
        zone(&root, "intel-rapl:0:1", "dram", 20, 65_712_999_613);
        zone(&root, "intel-rapl:1", "package-1", 2_000, RANGE);
        zone(&root, "intel-rapl:1:0", "dram", 30, 65_712_999_613);
        zone(&root, "intel-rapl:2", "psys", 40, RANGE);
        zone(&root, "intel-rapl-mmio:0", "package-0", 50, RANGE);
        root
    }

    fn scope(source: &Rapl) -> String {
        match source.info().scope {
            Scope::Component(what) => what,
            Scope::Wall => panic!("RAPL is a component"),
        }
    }

    fn selecting(root: &FakeRoot, selectors: &[&str]) -> Result<Rapl, SourceError> {
        let selectors: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
        Rapl::with_root("rapl", root.path(), &selectors, FAST)
    }

    #[test]
    fn a_wrapping_counter_adds_the_range_once_per_wrap() {
        let mut counter = WrappingCounter::new(Some(100), 90);
        assert_eq!(counter.update(95), 5);
        // 95 → 100 → 0 → 5: (100 - 95) + 5.
        assert_eq!(counter.update(5), 15);
        assert_eq!(counter.update(10), 20);
        assert_eq!(counter.update(10), 20);
        // A reading above the range (bad hardware) does not underflow.
        let mut odd = WrappingCounter::new(Some(100), 150);
        assert_eq!(odd.update(3), 3);
        // Without a range a decrease is a reset to 0.
        let mut reset = WrappingCounter::new(None, 50);
        assert_eq!(reset.update(10), 10);
        assert_eq!(reset.update(25), 25);
    }

    /// Replays a script of readings, one a poll, then holds the last.
    struct Scripted {
        kinds: Vec<CounterKind>,
        script: Vec<Reading>,
        next: usize,
    }

    impl Meter for Scripted {
        fn counters(&self) -> Vec<CounterKind> {
            self.kinds.clone()
        }
        fn read(&mut self) -> Result<Reading, String> {
            let reading = self.script[self.next.min(self.script.len() - 1)].clone();
            self.next += 1;
            Ok(reading)
        }
    }

    #[test]
    fn the_poller_sums_corrects_and_derives() {
        // Two counters in µJ, the second wrapping at 1 J; a poll where nothing advances.
        let kinds = vec![
            CounterKind {
                joules_per_count: 1e-6,
                range: None,
            },
            CounterKind {
                joules_per_count: 1e-6,
                range: Some(1_000_000),
            },
        ];
        let counts = [
            [5_000_000, 900_000],
            [5_500_000, 950_000],
            [5_500_000, 950_000],
            [6_000_000, 100_000],
        ];
        let script = counts
            .iter()
            .map(|c| Reading {
                watts: None,
                counts: c.to_vec(),
            })
            .collect();
        let mut meter = Scripted {
            kinds: kinds.clone(),
            script,
            next: 0,
        };
        let mut state = PollState::new(kinds);
        let mut trace = Trace::default();
        for _ in 0..counts.len() {
            state.poll(&mut meter, &mut trace).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        let joules: Vec<f64> = trace.energy.iter().map(|&(_, j)| j).collect();
        // 0; 0.5 + 0.05; the same; + 0.5 + (1 - 0.95 + 0.1).
        let expected = [0.0, 0.55, 0.55, 1.2];
        for (got, want) in joules.iter().zip(expected) {
            assert!((got - want).abs() < 1e-9, "{joules:?}");
        }
        // No sample at the first poll nor where the counter stood still; each derived one is
        // the energy since the last advance over its time.
        assert_eq!(trace.samples.len(), 2);
        let at = |i: usize| trace.energy[i].0;
        let seconds = |a: SystemTime, b: SystemTime| b.duration_since(a).unwrap().as_secs_f64();
        assert_eq!(trace.samples[0].time, at(1));
        assert_eq!(trace.samples[1].time, at(3));
        for (sample, from, to) in [(&trace.samples[0], 0, 1), (&trace.samples[1], 1, 3)] {
            let want = (joules[to] - joules[from]) / seconds(at(from), at(to));
            assert!(
                (sample.watts - want).abs() / want < 0.05,
                "{} W, want {want} W",
                sample.watts
            );
        }
    }

    #[test]
    fn the_poller_takes_a_meters_own_watts() {
        let kinds = vec![CounterKind {
            joules_per_count: 1e-3,
            range: None,
        }];
        let mut meter = Scripted {
            kinds: kinds.clone(),
            script: vec![
                Reading {
                    watts: Some(300.0),
                    counts: vec![1_000],
                },
                Reading {
                    watts: Some(310.0),
                    counts: vec![4_000],
                },
            ],
            next: 0,
        };
        let mut state = PollState::new(kinds);
        let mut trace = Trace::default();
        state.poll(&mut meter, &mut trace).unwrap();
        state.poll(&mut meter, &mut trace).unwrap();
        let watts: Vec<f64> = trace.samples.iter().map(|s| s.watts).collect();
        assert_eq!(watts, [300.0, 310.0]);
        assert_eq!(trace.energy[1].1, 3.0);
    }

    #[test]
    fn arguments_split_into_selectors_and_options() {
        let argument = Argument::parse(
            "rapl:x",
            "package-0, dram?period_ms=20&root=/tmp/x",
            &["period_ms", "root"],
        )
        .unwrap();
        assert_eq!(argument.selectors, ["package-0", "dram"]);
        assert_eq!(argument.option("root"), Some("/tmp/x"));
        assert_eq!(
            argument.period("rapl:x").unwrap(),
            Duration::from_millis(20)
        );
        let plain = Argument::parse("rapl", "", &["period_ms"]).unwrap();
        assert!(plain.selectors.is_empty());
        assert_eq!(plain.period("rapl").unwrap(), DEFAULT_PERIOD);
        for (argument, words) in [
            ("?rate=3", "unknown option \"rate\""),
            ("?period_ms", "wants a value"),
            ("?period_ms=1&period_ms=2", "twice"),
        ] {
            let error = Argument::parse("rapl", argument, &["period_ms"]).unwrap_err();
            assert!(error.to_string().contains(words), "{error}");
        }
        for bad in ["0", "abc", "-5", "3600001"] {
            let argument =
                Argument::parse("rapl", &format!("?period_ms={bad}"), &["period_ms"]).unwrap();
            assert!(argument.period("rapl").is_err(), "{bad}");
        }
    }

    #[test]
    fn packages_by_default_and_zones_by_name() {
        let root = two_packages();
        let packages = selecting(&root, &[]).unwrap();
        assert_eq!(scope(&packages), "CPU package-0 + package-1 (RAPL)");
        let info = packages.info();
        assert_eq!(info.provenance, Provenance::OnHost);
        assert_eq!(info.period, FAST);
        assert!(
            info.identity
                .contains("intel-rapl:0 (package-0), intel-rapl:1 (package-1)"),
            "{}",
            info.identity
        );
        for (selectors, want) in [
            (&["package"][..], "CPU package-0 + package-1 (RAPL)"),
            (&["dram"], "CPU package-0/dram + package-1/dram (RAPL)"),
            (
                &["package-0", "package-0/dram"],
                "CPU package-0 + package-0/dram (RAPL)",
            ),
            (
                &["intel-rapl:1:0", "psys"],
                "CPU package-1/dram + psys (RAPL)",
            ),
            (&["intel-rapl-mmio:0"], "CPU package-0 (RAPL)"),
        ] {
            assert_eq!(scope(&selecting(&root, selectors).unwrap()), want);
        }
        let unknown = selecting(&root, &["uncore"]).map(|_| ()).unwrap_err();
        let message = unknown.to_string();
        assert!(
            message.contains("no RAPL zone \"uncore\"")
                && message.contains("intel-rapl:0:1 (package-0/dram)"),
            "{message}"
        );
    }

    #[test]
    fn a_missing_tree_or_no_package_says_so() {
        let empty = FakeRoot::new("rapl-none");
        let error = selecting(&empty, &[]).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains("no RAPL zones under"), "{error}");
        let psys_only = FakeRoot::new("rapl-psys");
        zone(&psys_only, "intel-rapl:0", "psys", 1, RANGE);
        let error = selecting(&psys_only, &[])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("no RAPL package zone") && error.contains("rapl:psys"),
            "{error}"
        );
        assert!(selecting(&psys_only, &["psys"]).is_ok());
    }

    #[test]
    fn a_counter_that_could_wrap_twice_between_polls_is_refused() {
        // 5 J wraps in 5 ms at 1 kW: too soon for a 10 ms poll.
        let root = FakeRoot::new("rapl-short");
        zone(&root, "intel-rapl:0", "package-0", 1, 5_000_000);
        let error = selecting(&root, &[]).map(|_| ()).unwrap_err().to_string();
        assert!(
            error.contains("max_energy_range_uj says the counter wraps every 5000000 µJ")
                && error.contains("poll faster than every 10ms"),
            "{error}"
        );
    }

    #[test]
    fn bad_contents_name_the_file() {
        let root = FakeRoot::new("rapl-bad");
        zone(&root, "intel-rapl:0", "package-0", 1, RANGE);
        let file = root.write("class/powercap/intel-rapl:0/energy_uj", "lots\n");
        let error = selecting(&root, &[]).map(|_| ()).unwrap_err().to_string();
        assert!(
            error.contains(&file.display().to_string()) && error.contains("\"lots\""),
            "{error}"
        );
    }

    #[test]
    fn a_root_only_counter_is_refused_at_open() {
        let described = energy_read_error(
            Path::new("/sys/class/powercap"),
            FileError::Io(
                PathBuf::from("/sys/class/powercap/intel-rapl:0/energy_uj"),
                io::Error::from(io::ErrorKind::PermissionDenied),
            ),
        );
        assert!(
            described.contains("intel-rapl:0/energy_uj are readable by root only")
                && described.contains("chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj"),
            "{described}"
        );
        let root = FakeRoot::new("rapl-eacces");
        zone(&root, "intel-rapl:0", "package-0", 1, RANGE);
        let file = root.path().join("class/powercap/intel-rapl:0/energy_uj");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o000)).unwrap();
        if fs::read(&file).is_ok() {
            eprintln!("running as root: a mode-000 file is readable, EACCES not tried");
            return;
        }
        let error = selecting(&root, &[]).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains("readable by root only"), "{error}");
    }

    #[test]
    fn a_run_over_a_wrap_counts_the_energy_written() {
        // A 20 J counter at 19 J, advanced 0.8 J every 20 ms (40 W) 30 times: 24 J, two wraps.
        let root = FakeRoot::new("rapl-run");
        zone(&root, "intel-rapl:0", "package-0", 19_000_000, 20_000_000);
        let mut source = selecting(&root, &[]).unwrap();
        let (steps, step_uj) = (30u64, 800_000u64);
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                // Long enough for the poller's first reading: start waits for an advance.
                std::thread::sleep(Duration::from_millis(100));
                for k in 1..=steps {
                    let value = (19_000_000 + k * step_uj) % 20_000_000;
                    root.write(
                        "class/powercap/intel-rapl:0/energy_uj",
                        &format!("{value}\n"),
                    );
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            source.start("testing").unwrap();
            writer.join().unwrap();
        });
        let trace = source.stop().unwrap();
        let total = trace.energy.last().unwrap().1;
        assert!((total - 24.0).abs() < 1e-9, "{total} J");
        assert!(trace.energy.windows(2).all(|w| w[0].1 <= w[1].1));
        // The derived watts integrate back to the counter's energy, and average about 40 W.
        let mut integral = 0.0;
        let mut previous = trace.energy[0].0;
        for sample in &trace.samples {
            integral += sample.watts * sample.time.duration_since(previous).unwrap().as_secs_f64();
            previous = sample.time;
        }
        assert!((integral - 24.0).abs() < 0.24, "{integral} J");
        let span = trace
            .samples
            .last()
            .unwrap()
            .time
            .duration_since(trace.energy[0].0);
        let mean = 24.0 / span.unwrap().as_secs_f64();
        assert!((10.0..=50.0).contains(&mean), "{mean} W");
    }

    #[test]
    fn a_counter_that_stands_still_fails_the_start() {
        // Never a silent 0 J: a stuck counter is an error, and the source can start again.
        let root = FakeRoot::new("rapl-stuck");
        zone(&root, "intel-rapl:0", "package-0", 5, RANGE);
        let mut source = selecting(&root, &[]).unwrap();
        let error = source.start("testing").unwrap_err().to_string();
        assert!(error.contains("did not advance"), "{error}");
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                root.write("class/powercap/intel-rapl:0/energy_uj", "7\n");
            });
            source.start("testing").unwrap();
        });
        let trace = source.stop().unwrap();
        assert!((trace.energy.last().unwrap().1 - 2e-6).abs() < 1e-12);
        assert!(source.stop().is_err());
    }

    #[test]
    fn open_reads_the_spec() {
        let root = two_packages();
        let spec = format!("rapl:dram?period_ms=15&root={}", root.path().display());
        let source = crate::source::open(&spec).unwrap();
        let info = source.info();
        assert_eq!(info.name, spec);
        assert_eq!(info.period, Duration::from_millis(15));
        assert_eq!(
            info.scope,
            Scope::Component("CPU package-0/dram + package-1/dram (RAPL)".into())
        );
        let error = crate::source::open("rapl:?colour=red")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown option \"colour\""), "{error}");
    }
}
