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

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::poller::{CounterKind, Meter, PolledSource, Reading};
use super::sysfs::{read_integer, read_text, FileError, SysfsSpec};
use super::SourceError;

/// More than any one RAPL zone draws: the wrap check's bound.
pub(super) const MOST_ZONE_WATTS: f64 = 1000.0;

/// The RAPL zones the spec's selectors name (all packages when none) under
/// `ROOT/class/powercap`, summed, to be polled on their own thread. Reads each counter
/// once, so that a missing or root-only counter fails here rather than at the end of a run.
pub(super) fn open(spec: &SysfsSpec) -> Result<PolledSource, SourceError> {
    let error = |message: String| spec.error(message);
    let powercap = spec.root.join("class/powercap");
    let zones = list_zones(&powercap).map_err(error)?;
    let selected = select_zones(&powercap, &zones, &spec.selectors).map_err(error)?;
    let mut counters = Vec::new();
    for zone in &selected {
        let range_file = zone.directory.join("max_energy_range_uj");
        let range = read_integer(&range_file).map_err(|e| error(e.to_string()))?;
        let wrap_seconds = range as f64 * 1e-6 / MOST_ZONE_WATTS;
        let period = spec.period;
        if wrap_seconds <= period.as_secs_f64() {
            return Err(error(format!(
                "{} says the counter wraps every {range} µJ, which takes {wrap_seconds:.3} s \
                 at {MOST_ZONE_WATTS} W: poll faster than every {period:?}",
                range_file.display(),
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
    let info = spec.info(
        format!("CPU {} (RAPL)", labels.join(" + ")),
        format!(
            "RAPL energy counters, Linux powercap: {}",
            listing.join(", ")
        ),
    );
    Ok(PolledSource::new(info, Box::new(RaplMeter { counters })))
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
            .map(|(file, range)| CounterKind {
                name: file.display().to_string(),
                joules_per_count: 1e-6,
                range: Some(*range),
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

#[cfg(test)]
mod tests {
    use super::super::sysfs::fake::FakeRoot;
    use super::*;
    use crate::source::{PowerSource, Provenance, Scope};
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

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

    fn scope(source: &PolledSource) -> String {
        match source.info().scope {
            Scope::Component(what) => what,
            Scope::Wall => panic!("RAPL is a component"),
        }
    }

    fn selecting(root: &FakeRoot, selectors: &[&str]) -> Result<PolledSource, SourceError> {
        open(&root.spec("rapl", selectors, FAST))
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
        // Wraps are corrected, not noted.
        assert!(trace.notes.is_empty(), "{:?}", trace.notes);
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
