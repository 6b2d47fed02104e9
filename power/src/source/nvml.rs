//! `nvml[:INDEX][?period_ms=N&lib=PATH]`: an NVIDIA GPU's power through NVML (`nvml-wrapper`,
//! which loads `libnvidia-ml.so.1` at run time, so this builds and runs everywhere and says so
//! where there is no driver). A component figure, never wall power.
//!
//! - INDEX: the GPU, as NVML counts them (0 by default); one source per GPU.
//! - Samples: `nvmlDeviceGetPowerUsage`, in mW. On Ampere (but GA100) and newer GPUs this is a
//!   1 s average, on older ones the power now.
//! - Energy: `nvmlDeviceGetTotalEnergyConsumption` (mJ since the driver loaded; Volta and
//!   newer), where the GPU has it; the trace then has a counter for the window's energy.
//! - `period_ms`: the poll period, 100 ms by default (NVML updates at 10 Hz or faster);
//!   `lib`: the NVML library to load instead of the system's.

use std::path::Path;
use std::time::Duration;

use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;

use super::options::{spec_error, Argument};
use super::poller::{CounterKind, Meter, PolledSource, Reading, DEFAULT_PERIOD};
use super::{
    GpuDescription, GpuInventory, PowerSource, Provenance, Scope, SourceError, SourceInfo,
};

/// The source `nvml[:INDEX][?period_ms=N&lib=PATH]` names.
pub(super) fn open(spec: &str, argument: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    let argument = Argument::parse(spec, argument, &["period_ms=MS", "lib=PATH"])?;
    let index = match argument.selectors().as_slice() {
        [] => 0,
        [index] => index.parse().map_err(|_| {
            argument.error(format!(
                "nvml[:INDEX] takes a GPU index, e.g. nvml:0, not {index:?}"
            ))
        })?,
        _ => {
            return Err(
                argument.error("nvml[:INDEX] takes one GPU index: open a source for each GPU")
            )
        }
    };
    let library = argument.option("lib").map(Path::new);
    let source = open_gpu(spec, index, library, argument.period(DEFAULT_PERIOD)?)?;
    Ok(Box::new(source))
}

/// GPU `index` through NVML (loaded from `library`, or the system's `libnvidia-ml.so.1`), to
/// be polled on its own thread. Reads its power once, so that a GPU without a power reading
/// fails here.
pub(super) fn open_gpu(
    name: &str,
    index: u32,
    library: Option<&Path>,
    period: Duration,
) -> Result<PolledSource, SourceError> {
    let error = |message: String| spec_error(name, message);
    let nvml = match library {
        Some(path) => Nvml::builder().lib_path(path.as_os_str()).init(),
        None => Nvml::init(),
    }
    .map_err(|e| error(unavailable(library, e)))?;
    let count = nvml
        .device_count()
        .map_err(|e| error(format!("NVML cannot count the GPUs: {e}")))?;
    if index >= count {
        return Err(error(format!("no GPU {index}: NVML sees {count}")));
    }
    let device = nvml
        .device_by_index(index)
        .map_err(|e| error(format!("GPU {index}: {e}")))?;
    let gpu = device.name().unwrap_or_else(|_| "(unnamed)".into());
    device.power_usage().map_err(|e| {
        error(format!(
            "GPU {index} {gpu} does not report its power draw: {e}"
        ))
    })?;
    let counting = device.total_energy_consumption().is_ok();
    let uuid = device.uuid().unwrap_or_else(|_| "?".into());
    let driver = nvml.sys_driver_version().unwrap_or_else(|_| "?".into());
    let info = SourceInfo {
        name: name.to_owned(),
        scope: Scope::Component(format!("GPU {index} {gpu}")),
        provenance: Provenance::OnHost,
        period,
        identity: format!(
            "{gpu} ({uuid}), NVIDIA driver {driver}, NVML power usage{}",
            if counting {
                " and total energy"
            } else {
                " (no energy counter)"
            }
        ),
    };
    let meter = NvmlMeter {
        nvml,
        index,
        counting,
    };
    Ok(PolledSource::new(info, Box::new(meter)))
}

/// Every GPU NVML (loaded from `library`, or the system's `libnvidia-ml.so.1`) sees. Without
/// an NVIDIA driver this is an error saying so (a [`SourceError::Spec`] naming `nvml`).
pub fn describe_gpus(library: Option<&Path>) -> Result<GpuInventory, SourceError> {
    let error = |message: String| spec_error("nvml", message);
    let nvml = match library {
        Some(path) => Nvml::builder().lib_path(path.as_os_str()).init(),
        None => Nvml::init(),
    }
    .map_err(|e| error(unavailable(library, e)))?;
    let count = nvml
        .device_count()
        .map_err(|e| error(format!("NVML cannot count the GPUs: {e}")))?;
    let mut gpus = Vec::new();
    for index in 0..count {
        let device = nvml
            .device_by_index(index)
            .map_err(|e| error(format!("GPU {index}: {e}")))?;
        gpus.push(GpuDescription {
            name: device
                .name()
                .map_err(|e| error(format!("GPU {index} has no name: {e}")))?,
            memory_bytes: device.memory_info().ok().map(|m| m.total),
            max_pcie_link: device
                .max_pcie_link_gen()
                .and_then(|generation| Ok((generation, device.max_pcie_link_width()?)))
                .ok(),
            max_clock_mhz: device.max_clock_info(Clock::Graphics).ok(),
        });
    }
    let cuda_version = nvml.sys_cuda_driver_version().ok().map(|v| {
        format!(
            "{}.{}",
            nvml_wrapper::cuda_driver_version_major(v),
            nvml_wrapper::cuda_driver_version_minor(v)
        )
    });
    Ok(GpuInventory {
        gpus,
        driver_version: nvml.sys_driver_version().ok(),
        cuda_version,
    })
}

