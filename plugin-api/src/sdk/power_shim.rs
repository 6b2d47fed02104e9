//! The `extern "C"` side of a [`PowerMeter`]: the table `export_power_meter!` and
//! `export_plugin!(…, power_meter = T)` put behind their entry, with shims that turn errors and
//! panics into `mlperf_error`s, as for SUT plugins.

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::ffi::{
    self, mlperf_attribute, mlperf_error, mlperf_plugin_api, mlperf_power_info,
    mlperf_power_reading,
};

use super::shim::{create_with, guard, hand_out_attributes, panic_message, Attributes};
use super::{Host, Level, PluginError, PowerMeter, PowerScope};

/// What the host's `void *instance` of a meter points to. The meter sits behind a mutex: the
/// ABI already keeps calls on one instance apart, this makes `&mut self` sound regardless.
struct Meter<T> {
    meter: Mutex<T>,
    host: Host,
    attributes: OnceLock<Attributes>,
    /// Every description handed out, each valid until destroy as the header promises.
    descriptions: Mutex<Vec<CString>>,
}

/// The table of a power meter of type `T`, built at compile time into a static.
pub const fn power_table<T: PowerMeter>(
    name: &'static CStr,
    version: &'static CStr,
) -> mlperf_plugin_api {
    mlperf_plugin_api {
        struct_size: size_of::<mlperf_plugin_api>(),
        next: ptr::null(),
        abi_major: ffi::ABI_MAJOR,
        abi_minor: ffi::ABI_MINOR,
        kind: ffi::KIND_POWER,
        reserved: 0,
        name: name.as_ptr(),
        version: version.as_ptr(),
        capabilities: 0,
        init: None,
        create: Some(create::<T>),
        destroy: Some(destroy::<T>),
        attributes: Some(attributes::<T>),
        issue_query: None,
        flush_queries: None,
        power_info: Some(power_info::<T>),
        read_power: Some(read_power::<T>),
        load_samples: None,
        unload_samples: None,
        devices: None,
        allocate_samples: None,
        free_samples: None,
        write_samples: None,
    }
}

/// # Safety
/// `instance` is NULL or came from `create::<T>` and has not been destroyed.
unsafe fn meter<'a, T>(instance: *mut c_void) -> Result<&'a Meter<T>, PluginError> {
    // SAFETY: the caller's contract.
    unsafe { instance.cast::<Meter<T>>().as_ref() }
        .ok_or_else(|| PluginError::invalid_argument("instance is NULL"))
}

impl<T> Meter<T> {
    /// A meter that panicked once may be half-updated: refuse to go on rather than guess.
    fn lock(&self) -> Result<MutexGuard<'_, T>, PluginError> {
        self.meter.lock().map_err(|_| {
            PluginError::internal("the power meter panicked in an earlier call; it is unusable")
        })
    }
}

unsafe extern "C" fn create<T: PowerMeter>(
    host: *const ffi::mlperf_host_api,
    config_toml: *const c_char,
    config_length: usize,
    instance: *mut *mut c_void,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host's arguments to create, as the ABI passes them; a meter completes
        // nothing, so the host may leave `complete` NULL.
        unsafe {
            create_with(
                host,
                false,
                config_toml,
                config_length,
                instance,
                |config, host| {
                    let meter = T::create(config, &host)?;
                    Ok(Box::new(Meter {
                        meter: Mutex::new(meter),
                        host,
                        attributes: OnceLock::new(),
                        descriptions: Mutex::new(Vec::new()),
                    }))
                },
            )
        }
    })
}

unsafe extern "C" fn destroy<T: PowerMeter>(instance: *mut c_void) {
    if instance.is_null() {
        return;
    }
    // SAFETY: the host destroys what create made, once.
    let boxed = unsafe { Box::from_raw(instance.cast::<Meter<T>>()) };
    let logger = boxed.host.logger();
    // destroy() returns no error: a panic in Drop can only be logged.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(boxed))) {
        let message = panic_message(payload);
        logger.log(
            Level::Error,
            &format!("panic while destroying the power meter: {message}"),
        );
    }
}

