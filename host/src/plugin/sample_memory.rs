//! Sample memory from the plugin (ABI 1.4's `allocate_samples` / `free_samples`): each loaded
//! set is written once, at load and untimed, into memory the plugin gave (pinned host memory
//! its device reads directly), and the samples handed to the plugin point there until the set
//! is unloaded.

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

/// The plugin's allocator, when its table has both functions.
#[derive(Clone, Copy)]
pub(super) struct SampleMemory {
    allocate: AllocateFn,
    free: FreeFn,
}

impl SampleMemory {
    /// From a checked table; `None` for a plugin that leaves sample memory to the host.
    pub(super) fn of(table: &ffi::mlperf_plugin_api) -> Option<SampleMemory> {
        let end = std::mem::offset_of!(ffi::mlperf_plugin_api, free_samples)
            + size_of::<Option<FreeFn>>();
        if table.struct_size < end {
            return None;
        }
        Some(SampleMemory {
            allocate: table.allocate_samples?,
            free: table.free_samples?,
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
        } else if !matches!(kind, ffi::MEMORY_HOST | ffi::MEMORY_PINNED_HOST) {
            Some(format!(
                "returned memory of kind {kind} (HOST = 1 or PINNED_HOST = 2 expected)"
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            // `block` goes back to the plugin as it drops.
            return Err(refused(ffi::ERROR_INVALID_ARGUMENT, problem));
        }
        let mut block = block;
        set.write_image(block.bytes_mut());
        let copy = LoadedSamples::from_image(Arc::new(block))
            .map_err(|e| refused(ffi::ERROR_INTERNAL, format!("the set's image: {e}")))?;
        Ok(Some((copy, kind)))
    }
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
