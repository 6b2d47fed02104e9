//! The `extern "C"` side of a [`SutPlugin`]: generic shims that `export_plugin!` puts into the
//! static table. Each body runs under `catch_unwind`, so a panic becomes an
//! `MLPERF_ERROR_PANIC` error carrying its message instead of unwinding into the host.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::{ptr, slice, str};

use crate::ffi::{self, mlperf_attribute, mlperf_error, mlperf_plugin_api, mlperf_sample};

use super::{Host, Level, PluginError, Sample, SutPlugin};

/// What the host's `void *instance` points to.
struct Instance<T> {
    plugin: T,
    host: Host,
    attributes: OnceLock<Attributes>,
}

/// The attribute table handed to the host, with the strings it points into.
pub(super) struct Attributes {
    table: Vec<mlperf_attribute>,
    _strings: Vec<CString>,
}

// SAFETY: the table's pointers point into `_strings`, owned alongside and never changed.
unsafe impl Send for Attributes {}
// SAFETY: as above.
unsafe impl Sync for Attributes {}

/// The table for a SUT plugin of type `T`, built at compile time into a static.
pub const fn sut_table<T: SutPlugin>(
    name: &'static CStr,
    version: &'static CStr,
    capabilities: u64,
) -> mlperf_plugin_api {
    mlperf_plugin_api {
        struct_size: size_of::<mlperf_plugin_api>(),
        next: ptr::null(),
        abi_major: ffi::ABI_MAJOR,
        abi_minor: ffi::ABI_MINOR,
        kind: ffi::KIND_SUT,
        reserved: 0,
        name: name.as_ptr(),
        version: version.as_ptr(),
        capabilities,
        init: None,
        create: Some(create::<T>),
        destroy: Some(destroy::<T>),
        attributes: Some(attributes::<T>),
        issue_query: Some(issue_query::<T>),
        flush_queries: Some(flush_queries::<T>),
        power_info: None,
        read_power: None,
        load_samples: Some(load_samples::<T>),
        unload_samples: Some(unload_samples::<T>),
        devices: Some(super::device::devices::<T>),
        allocate_samples: None,
        free_samples: None,
        write_samples: None,
    }
}

/// `concat!(name, "\0")` as a CStr, checked at compile time.
pub const fn c_str(nul_terminated: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(nul_terminated.as_bytes()) {
        Ok(c_str) => c_str,
        Err(_) => panic!("plugin name and version must not contain NUL"),
    }
}

/// Version negotiation: serve any minor of our major (a host with a lower minor uses what it
/// knows, as the header says), refuse any other major.
pub fn entry(
    table: &'static mlperf_plugin_api,
    host_abi_major: u32,
    _host_abi_minor: u32,
) -> *const mlperf_plugin_api {
    if host_abi_major == ffi::ABI_MAJOR {
        table
    } else {
        ptr::null()
    }
}

/// Runs a shim body, turning its error or panic into an `mlperf_error` (NULL on success).
pub(super) fn guard(body: impl FnOnce() -> Result<(), PluginError>) -> *mut mlperf_error {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(error)) => error.into_raw(),
        Err(payload) => PluginError::panic(panic_message(payload)).into_raw(),
    }
}

pub(super) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    let message = match payload.downcast_ref::<&str>() {
        Some(text) => (*text).to_owned(),
        None => match payload.downcast_ref::<String>() {
            Some(text) => text.clone(),
            None => "panic with a non-string payload".to_owned(),
        },
    };
    // A payload whose drop panics would unwind into the host; leak it instead.
    std::mem::forget(payload);
    message
}

/// # Safety
/// `instance` is NULL or came from `create::<T>` and has not been destroyed.
unsafe fn instance<'a, T>(instance: *mut c_void) -> Result<&'a Instance<T>, PluginError> {
    // SAFETY: the caller's contract.
    unsafe { instance.cast::<Instance<T>>().as_ref() }
        .ok_or_else(|| PluginError::invalid_argument("instance is NULL"))
}

unsafe extern "C" fn create<T: SutPlugin>(
    host: *const ffi::mlperf_host_api,
    config_toml: *const c_char,
    config_length: usize,
    instance: *mut *mut c_void,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host's arguments to create, as the ABI passes them.
        unsafe {
            create_with(
                host,
                true,
                config_toml,
                config_length,
                instance,
                |config, host| {
                    let plugin = T::create(config, &host)?;
                    Ok(Box::new(Instance {
                        plugin,
                        host,
                        attributes: OnceLock::new(),
                    }))
                },
            )
        }
    })
}

