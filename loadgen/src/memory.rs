//! The memory a run may still take, to refuse what would not fit before allocating it (an
//! allocation past it ends in an abort or the out-of-memory killer, taking the logs along).

/// `MemAvailable` of /proc/meminfo in bytes (None where it cannot be read).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line["MemAvailable:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// Bytes as GiB, for messages.
pub(crate) fn gib(bytes: f64) -> f64 {
    bytes / f64::from(1u32 << 30)
}

#[cfg(test)]
mod tests {
    #[test]
    fn linux_says_how_much_memory_is_available() {
        if cfg!(target_os = "linux") {
            let available = super::available_memory().expect("MemAvailable");
            assert!(available > 1 << 20, "{available}");
        }
    }
}
