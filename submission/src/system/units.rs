//! Sizes and clocks written as system descriptions write them (`128 GB`, `3.84 TB`,
//! `PCIe Gen5 x16`).

const GIB: f64 = (1u64 << 30) as f64;

/// The installed memory `MemTotal` most likely stands for, as `N GB` (`N TB` from 1 TiB on,
/// binary units as vendors mean them). The kernel keeps a few percent for itself, so the
/// figure is rounded up to an eighth of its leading power of two: 125.6 GiB → 128 GB,
/// 503.5 GiB → 512 GB, 755 GiB → 768 GB, 23.5 GiB → 24 GB.
pub(super) fn installed_memory(mem_total_bytes: u64) -> String {
    let gib = mem_total_bytes as f64 / GIB;
    if gib <= 1.0 {
        return format!(
            "{} MB",
            (mem_total_bytes as f64 / (1u64 << 20) as f64).ceil()
        );
    }
    let leading = 2f64.powi(gib.log2().floor() as i32);
    let step = (leading / 8.0).max(1.0);
    let installed = (gib / step).ceil() * step;
    if installed >= 1024.0 {
        format!("{} TB", trim(installed / 1024.0))
    } else {
        format!("{installed} GB")
    }
}

/// A disk's size in decimal units as drives are sold: `275 GB`, `3.84 TB`.
pub(super) fn disk_size(bytes: u64) -> String {
    let gb = bytes as f64 / 1e9;
    if gb >= 1000.0 {
        format!("{} TB", trim(gb / 1000.0))
    } else {
        format!("{} GB", gb.round())
    }
}

/// Accelerator memory in GB (binary, rounded up: NVML's total of an 80 GB H100 is 79.6 GiB).
pub(super) fn device_memory(bytes: u64) -> String {
    format!("{} GB", (bytes as f64 / GIB).ceil())
}

/// A sysfs cache size (`48K`, `32768K`, `1M`) as `48 KiB`, `32 MiB`, `1 MiB`.
pub(super) fn cache_size(sysfs: &str) -> String {
    let (number, unit) = sysfs.split_at(sysfs.trim_end_matches(char::is_alphabetic).len());
    let Ok(number) = number.parse::<u64>() else {
        return sysfs.to_string();
    };
    let kib = match unit {
        "K" => number,
        "M" => number * 1024,
        "G" => number * 1024 * 1024,
        _ => return sysfs.to_string(),
    };
    if kib >= 1024 * 1024 && kib % (1024 * 1024) == 0 {
        format!("{} GiB", kib / (1024 * 1024))
    } else if kib >= 1024 && kib % 1024 == 0 {
        format!("{} MiB", kib / 1024)
    } else {
        format!("{kib} KiB")
    }
}

/// Up to two decimals, without trailing zeros: 1.5, 3.84, 2.
fn trim(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gib(value: f64) -> u64 {
        (value * GIB) as u64
    }

    #[test]
    fn memtotal_rounds_up_to_the_installed_size() {
        assert_eq!(installed_memory(gib(23.54)), "24 GB");
        assert_eq!(installed_memory(gib(125.6)), "128 GB");
        assert_eq!(installed_memory(gib(188.5)), "192 GB");
        assert_eq!(installed_memory(gib(503.5)), "512 GB");
        assert_eq!(installed_memory(gib(755.0)), "768 GB");
        assert_eq!(installed_memory(gib(1510.0)), "1.5 TB");
        assert_eq!(installed_memory(gib(2010.0)), "2 TB");
        assert_eq!(installed_memory(gib(7.6)), "8 GB");
    }

    #[test]
    fn disks_in_decimal_units() {
        assert_eq!(disk_size(536_870_912 * 512), "275 GB");
        assert_eq!(disk_size(3_840_755_982_336), "3.84 TB");
        assert_eq!(disk_size(1_000_204_886_016), "1 TB");
    }

    #[test]
    fn device_memory_rounds_up() {
        assert_eq!(device_memory(81_559 * (1 << 20)), "80 GB");
        assert_eq!(device_memory(143_771 * (1 << 20)), "141 GB");
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(cache_size("48K"), "48 KiB");
        assert_eq!(cache_size("1024K"), "1 MiB");
        assert_eq!(cache_size("32768K"), "32 MiB");
        assert_eq!(cache_size("odd"), "odd");
    }
}