/// What every `create` does around the plugin's own: checks the out-pointer, the host table
/// (`needs_complete`: a SUT must be able to complete) and the config, then hands the boxed
/// instance `make` builds to the host.
///
/// # Safety
/// The arguments are the host's to `create`: `host` valid until destroy, `config_length`
/// bytes at `config_toml`, `instance` NULL or writable.
pub(super) unsafe fn create_with<I>(
    host: *const ffi::mlperf_host_api,
    needs_complete: bool,
    config_toml: *const c_char,
    config_length: usize,
    instance: *mut *mut c_void,
    make: impl FnOnce(&str, Host) -> Result<Box<I>, PluginError>,
) -> Result<(), PluginError> {
    if instance.is_null() {
        return Err(PluginError::invalid_argument(
            "instance out-pointer is NULL",
        ));
    }
    // SAFETY: the host's pointer, valid until destroy by the ABI.
    let host = unsafe { Host::from_raw_for(host, needs_complete) }?;
    // SAFETY: the host passes `config_length` bytes at `config_toml`.
    let config = unsafe { config_text(config_toml, config_length) }?;
    let boxed = make(config, host)?;
    // SAFETY: checked non-NULL above; the host provides the out-pointer.
    unsafe { *instance = Box::into_raw(boxed).cast() };
    Ok(())
}

/// The config the host passed to `create`, as text.
///
/// # Safety
/// `config_toml` is NULL or `config_length` bytes valid for `'a`.
pub(super) unsafe fn config_text<'a>(
    config_toml: *const c_char,
    config_length: usize,
) -> Result<&'a str, PluginError> {
    match config_length {
        0 => Ok(""),
        _ if config_toml.is_null() => Err(PluginError::invalid_argument("config is NULL")),
        // SAFETY: the caller's contract.
        _ => str::from_utf8(unsafe {
            slice::from_raw_parts(config_toml.cast::<u8>(), config_length)
        })
        .map_err(|e| PluginError::invalid_config(format!("config is not UTF-8: {e}"))),
    }
}

unsafe extern "C" fn destroy<T: SutPlugin>(instance: *mut c_void) {
    if instance.is_null() {
        return;
    }
    // SAFETY: the host destroys what create made, once.
    let boxed = unsafe { Box::from_raw(instance.cast::<Instance<T>>()) };
    let logger = boxed.host.logger();
    // destroy() returns no error: a panic in Drop can only be logged.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(boxed))) {
        let message = panic_message(payload);
        logger.log(Level::Error, &format!("panic while destroying: {message}"));
    }
}

unsafe extern "C" fn attributes<T: SutPlugin>(
    instance_ptr: *mut c_void,
    attributes: *mut *const mlperf_attribute,
    count: *mut usize,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host passes the instance create made.
        let instance = unsafe { instance::<T>(instance_ptr) }?;
        // SAFETY: the host's out-pointers, checked there.
        unsafe {
            hand_out_attributes(&instance.attributes, attributes, count, || {
                instance.plugin.attributes()
            })
        }
    })
}

/// Writes the instance's attribute table (built from `pairs` at the first call, kept until
/// destroy) to the host's out-pointers.
///
/// # Safety
/// `attributes` and `count` are NULL or writable.
pub(super) unsafe fn hand_out_attributes(
    cell: &OnceLock<Attributes>,
    attributes: *mut *const mlperf_attribute,
    count: *mut usize,
    pairs: impl FnOnce() -> Vec<(String, String)>,
) -> Result<(), PluginError> {
    if attributes.is_null() || count.is_null() {
        return Err(PluginError::invalid_argument(
            "attribute out-pointer is NULL",
        ));
    }
    if cell.get().is_none() {
        let built = build_attributes(pairs())?;
        // Two racing first calls build the same table; either one is kept.
        let _ = cell.set(built);
    }
    let table = &cell.get().expect("set just above").table;
    // SAFETY: both out-pointers checked non-NULL; the table lives as long as `cell`.
    unsafe {
        *attributes = table.as_ptr();
        *count = table.len();
    }
    Ok(())
}