/// Why NVML would not load, in words a user without a GPU understands.
fn unavailable(library: Option<&Path>, error: NvmlError) -> String {
    let reason = match &error {
        NvmlError::LibloadingError(e) => format!(
            "cannot load {} ({e}): no NVIDIA driver on this machine?",
            library.map_or("libnvidia-ml.so.1".into(), |p| p.display().to_string())
        ),
        NvmlError::DriverNotLoaded => "the NVIDIA driver is not loaded".into(),
        NvmlError::NoPermission => "no permission to talk to the NVIDIA driver".into(),
        other => other.to_string(),
    };
    format!("NVML not available: {reason}")
}

/// NVML (`Send` and `Sync`), owned by the sampling thread while it runs; the device handle is
/// looked up each poll, since it borrows the library.
struct NvmlMeter {
    nvml: Nvml,
    index: u32,
    counting: bool,
}

impl Meter for NvmlMeter {
    fn counters(&self) -> Vec<CounterKind> {
        if self.counting {
            vec![CounterKind {
                name: format!("GPU {} total energy", self.index),
                joules_per_count: 1e-3,
                range: None,
            }]
        } else {
            Vec::new()
        }
    }

    fn read(&mut self) -> Result<Reading, String> {
        let gpu = |e: NvmlError| format!("GPU {}: {e}", self.index);
        let device = self.nvml.device_by_index(self.index).map_err(gpu)?;
        let milliwatts = device.power_usage().map_err(gpu)?;
        let counts = if self.counting {
            vec![device.total_energy_consumption().map_err(gpu)?]
        } else {
            Vec::new()
        };
        Ok(Reading {
            watts: Some(f64::from(milliwatts) / 1000.0),
            counts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this machine has an NVIDIA driver loaded (then NVML should open).
    fn has_nvidia_driver() -> bool {
        Path::new("/proc/driver/nvidia").exists()
    }

    #[test]
    fn without_a_driver_nvml_is_not_available() {
        let result = crate::source::open("nvml").map(|source| source.info());
        if has_nvidia_driver() {
            let info = result.unwrap();
            assert_eq!(info.provenance, Provenance::OnHost);
            return;
        }
        let error = result.unwrap_err().to_string();
        assert!(
            error.contains("NVML not available") && error.contains("\"nvml\""),
            "{error}"
        );
    }

    #[test]
    fn gpus_are_described_or_nvml_is_said_to_be_missing() {
        match describe_gpus(None) {
            Ok(inventory) => assert!(has_nvidia_driver(), "{inventory:?}"),
            Err(error) => {
                assert!(!has_nvidia_driver(), "{error}");
                let error = error.to_string();
                assert!(error.contains("NVML not available"), "{error}");
            }
        }
        let error = describe_gpus(Some(Path::new("/nonexistent/libnvidia-ml.so.1")))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("cannot load /nonexistent/libnvidia-ml.so.1"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_library_is_not_available() {
        let error = crate::source::open("nvml:0?lib=/nonexistent/libnvidia-ml.so.1")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("NVML not available: cannot load /nonexistent/libnvidia-ml.so.1"),
            "{error}"
        );
    }

    #[test]
    fn the_spec_is_checked_before_loading() {
        for (spec, words) in [
            ("nvml:first", "takes a GPU index"),
            ("nvml:0,1", "one GPU index"),
            ("nvml:0?period_ms=0", "period_ms"),
            ("nvml:0?root=/tmp", "unknown option \"root\""),
        ] {
            let error = crate::source::open(spec)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(error.contains(words), "{spec}: {error}");
        }
    }

    /// On a machine with an NVIDIA GPU: `cargo test -p mlperf-power -- --ignored nvml`.
    #[test]
    #[ignore = "needs an NVIDIA GPU and driver"]
    fn a_gpu_is_sampled() {
        let mut gpu = crate::source::open("nvml:0?period_ms=20").unwrap();
        let info = gpu.info();
        assert!(matches!(&info.scope, Scope::Component(s) if s.starts_with("GPU 0 ")));
        gpu.start("testing").unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let trace = gpu.stop().unwrap();
        eprintln!(
            "{}: {} samples, first {:?} W; {} energy readings, {:?} J",
            info.identity,
            trace.samples.len(),
            trace.samples.first().map(|s| s.watts),
            trace.energy.len(),
            trace.energy.last().map(|e| e.1)
        );
        assert!(trace.samples.len() >= 10, "{trace:?}");
        assert!(trace.samples.iter().all(|s| s.is_valid()), "{trace:?}");
        if info.identity.contains("total energy") {
            assert_eq!(trace.energy.len(), trace.samples.len());
            assert!(trace.energy.last().unwrap().1 > 0.0);
        }
        assert!(crate::source::open("nvml:4096").is_err());
    }
}
