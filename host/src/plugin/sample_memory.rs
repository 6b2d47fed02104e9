//! Sample memory from the plugin (ABI 1.4's `allocate_samples` / `free_samples` /
//! `write_samples`): each loaded set is written once, at load and untimed, into memory the
//! plugin gave (pinned host memory its device reads directly, or the device's own memory,
//! which the host fills through `write_samples` and never reads), and the samples handed to
//! the plugin point there until the set is unloaded.

use std::ffi::c_void;
use std::sync::Arc;

use mlperf_plugin_api::ffi;

use super::error::PluginError;
use super::host_api::take_error;
use crate::samples::{LoadedSamples, SAMPLE_ALIGN};

type AllocateFn = unsafe extern "C" fn(
    instance: *mut c_void,
    bytes: u64,
    alignment: u64,
    memory_kind: *mut u32,
    memory: *mut *mut c_void,
) -> *mut ffi::mlperf_error;
type FreeFn = unsafe extern "C" fn(instance: *mut c_void, memory: *mut c_void, bytes: u64);
type WriteFn = unsafe extern "C" fn(
    instance: *mut c_void,
    memory: *mut c_void,
    offset: u64,
    data: *const c_void,
    length: u64,
) -> *mut ffi::mlperf_error;

/// The most the host hands `write_samples` at once, so a plugin may stage a large set
/// through a bounded buffer.
const WRITE_CHUNK: usize = 64 << 20;

/// The plugin's allocator, when its table has both functions.
#[derive(Clone, Copy)]
pub(super) struct SampleMemory {
    allocate: AllocateFn,
    free: FreeFn,
    /// Required for device memory.
    write: Option<WriteFn>,
}

impl SampleMemory {
    /// From a checked table; `None` for a plugin that leaves sample memory to the host.
    pub(super) fn of(table: &ffi::mlperf_plugin_api) -> Option<SampleMemory> {
        let end = std::mem::offset_of!(ffi::mlperf_plugin_api, free_samples)
            + size_of::<Option<FreeFn>>();
        if table.struct_size < end {
            return None;
        }
        let write_end = std::mem::offset_of!(ffi::mlperf_plugin_api, write_samples)
            + size_of::<Option<WriteFn>>();
        Some(SampleMemory {
            allocate: table.allocate_samples?,
            free: table.free_samples?,
            write: (table.struct_size >= write_end)
                .then_some(table.write_samples)
                .flatten(),
        })
    }

    /// `set` written into memory the instance gives, read from there from now on; `None`
    /// when the instance leaves it in the host's memory (no memory, no error).
    pub(super) fn copy_in(
        self,
        instance: *mut c_void,
        plugin: &str,
        set: &LoadedSamples,
    ) -> Result<Option<(LoadedSamples, u32)>, PluginError> {
        let refused = |code: i32, message: String| PluginError::Call {
            plugin: plugin.to_string(),
            function: "allocate_samples",
            code,
            message,
        };
        let bytes = set.image_len().max(SAMPLE_ALIGN) as u64;
        let mut kind = 0u32;
        let mut memory = std::ptr::null_mut();
        // SAFETY: per the ABI, with the instance alive; the out-pointers are valid.
        let error = unsafe {
            (self.allocate)(instance, bytes, SAMPLE_ALIGN as u64, &mut kind, &mut memory)
        };
        // SAFETY: the plugin's error object, if any.
        if let Some((code, message)) = unsafe { take_error(error) } {
            return Err(refused(code, message));
        }
        if memory.is_null() {
            return Ok(None);
        }
        let block = PluginBlock {
            instance,
            memory: memory.cast(),
            bytes,
            free: self.free,
        };
        let problem = if !(memory as usize).is_multiple_of(SAMPLE_ALIGN) {
            Some(format!(
                "returned memory at {memory:p}, not aligned to {SAMPLE_ALIGN} bytes"
            ))
        } else if !matches!(
            kind,
            ffi::MEMORY_HOST | ffi::MEMORY_PINNED_HOST | ffi::MEMORY_DEVICE
        ) {
            Some(format!(
                "returned memory of kind {kind} (HOST = 1, PINNED_HOST = 2 or DEVICE = 3 expected)"
            ))
        } else if kind == ffi::MEMORY_DEVICE && self.write.is_none() {
            Some("returned DEVICE memory, but its table has no write_samples to fill it".into())
        } else {
            None
        };
        if let Some(problem) = problem {
            // `block` goes back to the plugin as it drops.
            return Err(refused(ffi::ERROR_INVALID_ARGUMENT, problem));
        }
        if let (ffi::MEMORY_DEVICE, Some(write)) = (kind, self.write) {
            let address = memory as usize;
            // Written before the set holds the block: a failed write gives it back at once.
            write_to_device(write, &block, set).map_err(|(code, message)| PluginError::Call {
                plugin: plugin.to_string(),
                function: "write_samples",
                code,
                message,
            })?;
            return Ok(Some((set.placed_on_device(address, Arc::new(block)), kind)));
        }
        let mut block = block;
        set.write_image(block.bytes_mut());
        let copy = LoadedSamples::from_image(Arc::new(block))
            .map_err(|e| refused(ffi::ERROR_INTERNAL, format!("the set's image: {e}")))?;
        Ok(Some((copy, kind)))
    }
}

