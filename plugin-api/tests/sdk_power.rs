//! The SDK's power meters through the raw ABI: a meter exported with `export_power_meter!` into
//! this test binary, driven only through its entry symbol and table, as the host drives one.

use std::time::Duration;

use ::mlperf_plugin_api::ffi::{self, mlperf_plugin_api};
use ::mlperf_plugin_api::layout::check_layout;
use ::mlperf_plugin_api::sdk::{
    Host, PluginError, PowerInfo, PowerMeter, PowerReading, PowerScope,
};
use ::mlperf_plugin_api::testing::{RawInstance, RecordingHost};

/// Reads 10 W more each time, with volts; config "fail" breaks every read.
struct Ramp {
    watts: f64,
    fail: bool,
}

impl PowerMeter for Ramp {
    fn create(config: &str, _host: &Host) -> Result<Self, PluginError> {
        Ok(Ramp {
            watts: 0.0,
            fail: config == "fail",
        })
    }

    fn info(&self) -> PowerInfo {
        PowerInfo {
            scope: PowerScope::Wall,
            description: "outlet\0 3".into(),
            period: Duration::from_millis(250),
            has_energy_counter: false,
            simulated: false,
        }
    }

    fn read(&mut self) -> Result<PowerReading, PluginError> {
        if self.fail {
            return Err(PluginError::device("sensor gone"));
        }
        self.watts += 10.0;
        Ok(PowerReading {
            volts: Some(230.0),
            ..PowerReading::watts(self.watts)
        })
    }
}

::mlperf_plugin_api::export_power_meter!(Ramp, name = "ramp", version = "2.0");

#[allow(improper_ctypes)]
extern "C" {
    fn mlperf_plugin_entry(host_abi_major: u32, host_abi_minor: u32) -> *const mlperf_plugin_api;
    fn mlperf_plugin_layout() -> &'static abi_stable::type_layout::TypeLayout;
}

fn table() -> &'static mlperf_plugin_api {
    // SAFETY: the entry returns NULL or its static table.
    unsafe { mlperf_plugin_entry(ffi::ABI_MAJOR, ffi::ABI_MINOR).as_ref() }.expect("table")
}

#[test]
fn the_table_is_a_power_meter_with_a_layout() {
    let api = table();
    assert_eq!(api.kind, ffi::KIND_POWER);
    assert_eq!(api.struct_size, size_of::<mlperf_plugin_api>());
    assert_eq!(
        (api.abi_major, api.abi_minor),
        (ffi::ABI_MAJOR, ffi::ABI_MINOR)
    );
    assert!(api.issue_query.is_none() && api.flush_queries.is_none());
    assert!(api.power_info.is_some() && api.read_power.is_some());
    // SAFETY: plain calls of the exported functions.
    unsafe {
        assert!(mlperf_plugin_entry(ffi::ABI_MAJOR + 1, 0).is_null());
        check_layout(mlperf_plugin_layout()).unwrap();
    }
}

#[test]
fn info_and_readings_cross_the_boundary() {
    let host = RecordingHost::new();
    // SAFETY: our own table; `host` outlives the instance.
    let meter = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    let info = meter.power_info().unwrap();
    assert_eq!(info.scope, ffi::POWER_SCOPE_WALL);
    assert_eq!(info.flags, 0);
    assert_eq!(info.period_ns, 250_000_000);
    assert_eq!(info.description, "outlet\\0 3");
    // Asked again, the same.
    assert_eq!(meter.power_info().unwrap(), info);
    for watts in [10.0, 20.0] {
        let reading = meter.read_power().unwrap();
        assert_eq!((reading.watts, reading.volts), (watts, 230.0));
        assert!(reading.amps.is_nan() && reading.energy_joules.is_nan());
    }
    assert!(meter.attributes().unwrap().is_empty());
}

#[test]
fn errors_and_bad_pointers_are_reported() {
    let host = RecordingHost::new();
    // SAFETY: as above.
    let meter = unsafe { RawInstance::create(table(), &host, "fail") }.unwrap();
    assert_eq!(
        meter.read_power().unwrap_err(),
        PluginError::device("sensor gone")
    );

    let api = table();
    let mut small = ffi::mlperf_power_reading {
        struct_size: 16,
        next: std::ptr::null(),
        watts: f64::NAN,
        volts: f64::NAN,
        amps: f64::NAN,
        power_factor: f64::NAN,
        energy_joules: f64::NAN,
    };
    // SAFETY: every call passes pointers the shims must check before use.
    let errors = unsafe {
        [
            (api.read_power.unwrap())(meter.as_ptr(), &mut small),
            (api.read_power.unwrap())(meter.as_ptr(), std::ptr::null_mut()),
            (api.power_info.unwrap())(meter.as_ptr(), std::ptr::null_mut()),
            (api.read_power.unwrap())(std::ptr::null_mut(), &mut small),
        ]
    };
    for error in errors {
        // SAFETY: released once here.
        let error = unsafe { PluginError::take(error) }.expect("an error");
        assert_eq!(error.code, ffi::ERROR_INVALID_ARGUMENT, "{}", error.message);
    }
    assert!(
        small.watts.is_nan(),
        "nothing written into a struct too small"
    );
}