fn build_attributes(pairs: Vec<(String, String)>) -> Result<Attributes, PluginError> {
    let mut strings = Vec::with_capacity(pairs.len() * 2);
    let mut table = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let key = CString::new(key)
            .map_err(|_| PluginError::internal("an attribute key contains NUL"))?;
        let value = CString::new(value)
            .map_err(|_| PluginError::internal("an attribute value contains NUL"))?;
        // The CStrings' heap buffers do not move when the CStrings are moved into `strings`.
        table.push(mlperf_attribute {
            key: key.as_ptr(),
            value: value.as_ptr(),
        });
        strings.push(key);
        strings.push(value);
    }
    Ok(Attributes {
        table,
        _strings: strings,
    })
}

unsafe extern "C" fn issue_query<T: SutPlugin>(
    instance_ptr: *mut c_void,
    samples: *const mlperf_sample,
    count: usize,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host passes the instance create made.
        let instance = unsafe { instance::<T>(instance_ptr) }?;
        // SAFETY: the host passes `count` samples strided by struct_size, valid during the call.
        unsafe {
            with_samples(samples, count, |samples| {
                instance
                    .plugin
                    .issue_query(samples, &instance.host.completer)
            })
        }
    })
}

unsafe extern "C" fn load_samples<T: SutPlugin>(
    instance_ptr: *mut c_void,
    samples: *const mlperf_sample,
    count: usize,
) -> *mut mlperf_error {
    // SAFETY: the host's arguments to load_samples.
    unsafe { sample_set::<T>(instance_ptr, samples, count, T::load_samples) }
}

unsafe extern "C" fn unload_samples<T: SutPlugin>(
    instance_ptr: *mut c_void,
    samples: *const mlperf_sample,
    count: usize,
) -> *mut mlperf_error {
    // SAFETY: the host's arguments to unload_samples.
    unsafe { sample_set::<T>(instance_ptr, samples, count, T::unload_samples) }
}

/// `call` on the instance with the host's sample set.
///
/// # Safety
/// `instance_ptr` came from `create::<T>`; `count` samples strided by struct_size, valid
/// during the call.
unsafe fn sample_set<T: SutPlugin>(
    instance_ptr: *mut c_void,
    samples: *const mlperf_sample,
    count: usize,
    call: fn(&T, &[Sample<'_>]) -> Result<(), PluginError>,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the caller's contract.
        let instance = unsafe { instance::<T>(instance_ptr) }?;
        // SAFETY: the caller's contract.
        unsafe { with_samples(samples, count, |samples| call(&instance.plugin, samples)) }
    })
}

unsafe extern "C" fn flush_queries<T: SutPlugin>(instance_ptr: *mut c_void) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host passes the instance create made.
        unsafe { instance::<T>(instance_ptr) }?
            .plugin
            .flush_queries()
    })
}

/// Views the host's sample array as `&[Sample]`: in place when its stride is ours, else
/// (a host of a later minor with a longer struct) through a copy of the fields we know.
///
/// # Safety
/// `samples` is NULL (with `count` 0) or `count` samples, each `struct_size` bytes apart,
/// whose data and shape stay valid until they are completed.
unsafe fn with_samples(
    samples: *const mlperf_sample,
    count: usize,
    body: impl FnOnce(&[Sample<'_>]) -> Result<(), PluginError>,
) -> Result<(), PluginError> {
    if count == 0 {
        return body(&[]);
    }
    if samples.is_null() {
        return Err(PluginError::invalid_argument("samples is NULL"));
    }
    // SAFETY: the caller's contract; every struct begins with struct_size.
    let stride = unsafe { (*samples).struct_size };
    let ours = size_of::<mlperf_sample>();
    if stride == ours {
        // SAFETY: Sample is a transparent mlperf_sample; `count` of them lie back to back.
        return body(unsafe { slice::from_raw_parts(samples.cast::<Sample<'_>>(), count) });
    }
    if stride < ours {
        return Err(PluginError::invalid_argument(format!(
            "sample struct_size {stride} is smaller than ABI {}.{}'s {ours}",
            ffi::ABI_MAJOR,
            ffi::ABI_MINOR
        )));
    }
    let copied: Vec<Sample<'_>> = (0..count)
        // SAFETY: sample i starts i * stride bytes in and begins with the fields we know.
        .map(|i| unsafe { Sample::from_raw(samples.byte_add(i * stride).read_unaligned()) })
        .collect();
    body(&copied)
}
