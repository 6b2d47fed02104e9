//! One CPU instance of several (`provider = "cpu"`, `devices = N`, ABI 1.4): its worker
//! threads keep to its own share of the machine's cores, so instances do not take turns on the
//! same ones. ONNX Runtime's own intra-op threads (`intra_op_threads` > 1) are started with the
//! session, on the host's thread, and are not pinned.

/// The cores of instance `index` of `count` on a machine of `cores`: an even, contiguous
/// share (instances beyond the core count share cores round-robin).
pub(crate) fn cores_of(index: u32, count: u32, cores: usize) -> Vec<usize> {
    let (index, count) = (index as usize, count.max(1) as usize);
    if count >= cores {
        return vec![index % cores.max(1)];
    }
    let share = cores / count;
    (index * share..(index + 1) * share).collect()
}

/// Keeps the calling thread to `cores`; the error says why not.
pub(crate) fn pin_current_thread(cores: &[usize]) -> Result<(), String> {
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET writes within it for a core
    // below CPU_SETSIZE (checked).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &core in cores {
        if core >= libc::CPU_SETSIZE as usize {
            return Err(format!("core {core} is beyond the affinity mask"));
        }
        // SAFETY: as above.
        unsafe { libc::CPU_SET(core, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid mask of its size.
    let status = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) };
    if status != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_get_disjoint_even_shares_of_the_cores() {
        assert_eq!(cores_of(0, 2, 16), (0..8).collect::<Vec<_>>());
        assert_eq!(cores_of(1, 2, 16), (8..16).collect::<Vec<_>>());
        assert_eq!(cores_of(2, 3, 8), vec![4, 5]);
        assert_eq!(cores_of(1, 2, 2), vec![1]);
        // More instances than cores: one core each, round-robin.
        assert_eq!(cores_of(3, 4, 2), vec![1]);
    }

    #[test]
    fn the_calling_thread_can_be_kept_to_a_core() {
        let handle = std::thread::spawn(|| {
            pin_current_thread(&[0]).unwrap();
            // SAFETY: reads the calling thread's mask into a zeroed set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: pid 0 is this thread; `set` is a mask of the size given.
            let status =
                unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
            assert_eq!(status, 0);
            // SAFETY: reads within the set.
            (unsafe { libc::CPU_ISSET(0, &set) }, unsafe {
                libc::CPU_COUNT(&set)
            })
        });
        assert_eq!(handle.join().unwrap(), (true, 1));
        assert!(pin_current_thread(&[libc::CPU_SETSIZE as usize]).is_err());
    }
}
