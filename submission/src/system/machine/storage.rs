//! The host's disks: /sys/block, without the kernel's virtual devices.

use std::path::Path;

use super::{entries, read_optional, under};

/// A disk: its kernel name, size and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disk {
    pub name: String,
    pub bytes: u64,
    pub kind: DiskKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiskKind {
    Nvme,
    Ssd,
    Hdd,
    /// A hypervisor's disk (virtio `vd*`, Xen `xvd*`): what is behind it is unknown.
    Virtual,
}

impl DiskKind {
    /// As system descriptions write it.
    pub fn describe(self) -> &'static str {
        match self {
            DiskKind::Nvme => "NVMe SSD",
            DiskKind::Ssd => "SSD",
            DiskKind::Hdd => "HDD",
            DiskKind::Virtual => "virtual disk",
        }
    }
}

/// Block devices that are no disk: loop files, RAM disks, device-mapper and RAID volumes
/// (whose disks are listed themselves), network block devices, optical and floppy drives.
const NOT_DISKS: &[&str] = &["loop", "ram", "zram", "dm-", "md", "nbd", "sr", "fd"];

/// /sys/block's disks, by name; removable and empty devices left out.
pub(super) fn disks(root: &Path) -> Vec<Disk> {
    let block = under(root, "/sys/block");
    entries(&block)
        .into_iter()
        .filter(|name| !NOT_DISKS.iter().any(|prefix| name.starts_with(prefix)))
        .filter_map(|name| {
            let dir = block.join(&name);
            if read_optional(&dir.join("removable")).as_deref() == Some("1") {
                return None;
            }
            // `size` counts 512-byte sectors whatever the device's own sector size.
            let bytes = read_optional(&dir.join("size"))?.parse::<u64>().ok()? * 512;
            if bytes == 0 {
                return None;
            }
            let rotational = read_optional(&dir.join("queue/rotational")).as_deref() == Some("1");
            let kind = if name.starts_with("nvme") {
                DiskKind::Nvme
            } else if name.starts_with("vd") || name.starts_with("xvd") {
                DiskKind::Virtual
            } else if rotational {
                DiskKind::Hdd
            } else {
                DiskKind::Ssd
            };
            Some(Disk { name, bytes, kind })
        })
        .collect()
}