/// Copies `set`'s image into the device block through the plugin's `write_samples`: the
/// table, then the sample bytes straight from where the host holds them, in chunks.
fn write_to_device(
    write: WriteFn,
    block: &PluginBlock,
    set: &LoadedSamples,
) -> Result<(), (i32, String)> {
    let (table, samples) = set.image_parts();
    let parts = [(0, table.as_slice()), (table.len(), samples)];
    for (start, bytes) in parts {
        for (k, chunk) in bytes.chunks(WRITE_CHUNK).enumerate() {
            let offset = (start + k * WRITE_CHUNK) as u64;
            // SAFETY: per the ABI, with the instance alive; `chunk` is readable for the call.
            let error = unsafe {
                write(
                    block.instance,
                    block.memory.cast(),
                    offset,
                    chunk.as_ptr().cast(),
                    chunk.len() as u64,
                )
            };
            // SAFETY: the plugin's error object, if any.
            if let Some(failure) = unsafe { take_error(error) } {
                return Err(failure);
            }
        }
    }
    Ok(())
}

/// A block the plugin allocated; given back to it when the set reading from it is dropped.
struct PluginBlock {
    instance: *mut c_void,
    memory: *mut u8,
    bytes: u64,
    free: FreeFn,
}

// SAFETY: the block is plain memory the plugin handed over; the set reads it from any thread
// and the plugin's free_samples is called once, from whichever thread drops the set.
unsafe impl Send for PluginBlock {}
// SAFETY: as above: shared reads only.
unsafe impl Sync for PluginBlock {}

impl PluginBlock {
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `bytes` writable bytes the plugin gave, not shared yet.
        unsafe { std::slice::from_raw_parts_mut(self.memory, self.bytes as usize) }
    }
}

impl AsRef<[u8]> for PluginBlock {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: as in bytes_mut; read-only once written.
        unsafe { std::slice::from_raw_parts(self.memory, self.bytes as usize) }
    }
}

impl Drop for PluginBlock {
    fn drop(&mut self) {
        // SAFETY: the block allocate_samples gave, freed once, with its instance alive (the
        // instance's sets are dropped before its destroy).
        unsafe { (self.free)(self.instance, self.memory.cast(), self.bytes) };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use mlperf_plugin_api::sdk::{DType, PluginError as SdkError};

    use super::*;
    use crate::samples::SampleLayout;

    /// A simulated device: its memory is a vector the host cannot reach, at an address that
    /// faults if the host ever reads it (the first page is never mapped).
    struct Device {
        memory: Mutex<Vec<u8>>,
        writes: AtomicUsize,
        freed: AtomicUsize,
        fail_write: bool,
    }

    const ADDRESS: usize = 64 * 16;

    fn device(instance: *mut c_void) -> &'static Device {
        // SAFETY: the tests pass a `Device` that outlives the calls.
        unsafe { &*(instance as *const Device) }
    }

    unsafe extern "C" fn allocate(
        instance: *mut c_void,
        bytes: u64,
        _alignment: u64,
        kind: *mut u32,
        memory: *mut *mut c_void,
    ) -> *mut ffi::mlperf_error {
        *device(instance).memory.lock().unwrap() = vec![0; bytes as usize];
        // SAFETY: the host's out-pointers.
        unsafe {
            *kind = ffi::MEMORY_DEVICE;
            *memory = ADDRESS as *mut c_void;
        }
        std::ptr::null_mut()
    }

