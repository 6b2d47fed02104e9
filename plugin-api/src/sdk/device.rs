//! [`Device`]: what a plugin driving several devices lists (ABI 1.4), and the shim that hands
//! the list to the host.

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::Mutex;

use super::shim::{config_text, guard};
use super::{PluginError, SutPlugin};
use crate::ffi::{self, mlperf_device, mlperf_error};

/// What kind of device it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Other,
    Cpu,
    Gpu,
    Npu,
}

impl DeviceKind {
    fn to_raw(self) -> u32 {
        match self {
            DeviceKind::Other => ffi::DEVICE_OTHER,
            DeviceKind::Cpu => ffi::DEVICE_CPU,
            DeviceKind::Gpu => ffi::DEVICE_GPU,
            DeviceKind::Npu => ffi::DEVICE_NPU,
        }
    }

    fn from_raw(raw: u32) -> DeviceKind {
        match raw {
            ffi::DEVICE_CPU => DeviceKind::Cpu,
            ffi::DEVICE_GPU => DeviceKind::Gpu,
            ffi::DEVICE_NPU => DeviceKind::Npu,
            _ => DeviceKind::Other,
        }
    }
}

/// One device an instance may be created for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The plugin's own number for it (e.g. CUDA's device index).
    pub ordinal: u32,
    pub kind: DeviceKind,
    /// E.g. "NVIDIA H200".
    pub name: String,
    /// What identifies it across restarts (a UUID, a PCI bus id), where it has one.
    pub id: Option<String>,
    /// Its own memory in bytes; 0 when it has none or it is not known.
    pub memory_bytes: u64,
}

impl Device {
    /// Reads the host's copy of a device.
    ///
    /// # Safety
    /// `raw` is NULL or points to a `mlperf_device` of at least `struct_size` bytes whose
    /// strings are NULL or NUL-terminated.
    pub(crate) unsafe fn from_raw(raw: *const mlperf_device) -> Option<Device> {
        // SAFETY: the caller's contract.
        let raw = unsafe { raw.as_ref() }?;
        if raw.struct_size < size_of::<mlperf_device>() {
            return None;
        }
        let text = |p: *const c_char| {
            // SAFETY: NUL-terminated, per the caller.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        Some(Device {
            ordinal: raw.ordinal,
            kind: DeviceKind::from_raw(raw.kind),
            name: text(raw.name).unwrap_or_default(),
            id: text(raw.id),
            memory_bytes: raw.memory_bytes,
        })
    }
}

/// The list last handed to the host, kept until the next call (a library has one SUT table,
/// so one list).
static LISTED: Mutex<Option<Listed>> = Mutex::new(None);

struct Listed {
    table: Vec<mlperf_device>,
    _strings: Vec<CString>,
}

// SAFETY: the table's pointers point into `_strings`, owned alongside and never changed.
unsafe impl Send for Listed {}

fn build(devices: Vec<Device>) -> Result<Listed, PluginError> {
    let mut strings = Vec::new();
    let mut table = Vec::with_capacity(devices.len());
    let mut keep = |text: String| -> Result<*const c_char, PluginError> {
        let text = CString::new(text)
            .map_err(|_| PluginError::internal("a device name or id contains NUL"))?;
        // The CString's heap buffer does not move when it is moved into `strings`.
        let at = text.as_ptr();
        strings.push(text);
        Ok(at)
    };
    for device in devices {
        let name = keep(device.name)?;
        let id = match device.id {
            Some(id) => keep(id)?,
            None => ptr::null(),
        };
        table.push(mlperf_device {
            struct_size: size_of::<mlperf_device>(),
            next: ptr::null(),
            ordinal: device.ordinal,
            kind: device.kind.to_raw(),
            name,
            id,
            memory_bytes: device.memory_bytes,
        });
    }
    Ok(Listed {
        table,
        _strings: strings,
    })
}

pub(super) unsafe extern "C" fn devices<T: SutPlugin>(
    _host: *const ffi::mlperf_host_api,
    config_toml: *const c_char,
    config_length: usize,
    devices: *mut *const mlperf_device,
    count: *mut usize,
) -> *mut mlperf_error {
    guard(|| {
        if devices.is_null() || count.is_null() {
            return Err(PluginError::invalid_argument("device out-pointer is NULL"));
        }
        // SAFETY: the host passes `config_length` bytes at `config_toml`.
        let config = unsafe { config_text(config_toml, config_length) }?;
        let listed = build(T::devices(config)?)?;
        let mut kept = LISTED.lock().unwrap_or_else(|p| p.into_inner());
        let listed = kept.insert(listed);
        // SAFETY: both out-pointers checked non-NULL; the table lives until the next call.
        unsafe {
            *devices = match listed.table.is_empty() {
                true => ptr::null(),
                false => listed.table.as_ptr(),
            };
            *count = listed.table.len();
        }
        Ok(())
    })
}
