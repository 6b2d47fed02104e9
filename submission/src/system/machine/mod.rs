//! What this machine says about itself, read from a root directory (`/` here; a fake tree in
//! the tests): /proc, /sys and /etc, and NVML's answer for NVIDIA GPUs (the host asks NVML).
//! Reading is kept apart from building the system description, so the description can be
//! tested on any facts.

mod accelerators;
mod cpu;
mod platform;
mod storage;

use std::path::{Path, PathBuf};

pub use accelerators::{Accelerators, PciDevice};
pub use cpu::{CacheFacts, CpuFacts};
pub use mlperf_power::{GpuDescription, GpuInventory};
pub use platform::NetInterface;
pub use storage::{Disk, DiskKind};

/// A fact that could not be read: the file and why. The draft leaves the field to fill in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct FactError {
    pub path: PathBuf,
    pub message: String,
}

/// Everything the draft of a system description takes from the machine. `None` (or empty)
/// where the machine did not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineFacts {
    pub cpu: CpuFacts,
    /// `MemTotal` of /proc/meminfo: the memory the kernel manages (a little less than what is
    /// installed).
    pub memory_bytes: Option<u64>,
    pub disks: Vec<Disk>,
    /// The file system type mounted at `/`.
    pub root_filesystem: Option<String>,
    /// `PRETTY_NAME` of /etc/os-release.
    pub os: Option<String>,
    /// /proc/sys/kernel/osrelease.
    pub kernel: Option<String>,
    /// The firmware's vendor and product name (DMI), when it is not a placeholder.
    pub platform: Option<String>,
    /// The BIOS version and date (DMI).
    pub bios: Option<String>,
    /// Physical network interfaces (those with a device behind them).
    pub network: Vec<NetInterface>,
    pub accelerators: Accelerators,
    /// What could not be read, for the user to see.
    pub problems: Vec<FactError>,
}

impl MachineFacts {
    /// The facts under `root`, without asking NVML: an NVIDIA GPU seen only on the PCI bus is
    /// an unrecognised accelerator.
    pub fn read(root: &Path) -> MachineFacts {
        MachineFacts::read_with_nvml(root, Err("NVML not consulted".into()))
    }

    /// The facts under `root`, the GPUs as `nvml` (NVML's answer, or why there is none) says.
    pub fn read_with_nvml(root: &Path, nvml: Result<GpuInventory, String>) -> MachineFacts {
        let mut problems = Vec::new();
        let cpu = cpu::read(root, &mut problems);
        let memory_bytes = platform::memory_bytes(root, &mut problems);
        let (os, kernel) = platform::os_and_kernel(root, &mut problems);
        let (platform, bios) = platform::firmware(root);
        MachineFacts {
            cpu,
            memory_bytes,
            disks: storage::disks(root),
            root_filesystem: platform::root_filesystem(root),
            os,
            kernel,
            platform,
            bios,
            network: platform::network_interfaces(root),
            accelerators: accelerators::classify(
                nvml,
                &accelerators::pci_accelerators(root),
                root.join("proc/driver/nvidia").exists(),
            ),
            problems,
        }
    }
}

/// `root` + `path`, `path` written as absolute (`/proc/cpuinfo`).
fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// A file every Linux has: its absence or unreadability is a problem worth telling.
fn read_expected(root: &Path, path: &str, problems: &mut Vec<FactError>) -> Option<String> {
    let path = under(root, path);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(error) => {
            problems.push(FactError {
                path,
                message: format!("cannot read: {error}"),
            });
            None
        }
    }
}

/// A file that many machines lack (cpufreq, DMI, caches): its absence is no problem.
fn read_optional(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
}

/// The directory's entries' names, sorted (empty when it cannot be read).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}
