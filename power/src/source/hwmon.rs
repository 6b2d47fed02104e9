//! `hwmon[:CHIP,...][?period_ms=N&root=PATH]`: power and energy sensors of the Linux hwmon
//! interface (`/sys/class/hwmon/hwmonN/`): amdgpu GPUs, ACPI power meters (`power_meter`),
//! board sensors. A component figure, never wall power, even from a `power_meter`.
//!
//! - A CHIP is a chip name (`amdgpu`: every such chip, summed) or a directory (`hwmon3`).
//! - No CHIP: the chips that have power or energy sensors, when they are all of one name;
//!   chips of different names may measure the same power (a `power_meter` includes the GPU),
//!   so then the spec must name them.
//! - A chip's sensors, all its channels summed: its energy counters (`energyN_input`, µJ)
//!   where every selected chip has them, else its power readings (`powerN_input`, or
//!   `powerN_average` where a channel has no `_input`; µW). A counter has no known range: a
//!   decrease is taken as a reset to 0.
//! - `period_ms`: the poll period, 100 ms by default; `root`: the sysfs root, `/sys` by
//!   default (tests point it at a fake tree).

use std::fs;
use std::path::{Path, PathBuf};

use super::poller::{CounterKind, Meter, PolledSource, Reading};
use super::sysfs::{read_integer, read_text, SysfsSpec};
use super::SourceError;

/// The hwmon chips the spec's selectors name (see the module's notes for none) under
/// `ROOT/class/hwmon`, their sensors summed, to be polled on their own thread. Reads
/// each sensor once, so that a bad one fails here.
pub(super) fn open(spec: &SysfsSpec) -> Result<PolledSource, SourceError> {
    let error = |message: String| spec.error(message);
    let class = spec.root.join("class/hwmon");
    let chips = list_chips(&class).map_err(error)?;
    let selected = select_chips(&class, &chips, &spec.selectors).map_err(error)?;
    let counting = selected.iter().all(|chip| !chip.energy.is_empty());
    if !counting {
        if let Some(chip) = selected.iter().find(|chip| chip.power.is_empty()) {
            return Err(error(format!(
                "{} {} has energy counters only and the others power readings only: \
                     open them as separate sources",
                chip.directory_name, chip.name
            )));
        }
    }
    let mut files = Vec::new();
    let mut labels = Vec::new();
    let mut listing = Vec::new();
    for chip in &selected {
        for sensor in if counting { &chip.energy } else { &chip.power } {
            read_integer(&sensor.file).map_err(|e| error(e.to_string()))?;
            labels.push(format!("{} {}", chip.name, sensor.channel));
            let label = read_text(&chip.directory.join(format!("{}_label", sensor.channel)))
                .map(|label| format!(" \"{label}\""))
                .unwrap_or_default();
            listing.push(format!(
                "{}/{} ({}{label})",
                chip.directory_name,
                file_name(&sensor.file),
                chip.name
            ));
            files.push(sensor.file.clone());
        }
    }
    let kind = if counting {
        "energy counters"
    } else {
        "power sensors"
    };
    let info = spec.info(
        format!("hwmon {}", labels.join(" + ")),
        format!("hwmon {kind}: {}", listing.join(", ")),
    );
    let meter = HwmonMeter { files, counting };
    Ok(PolledSource::new(info, Box::new(meter)))
}

/// One channel of a chip: `power1` read from `power1_input`.
#[derive(Debug, Clone)]
struct Sensor {
    channel: String,
    index: u32,
    file: PathBuf,
}

/// A `hwmonN` directory.
#[derive(Debug, Clone)]
struct Chip {
    directory_name: String,
    directory: PathBuf,
    index: u32,
    /// What its `name` file says, `?` where it has none.
    name: String,
    energy: Vec<Sensor>,
    power: Vec<Sensor>,
}

impl Chip {
    fn has_sensors(&self) -> bool {
        !self.energy.is_empty() || !self.power.is_empty()
    }

