//! The draft over a fake /proc, /sys and /etc tree, and the check, one defect at a time.

mod check;
mod draft;

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::Division;

use super::machine::{GpuDescription, GpuInventory};
use super::*;

/// A directory of files, removed when dropped.
pub(super) struct Tree(pub(super) PathBuf);

impl Tree {
    pub(super) fn new() -> Tree {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mlperf-host-sysinfo-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tree(dir)
    }

    pub(super) fn file(&self, path: &str, text: &str) -> &Tree {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    pub(super) fn dir(&self, path: &str) -> &Tree {
        std::fs::create_dir_all(self.0.join(path)).unwrap();
        self
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Two 4-core, 8-thread Xeons, 128 GB, two NVMe drives and a SATA SSD, Ubuntu, a Supermicro
/// board, one 25 Gb/s port; no accelerator.
pub(super) fn server() -> Tree {
    let tree = Tree::new();
    let mut cpuinfo = String::new();
    for processor in 0..16 {
        cpuinfo += &format!(
            "processor\t: {processor}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6430\nphysical id\t: {}\ncore id\t\t: {}\ncpu cores\t: 4\ncpu MHz\t\t: 2100.000\n\n",
            processor / 8,
            processor % 4
        );
    }
    tree.file("proc/cpuinfo", &cpuinfo)
        .file(
            "proc/meminfo",
            "MemTotal:       131698000 kB\nMemFree:        120000000 kB\n",
        )
        .file("proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
        .file("proc/mounts", "sysfs /sys sysfs rw 0 0\n/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n")
        .file(
            "etc/os-release",
            "NAME=\"Ubuntu\"\nVERSION=\"24.04.1 LTS (Noble Numbat)\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n",
        )
        .file("sys/block/nvme0n1/size", "7501476528\n")
        .file("sys/block/nvme0n1/queue/rotational", "0\n")
        .file("sys/block/nvme1n1/size", "7501476528\n")
        .file("sys/block/nvme1n1/queue/rotational", "0\n")
        .file("sys/block/sda/size", "937703088\n")
        .file("sys/block/sda/queue/rotational", "0\n")
        .file("sys/block/sdb/size", "62333952\n")
        .file("sys/block/sdb/removable", "1\n")
        .file("sys/block/loop0/size", "1024\n")
        .file("sys/class/dmi/id/sys_vendor", "Supermicro\n")
        .file("sys/class/dmi/id/product_name", "SYS-221H-TNR\n")
        .file("sys/class/dmi/id/bios_vendor", "American Megatrends International, LLC.\n")
        .file("sys/class/dmi/id/bios_version", "2.1\n")
        .file("sys/class/dmi/id/bios_date", "03/15/2024\n")
        .file("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3400000\n")
        .file("sys/devices/system/cpu/cpu0/cache/index0/level", "1\n")
        .file("sys/devices/system/cpu/cpu0/cache/index0/type", "Data\n")
        .file("sys/devices/system/cpu/cpu0/cache/index0/size", "48K\n")
        .file("sys/devices/system/cpu/cpu0/cache/index1/level", "1\n")
        .file("sys/devices/system/cpu/cpu0/cache/index1/type", "Instruction\n")
        .file("sys/devices/system/cpu/cpu0/cache/index1/size", "32K\n")
        .file("sys/devices/system/cpu/cpu0/cache/index2/level", "2\n")
        .file("sys/devices/system/cpu/cpu0/cache/index2/type", "Unified\n")
        .file("sys/devices/system/cpu/cpu0/cache/index2/size", "2048K\n")
        .file("sys/devices/system/cpu/cpu0/cache/index3/level", "3\n")
        .file("sys/devices/system/cpu/cpu0/cache/index3/type", "Unified\n")
        .file("sys/devices/system/cpu/cpu0/cache/index3/size", "61440K\n")
        .file("sys/class/net/eth0/speed", "25000\n")
        .dir("sys/class/net/eth0/device")
        .file("sys/class/net/lo/speed", "-1\n")
        .file("sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n")
        .file("sys/bus/pci/devices/0000:00:02.0/vendor", "0x1a03\n");
    tree
}

pub(super) fn request() -> DraftRequest {
    DraftRequest {
        system_name: None,
        submitter: "ExampleCo".into(),
        division: Division::Closed,
        system_type: Some("datacenter".into()),
        status: Some("available".into()),
        power: false,
        network: false,
    }
}

pub(super) fn no_backend() -> SoftwareStack {
    SoftwareStack::with_backend(None)
}

pub(super) fn null_backend() -> Backend {
    Backend {
        name: "null".into(),
        version: "0.1.0".into(),
        attributes: vec![
            ("device".into(), "cpu".into()),
            ("precision".into(), "none".into()),
            ("driver_version".into(), "none".into()),
        ],
    }
}

pub(super) fn onnxruntime_backend() -> Backend {
    Backend {
        name: "onnxruntime".into(),
        version: "0.1.0".into(),
        attributes: vec![
            ("vendor".into(), "ONNX Runtime".into()),
            ("device".into(), "cpu".into()),
            ("provider".into(), "cpu".into()),
            ("onnxruntime_version".into(), "1.20.1".into()),
            ("model_sha256".into(), "ab".repeat(32)),
            ("precision".into(), "fp32".into()),
        ],
    }
}

pub(super) fn eight_h100() -> GpuInventory {
    GpuInventory {
        gpus: vec![
            GpuDescription {
                name: "NVIDIA H100 80GB HBM3".into(),
                memory_bytes: Some(81_559 * (1 << 20)),
                max_pcie_link: Some((5, 16)),
                max_clock_mhz: Some(1980),
            };
            8
        ],
        driver_version: Some("550.54.15".into()),
        cuda_version: Some("12.4".into()),
    }
}

pub(super) fn str_field<'a>(fields: &'a Map<String, Value>, key: &str) -> &'a str {
    fields[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is {}", fields[key]))
}

pub(super) fn unfilled(fields: &Map<String, Value>) -> Vec<String> {
    fields_to_fill_in(fields)
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}