    unsafe extern "C" fn free(instance: *mut c_void, memory: *mut c_void, _bytes: u64) {
        assert_eq!(memory as usize, ADDRESS);
        device(instance).freed.fetch_add(1, Ordering::SeqCst);
    }

    unsafe extern "C" fn write(
        instance: *mut c_void,
        memory: *mut c_void,
        offset: u64,
        data: *const c_void,
        length: u64,
    ) -> *mut ffi::mlperf_error {
        let device = device(instance);
        assert_eq!(memory as usize, ADDRESS);
        if device.fail_write {
            return SdkError::device("the copy engine is busy").into_raw();
        }
        device.writes.fetch_add(1, Ordering::SeqCst);
        // SAFETY: `length` readable bytes from the host, for the call.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, length as usize) };
        let mut memory = device.memory.lock().unwrap();
        memory[offset as usize..][..bytes.len()].copy_from_slice(bytes);
        std::ptr::null_mut()
    }

    fn set() -> LoadedSamples {
        let mut set = LoadedSamples::new(4);
        let layout = |n| SampleLayout {
            dtype: DType::U8,
            shape: vec![n],
        };
        set.insert(1, &layout(3), &[1, 1, 1]).unwrap();
        set.insert(3, &layout(100), &[3; 100]).unwrap();
        set
    }

    fn memory(write_samples: Option<WriteFn>) -> SampleMemory {
        SampleMemory {
            allocate,
            free,
            write: write_samples,
        }
    }

    fn new_device(fail_write: bool) -> Device {
        Device {
            memory: Mutex::new(Vec::new()),
            writes: AtomicUsize::new(0),
            freed: AtomicUsize::new(0),
            fail_write,
        }
    }

    #[test]
    fn a_device_block_is_filled_through_write_samples_and_samples_are_handed_as_addresses() {
        let device = new_device(false);
        let instance = &device as *const Device as *mut c_void;
        let host = set();
        let (placed, kind) = memory(Some(write))
            .copy_in(instance, "sim", &host)
            .unwrap()
            .expect("a block");
        assert_eq!(kind, ffi::MEMORY_DEVICE);
        // The table and the sample bytes: two writes, the block now the set's image.
        assert_eq!(device.writes.load(Ordering::SeqCst), 2);
        let mut image = vec![0; host.image_len()];
        host.write_image(&mut image);
        assert_eq!(device.memory.lock().unwrap()[..image.len()], image[..]);
        // Each sample handed at its place in the device's copy, never read by the host.
        let image_bytes = Arc::new(image.clone());
        let image_at = image_bytes.as_ptr() as usize;
        let image_copy = LoadedSamples::from_image(image_bytes).unwrap();
        for index in [1, 3] {
            let handed = placed.handed(index).unwrap();
            let at_host = image_copy.handed(index).unwrap();
            let offset = at_host.data as usize - image_at;
            assert_eq!(handed.data as usize, ADDRESS + offset, "sample {index}");
            assert_eq!(handed.length, at_host.length);
            assert_eq!(handed.shape, at_host.shape);
            assert_eq!(image[offset], index as u8);
        }
        assert!(placed.handed(0).is_none() && placed.get(1).is_none());
        assert_eq!(device.freed.load(Ordering::SeqCst), 0);
        drop(placed);
        assert_eq!(device.freed.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn device_memory_without_write_samples_is_refused_and_given_back() {
        let device = new_device(false);
        let instance = &device as *const Device as *mut c_void;
        let error = match memory(None).copy_in(instance, "sim", &set()) {
            Err(error) => error.to_string(),
            Ok(_) => panic!("accepted a device block it cannot fill"),
        };
        assert!(
            error.contains("allocate_samples") && error.contains("no write_samples"),
            "{error}"
        );
        assert_eq!(device.freed.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_write_fails_the_load_with_the_plugins_message_and_frees_the_block() {
        let device = new_device(true);
        let instance = &device as *const Device as *mut c_void;
        let error = match memory(Some(write)).copy_in(instance, "sim", &set()) {
            Err(error) => error.to_string(),
            Ok(_) => panic!("a failed write was accepted"),
        };
        assert!(
            error.contains("write_samples") && error.contains("the copy engine is busy"),
            "{error}"
        );
        assert_eq!(device.freed.load(Ordering::SeqCst), 1);
    }
}