    fn describe(&self) -> String {
        let sensors: Vec<String> = self
            .energy
            .iter()
            .chain(&self.power)
            .map(|s| file_name(&s.file))
            .collect();
        let sensors = if sensors.is_empty() {
            "no power or energy sensor".to_owned()
        } else {
            sensors.join(", ")
        };
        format!("{} {} ({sensors})", self.directory_name, self.name)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `power3_average` → ("power", 3, "average").
fn parse_sensor_file(file_name: &str) -> Option<(&str, u32, &str)> {
    let (stem, item) = file_name.split_once('_')?;
    let digits = stem.find(|c: char| c.is_ascii_digit())?;
    let (kind, index) = stem.split_at(digits);
    Some((kind, index.parse().ok()?, item))
}

/// Every hwmon chip under `class`, in index order, with its power and energy sensors.
fn list_chips(class: &Path) -> Result<Vec<Chip>, String> {
    let entries = fs::read_dir(class)
        .map_err(|e| format!("no hwmon sensors: cannot list {}: {e}", class.display()))?;
    let mut chips = Vec::new();
    for entry in entries.flatten() {
        let directory_name = entry.file_name().to_string_lossy().into_owned();
        let Some(Ok(index)) = directory_name.strip_prefix("hwmon").map(str::parse::<u32>) else {
            continue;
        };
        let directory = class.join(&directory_name);
        let name = read_text(&directory.join("name")).unwrap_or_else(|_| "?".into());
        let mut energy = Vec::new();
        let mut power_inputs = Vec::new();
        let mut power_averages = Vec::new();
        for file in fs::read_dir(&directory).into_iter().flatten().flatten() {
            let file_name = file.file_name().to_string_lossy().into_owned();
            let Some((kind, channel, item)) = parse_sensor_file(&file_name) else {
                continue;
            };
            let sensor = Sensor {
                channel: format!("{kind}{channel}"),
                index: channel,
                file: directory.join(&file_name),
            };
            match (kind, item) {
                ("energy", "input") => energy.push(sensor),
                ("power", "input") => power_inputs.push(sensor),
                ("power", "average") => power_averages.push(sensor),
                _ => {}
            }
        }
        // A channel's instantaneous reading where it has one, else its average.
        let mut power = power_inputs;
        for average in power_averages {
            if !power.iter().any(|s| s.index == average.index) {
                power.push(average);
            }
        }
        energy.sort_by_key(|s| s.index);
        power.sort_by_key(|s| s.index);
        chips.push(Chip {
            directory_name,
            directory,
            index,
            name,
            energy,
            power,
        });
    }
    chips.sort_by_key(|chip| chip.index);
    if chips.is_empty() {
        return Err(format!("no hwmon chips under {}", class.display()));
    }
    Ok(chips)
}

/// The chips the selectors name, or, without any, those with sensors if all of one name.
fn select_chips(class: &Path, chips: &[Chip], selectors: &[String]) -> Result<Vec<Chip>, String> {
    let found = || {
        chips
            .iter()
            .map(Chip::describe)
            .collect::<Vec<_>>()
            .join("; ")
    };
    if selectors.is_empty() {
        let measuring: Vec<Chip> = chips.iter().filter(|c| c.has_sensors()).cloned().collect();
        let Some(first) = measuring.first() else {
            return Err(format!(
                "no hwmon power or energy sensor under {}; found: {}",
                class.display(),
                found()
            ));
        };
        if measuring.iter().any(|chip| chip.name != first.name) {
            let listing: Vec<String> = measuring.iter().map(Chip::describe).collect();
            return Err(format!(
                "power sensors of several kinds: {}. Name the chips to read, e.g. hwmon:{} or \
                 hwmon:{}, since together they may count the same power twice",
                listing.join("; "),
                first.name,
                first.directory_name
            ));
        }
        return Ok(measuring);
    }
    let mut selected = Vec::new();
    for selector in selectors {
        let matching: Vec<&Chip> = chips
            .iter()
            .filter(|c| &c.name == selector || &c.directory_name == selector)
            .collect();
        if matching.is_empty() {
            return Err(format!(
                "no hwmon chip {selector:?} under {}; found: {}",
                class.display(),
                found()
            ));
        }
        if let Some(chip) = matching.iter().find(|c| !c.has_sensors()) {
            return Err(format!(
                "hwmon chip {selector:?}: {} has no power or energy sensor",
                chip.describe()
            ));
        }
        for chip in matching {
            if !selected.iter().any(|s: &Chip| s.index == chip.index) {
                selected.push(chip.clone());
            }
        }
    }
    selected.sort_by_key(|chip| chip.index);
    Ok(selected)
}

/// The selected sensor files: µJ counters, or µW readings summed into watts.
struct HwmonMeter {
    files: Vec<PathBuf>,
    counting: bool,
}

impl Meter for HwmonMeter {
    fn counters(&self) -> Vec<CounterKind> {
        if !self.counting {
            return Vec::new();
        }
        self.files
            .iter()
            .map(|file| CounterKind {
                name: file.display().to_string(),
                joules_per_count: 1e-6,
                range: None,
            })
            .collect()
    }

    fn read(&mut self) -> Result<Reading, String> {
        let values = self
            .files
            .iter()
            .map(|file| read_integer(file).map_err(|e| e.to_string()))
            .collect::<Result<Vec<u64>, _>>()?;
        Ok(if self.counting {
            Reading {
                watts: None,
                counts: values,
            }
        } else {
            Reading {
                watts: Some(
                    values
                        .iter()
                        .map(|&microwatts| microwatts as f64 * 1e-6)
                        .sum(),
                ),
                counts: Vec::new(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::sysfs::fake::FakeRoot;
    use super::*;
    use crate::source::{PowerSource, Provenance, Scope};
    use crate::trace::Trace;
    use std::time::Duration;

    const FAST: Duration = Duration::from_millis(10);

    /// A power meter, two GPUs (one with an instantaneous and an average reading), a
    /// temperature-only chip and one with an energy counter.
    fn board() -> FakeRoot {
        let root = FakeRoot::new("hwmon");
        for (file, contents) in [
            ("hwmon0/name", "power_meter"),
            ("hwmon0/power1_average", "250000000"),
            ("hwmon0/power1_average_interval", "1000"),
            ("hwmon1/name", "amdgpu"),
            ("hwmon1/power1_input", "100000000"),
            ("hwmon1/power1_average", "90000000"),
            ("hwmon1/power1_cap", "300000000"),
            ("hwmon1/power1_label", "PPT"),
            ("hwmon2/name", "coretemp"),
            ("hwmon2/temp1_input", "45000"),
            ("hwmon10/name", "amdgpu"),
            ("hwmon10/power1_average", "50500000"),
            ("hwmon4/name", "zenpower"),
            ("hwmon4/energy1_input", "1000000"),
            ("hwmon4/energy2_input", "2000000"),
            ("hwmon4/power1_input", "5000000"),
        ] {
            root.write(&format!("class/hwmon/{file}"), &format!("{contents}\n"));
        }
        root
    }

    fn selecting(root: &FakeRoot, selectors: &[&str]) -> Result<PolledSource, SourceError> {
        open(&root.spec("hwmon", selectors, FAST))
    }

    fn failure(root: &FakeRoot, selectors: &[&str]) -> String {
        selecting(root, selectors)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    }

    fn run(source: &mut PolledSource) -> Trace {
        source.start("testing").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        source.stop().unwrap()
    }

    #[test]
    fn gpus_by_name_summed_in_watts() {
        let root = board();
        let mut gpus = selecting(&root, &["amdgpu"]).unwrap();
        let info = gpus.info();
        assert_eq!(
            info.scope,
            Scope::Component("hwmon amdgpu power1 + amdgpu power1".into())
        );
        assert_eq!(info.provenance, Provenance::OnHost);
        assert_eq!(
            info.identity,
            "hwmon power sensors: hwmon1/power1_input (amdgpu \"PPT\"), \
             hwmon10/power1_average (amdgpu)"
        );
        let trace = run(&mut gpus);
        assert!(trace.energy.is_empty());
        assert!(trace.samples.len() >= 2, "{trace:?}");
        // 100 W instantaneous (not its 90 W average) + 50.5 W.
        assert!(trace.samples.iter().all(|s| (s.watts - 150.5).abs() < 1e-9));
    }

    #[test]
    fn a_chip_by_directory() {
        let root = board();
        let mut meter = selecting(&root, &["hwmon0"]).unwrap();
        assert_eq!(
            meter.info().scope,
            Scope::Component("hwmon power_meter power1".into())
        );
        let trace = run(&mut meter);
        assert!(trace.samples.iter().all(|s| s.watts == 250.0));
        // Both named, each once.
        let both = selecting(&root, &["hwmon1", "amdgpu"]).unwrap();
        assert_eq!(
            both.info().scope,
            Scope::Component("hwmon amdgpu power1 + amdgpu power1".into())
        );
    }

    #[test]
    fn energy_counters_come_first() {
        let root = board();
        let mut counter = selecting(&root, &["zenpower"]).unwrap();
        let info = counter.info();
        assert_eq!(
            info.scope,
            Scope::Component("hwmon zenpower energy1 + zenpower energy2".into())
        );
        assert!(info.identity.starts_with("hwmon energy counters:"));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(40));
                // +0.25 J on one channel, +0.5 J on the other.
                root.write("class/hwmon/hwmon4/energy1_input", "1250000\n");
                root.write("class/hwmon/hwmon4/energy2_input", "2500000\n");
            });
            counter.start("testing").unwrap();
        });
        std::thread::sleep(Duration::from_millis(30));
        let trace = counter.stop().unwrap();
        assert!((trace.energy.last().unwrap().1 - 0.75).abs() < 1e-9);
        // Samples derived where the counters moved (once or twice, as the poller saw the
        // two writes), the 5 W power file left aside.
        assert!(
            (1..=2).contains(&trace.samples.len())
                && trace
                    .samples
                    .iter()
                    .all(|s| s.watts > 0.0 && s.watts != 5.0),
            "{trace:?}"
        );
        // A chip with power only beside it: both as power readings.
        let mixed = selecting(&root, &["zenpower", "hwmon0"]).unwrap();
        assert_eq!(
            mixed.info().scope,
            Scope::Component("hwmon power_meter power1 + zenpower power1".into())
        );
    }

    #[test]
    fn a_counter_that_goes_back_is_noted_and_counted_on() {
        let root = board();
        let mut counter = selecting(&root, &["zenpower"]).unwrap();
        let file = "class/hwmon/hwmon4/energy1_input";
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(40));
                root.write(file, "1250000\n");
                std::thread::sleep(Duration::from_millis(40));
                // A driver reload: the counter starts again from 0.
                root.write(file, "250000\n");
            });
            counter.start("testing").unwrap();
        });
        std::thread::sleep(Duration::from_millis(30));
        let trace = counter.stop().unwrap();
        // 0.25 J before the reset and 0.25 J after.
        assert!(
            (trace.energy.last().unwrap().1 - 0.5).abs() < 1e-9,
            "{trace:?}"
        );
        assert_eq!(trace.notes.len(), 1, "{:?}", trace.notes);
        let path = root.path().join(file).display().to_string();
        assert!(
            trace.notes[0].contains(&format!(
                "energy counter {path} went back from 1250000 to 250000: taken as a reset to 0"
            )),
            "{}",
            trace.notes[0]
        );
    }

    #[test]
    fn without_a_name_one_kind_of_chip_or_an_error() {
        let root = board();
        let error = failure(&root, &[]);
        assert!(
            error.contains("several kinds")
                && error.contains("hwmon0 power_meter (power1_average)")
                && error.contains("hwmon:power_meter"),
            "{error}"
        );
        let gpus_only = FakeRoot::new("hwmon-gpus");
        for (file, contents) in [
            ("hwmon0/name", "amdgpu"),
            ("hwmon0/power1_average", "1000000"),
            ("hwmon1/name", "k10temp"),
            ("hwmon2/name", "amdgpu"),
            ("hwmon2/power1_input", "2000000"),
        ] {
            gpus_only.write(&format!("class/hwmon/{file}"), contents);
        }
        let gpus = selecting(&gpus_only, &[]).unwrap();
        assert_eq!(
            gpus.info().scope,
            Scope::Component("hwmon amdgpu power1 + amdgpu power1".into())
        );
    }

    #[test]
    fn what_cannot_be_read_says_what_there_is() {
        let root = board();
        let error = failure(&root, &["coretemp"]);
        assert!(
            error.contains("hwmon2 coretemp (no power or energy sensor)"),
            "{error}"
        );
        let error = failure(&root, &["nouveau"]);
        assert!(
            error.contains("no hwmon chip \"nouveau\"") && error.contains("hwmon1 amdgpu"),
            "{error}"
        );
        let temperatures = FakeRoot::new("hwmon-temperatures");
        temperatures.write("class/hwmon/hwmon0/name", "acpitz");
        let error = failure(&temperatures, &[]);
        assert!(
            error.contains("no hwmon power or energy sensor") && error.contains("acpitz"),
            "{error}"
        );
        let error = failure(&FakeRoot::new("hwmon-none"), &[]);
        assert!(error.contains("cannot list"), "{error}");
        let file = root.write("class/hwmon/hwmon0/power1_average", "n/a\n");
        let error = failure(&root, &["power_meter"]);
        assert!(
            error.contains(&file.display().to_string()) && error.contains("\"n/a\""),
            "{error}"
        );
        let energy_only = FakeRoot::new("hwmon-energy-only");
        for (file, contents) in [
            ("hwmon0/name", "a"),
            ("hwmon0/energy1_input", "1"),
            ("hwmon1/name", "b"),
            ("hwmon1/power1_input", "1"),
        ] {
            energy_only.write(&format!("class/hwmon/{file}"), contents);
        }
        let error = failure(&energy_only, &["a", "b"]);
        assert!(error.contains("separate sources"), "{error}");
    }

    #[test]
    fn open_reads_the_spec() {
        let root = board();
        let spec = format!("hwmon:hwmon10?period_ms=20&root={}", root.path().display());
        let info = crate::source::open(&spec).unwrap().info();
        assert_eq!(info.period, Duration::from_millis(20));
        assert_eq!(info.scope, Scope::Component("hwmon amdgpu power1".into()));
        assert_eq!(info.name, spec);
    }
}
