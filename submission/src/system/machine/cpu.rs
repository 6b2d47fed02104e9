//! The host processors: /proc/cpuinfo, with /sys/devices/system/cpu for what cpuinfo leaves
//! out (sockets and cores on Arm, the highest frequency, the caches).

use std::collections::BTreeSet;
use std::path::Path;

use super::{entries, read_expected, read_optional, under, FactError};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuFacts {
    /// `model name` (x86; Arm's cpuinfo has none).
    pub model_name: Option<String>,
    /// Distinct physical packages.
    pub sockets: Option<u32>,
    /// Cores of one package.
    pub cores_per_socket: Option<u32>,
    /// Logical processors of the whole machine.
    pub threads: Option<u32>,
    /// cpufreq's `cpuinfo_max_freq` of cpu0.
    pub max_mhz: Option<u32>,
    /// cpu0's caches, in sysfs order (L1d, L1i, L2, L3).
    pub caches: Vec<CacheFacts>,
}

/// One cache as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFacts {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// As sysfs writes it: `48K`, `32768K`.
    pub size: String,
}

pub(super) fn read(root: &Path, problems: &mut Vec<FactError>) -> CpuFacts {
    let cpuinfo = read_expected(root, "/proc/cpuinfo", problems)
        .map(|text| parse_cpuinfo(&text))
        .unwrap_or_default();
    let topology = sysfs_topology(root);
    let sockets = (!cpuinfo.physical_ids.is_empty())
        .then_some(cpuinfo.physical_ids.len() as u32)
        .or(topology.sockets);
    let cores_per_socket = cpuinfo.cores_per_socket.or(topology.cores_per_socket);
    CpuFacts {
        model_name: cpuinfo.model_name,
        sockets,
        cores_per_socket,
        threads: (cpuinfo.processors > 0).then_some(cpuinfo.processors),
        max_mhz: read_optional(&under(
            root,
            "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
        ))
        .and_then(|khz| khz.parse::<u32>().ok())
        .map(|khz| khz / 1000)
        .filter(|mhz| *mhz > 0),
        caches: caches(root),
    }
}

#[derive(Default)]
struct CpuInfo {
    model_name: Option<String>,
    processors: u32,
    physical_ids: BTreeSet<String>,
    cores_per_socket: Option<u32>,
}

/// `key : value` lines, one block per logical processor.
fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "processor" => info.processors += 1,
            "model name" if info.model_name.is_none() && !value.is_empty() => {
                info.model_name = Some(value.to_string());
            }
            "physical id" => {
                info.physical_ids.insert(value.to_string());
            }
            "cpu cores" if info.cores_per_socket.is_none() => {
                info.cores_per_socket = value.parse().ok().filter(|n| *n > 0);
            }
            _ => {}
        }
    }
    info
}

#[derive(Default)]
struct Topology {
    sockets: Option<u32>,
    cores_per_socket: Option<u32>,
}

/// Sockets and cores from each cpuN's `topology/physical_package_id` and `core_id`.
fn sysfs_topology(root: &Path) -> Topology {
    let cpus = under(root, "/sys/devices/system/cpu");
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for name in entries(&cpus) {
        let is_cpu = name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !is_cpu {
            continue;
        }
        let topology = cpus.join(&name).join("topology");
        let (Some(package), Some(core)) = (
            read_optional(&topology.join("physical_package_id")),
            read_optional(&topology.join("core_id")),
        ) else {
            continue;
        };
        packages.insert(package.clone());
        cores.insert((package, core));
    }
    if packages.is_empty() {
        return Topology::default();
    }
    let sockets = packages.len() as u32;
    Topology {
        sockets: Some(sockets),
        cores_per_socket: Some(cores.len() as u32 / sockets),
    }
}

fn caches(root: &Path) -> Vec<CacheFacts> {
    let dir = under(root, "/sys/devices/system/cpu/cpu0/cache");
    entries(&dir)
        .into_iter()
        .filter(|name| name.starts_with("index"))
        .filter_map(|name| {
            let index = dir.join(name);
            Some(CacheFacts {
                level: read_optional(&index.join("level"))?.parse().ok()?,
                kind: read_optional(&index.join("type"))?,
                size: read_optional(&index.join("size"))?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sockets_of_hyperthreaded_cores() {
        let mut text = String::new();
        for processor in 0..8 {
            text += &format!(
                "processor\t: {processor}\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: {}\ncpu cores\t: 2\n\n",
                processor / 4
            );
        }
        let info = parse_cpuinfo(&text);
        assert_eq!(info.processors, 8);
        assert_eq!(info.physical_ids.len(), 2);
        assert_eq!(info.cores_per_socket, Some(2));
        assert_eq!(
            info.model_name.as_deref(),
            Some("Intel(R) Xeon(R) Platinum 8480+")
        );
    }

    #[test]
    fn arm_cpuinfo_has_no_model_name_or_sockets() {
        let info = parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd4f\n\n");
        assert_eq!(info.processors, 1);
        assert_eq!(info.model_name, None);
        assert!(info.physical_ids.is_empty());
        assert_eq!(info.cores_per_socket, None);
    }
}
