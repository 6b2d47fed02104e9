//! Memory, operating system, firmware, root file system and network interfaces.

use std::path::Path;

use super::{entries, read_expected, read_optional, under, FactError};

/// A physical network interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetInterface {
    pub name: String,
    /// The link speed, when the link is up and the driver says.
    pub speed_mbit: Option<u32>,
}

/// `MemTotal` of /proc/meminfo, in bytes.
pub(super) fn memory_bytes(root: &Path, problems: &mut Vec<FactError>) -> Option<u64> {
    let text = read_expected(root, "/proc/meminfo", problems)?;
    let line = text.lines().find(|line| line.starts_with("MemTotal:"));
    let kib = line.and_then(|line| {
        let mut words = line["MemTotal:".len()..].split_whitespace();
        let number = words.next()?.parse::<u64>().ok()?;
        (words.next() == Some("kB")).then_some(number)
    });
    if kib.is_none() {
        problems.push(FactError {
            path: under(root, "/proc/meminfo"),
            message: format!(
                "no `MemTotal: N kB` line (found {:?})",
                line.unwrap_or("nothing")
            ),
        });
    }
    kib.map(|kib| kib * 1024)
}

/// `PRETTY_NAME` of /etc/os-release (else `NAME VERSION`), and the kernel's release.
pub(super) fn os_and_kernel(
    root: &Path,
    problems: &mut Vec<FactError>,
) -> (Option<String>, Option<String>) {
    let os = read_expected(root, "/etc/os-release", problems).and_then(|text| {
        let value = |key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
                .map(|value| {
                    value
                        .trim()
                        .trim_matches('"')
                        .trim_matches('\'')
                        .to_string()
                })
                .filter(|value| !value.is_empty())
        };
        value("PRETTY_NAME").or_else(|| {
            let name = value("NAME")?;
            Some(match value("VERSION") {
                Some(version) => format!("{name} {version}"),
                None => name,
            })
        })
    });
    let kernel = read_expected(root, "/proc/sys/kernel/osrelease", problems)
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty());
    (os, kernel)
}

/// What firmware writes where the vendor did not fill the field in.
const DMI_PLACEHOLDERS: &[&str] = &[
    "to be filled by o.e.m.",
    "system product name",
    "system manufacturer",
    "default string",
    "not specified",
    "not applicable",
    "none",
    "o.e.m.",
    "oem",
];

/// The DMI vendor and product name (`Supermicro AS-8125GS-TNMR2`), and the BIOS version and
/// date. Both readable without privileges.
pub(super) fn firmware(root: &Path) -> (Option<String>, Option<String>) {
    let dmi = under(root, "/sys/class/dmi/id");
    let field = |name: &str| {
        read_optional(&dmi.join(name))
            .filter(|value| !DMI_PLACEHOLDERS.contains(&value.to_lowercase().as_str()))
    };
    let platform = match (field("sys_vendor"), field("product_name")) {
        (Some(vendor), Some(product)) if product.starts_with(&vendor) => Some(product),
        (Some(vendor), Some(product)) => Some(format!("{vendor} {product}")),
        _ => None,
    };
    let bios = field("bios_version").map(|version| {
        let vendor = field("bios_vendor")
            .map(|v| format!("{v} "))
            .unwrap_or_default();
        match field("bios_date") {
            Some(date) => format!("{vendor}{version} ({date})"),
            None => format!("{vendor}{version}"),
        }
    });
    (platform, bios)
}

/// The type of the file system mounted at `/` (/proc/mounts; the last mount there wins).
pub(super) fn root_filesystem(root: &Path) -> Option<String> {
    let mounts = read_optional(&under(root, "/proc/mounts"))?;
    mounts.lines().rev().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (_device, mount_point, kind) = (fields.next()?, fields.next()?, fields.next()?);
        (mount_point == "/" && kind != "rootfs").then(|| kind.to_string())
    })
}

/// Interfaces under /sys/class/net with a `device` behind them (not `lo`, bridges, veths).
pub(super) fn network_interfaces(root: &Path) -> Vec<NetInterface> {
    let net = under(root, "/sys/class/net");
    entries(&net)
        .into_iter()
        .filter(|name| net.join(name).join("device").exists())
        .map(|name| NetInterface {
            speed_mbit: read_optional(&net.join(&name).join("speed"))
                .and_then(|speed| speed.parse::<i64>().ok())
                .filter(|speed| *speed > 0)
                .and_then(|speed| u32::try_from(speed).ok()),
            name,
        })
        .collect()
}