unsafe extern "C" fn attributes<T: PowerMeter>(
    instance: *mut c_void,
    attributes: *mut *const mlperf_attribute,
    count: *mut usize,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host passes the instance create made.
        let meter = unsafe { meter::<T>(instance) }?;
        let pairs = match meter.attributes.get() {
            Some(_) => Vec::new(), // built at the first call
            None => meter.lock()?.attributes(),
        };
        // SAFETY: the host's out-pointers, checked there.
        unsafe { hand_out_attributes(&meter.attributes, attributes, count, || pairs) }
    })
}

unsafe extern "C" fn power_info<T: PowerMeter>(
    instance: *mut c_void,
    info: *mut mlperf_power_info,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host passes the instance create made.
        let meter = unsafe { meter::<T>(instance) }?;
        // SAFETY: the host's struct, checked for size before any field is written.
        let info = unsafe { writable(info, "power info") }?;
        let said = meter.lock()?.info();
        let description = CString::new(said.description.replace('\0', "\\0"))
            .expect("NULs were replaced just above");
        let mut descriptions = meter.descriptions.lock().unwrap_or_else(|e| e.into_inner());
        if descriptions.last() != Some(&description) {
            descriptions.push(description);
        }
        info.scope = match said.scope {
            PowerScope::Component => ffi::POWER_SCOPE_COMPONENT,
            PowerScope::Wall => ffi::POWER_SCOPE_WALL,
        };
        info.flags = if said.has_energy_counter {
            ffi::POWER_HAS_ENERGY_COUNTER
        } else {
            0
        } | if said.simulated {
            ffi::POWER_SIMULATED
        } else {
            0
        };
        info.description = descriptions.last().expect("pushed above").as_ptr();
        info.period_ns = u64::try_from(said.period.as_nanos()).unwrap_or(u64::MAX);
        Ok(())
    })
}

unsafe extern "C" fn read_power<T: PowerMeter>(
    instance: *mut c_void,
    reading: *mut mlperf_power_reading,
) -> *mut mlperf_error {
    guard(|| {
        // SAFETY: the host passes the instance create made.
        let meter = unsafe { meter::<T>(instance) }?;
        // SAFETY: the host's struct, checked for size before any field is written.
        let reading = unsafe { writable(reading, "power reading") }?;
        let read = meter.lock()?.read()?;
        reading.watts = read.watts;
        reading.volts = read.volts.unwrap_or(f64::NAN);
        reading.amps = read.amps.unwrap_or(f64::NAN);
        reading.power_factor = read.power_factor.unwrap_or(f64::NAN);
        reading.energy_joules = read.energy_joules.unwrap_or(f64::NAN);
        Ok(())
    })
}

/// The host's out-struct, if it is at least as large as ours (a host of a later minor may
/// pass a larger one; we write the fields we know).
///
/// # Safety
/// `raw` is NULL or a writable struct that begins with `struct_size`, of that many bytes.
unsafe fn writable<'a, S>(raw: *mut S, what: &str) -> Result<&'a mut S, PluginError> {
    if raw.is_null() {
        return Err(PluginError::invalid_argument(format!("{what} is NULL")));
    }
    // SAFETY: every ABI struct begins with struct_size.
    let size = unsafe { raw.cast::<usize>().read() };
    if size < size_of::<S>() {
        return Err(PluginError::invalid_argument(format!(
            "{what} struct_size {size} is smaller than ABI {}.{}'s {}",
            ffi::ABI_MAJOR,
            ffi::ABI_MINOR,
            size_of::<S>()
        )));
    }
    // SAFETY: at least size_of::<S>() writable bytes, per the caller and the check.
    Ok(unsafe { &mut *raw })
}
