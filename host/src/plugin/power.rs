//! Power meters through the plugin ABI (1.1): `--power plugin:NAME_OR_PATH[?key=value&…]`, for
//! vendors' on-board telemetry. The library is found as SUT plugins are ([`resolve`]) and
//! checked as they are (version, table size, layout descriptor); its meter is the table
//! behind `mlperf_power_plugin_entry` when the library has one (a SUT library that also offers
//! a meter), else behind `mlperf_plugin_entry`, and must be of kind power.
//!
//! The meter is polled: [`PowerSource::start`] starts a sampling thread that calls
//! `read_power` once a period and stamps each reading with the wall clock (the middle of the
//! call); [`PowerSource::stop`] takes one last reading and returns the trace. A failing or
//! panicking read ends the measurement, and `stop` reports the plugin's message; the run's own
//! result is not touched. A read that never returns cannot hang the host: `stop` waits
//! [`STOP_GRACE`] plus three periods, then reports an error and leaves the thread behind,
//! still owning the instance (destroyed, and the library unloaded, only if the read ever
//! returns), and the source refuses to start again.
//!
//! On-host meters measure components: the source's scope is
//! [`Scope::Component`] with the plugin's description unless the plugin says wall, and its
//! provenance [`Provenance::Simulated`] when the plugin says its readings are made up, else
//! [`Provenance::OnHost`].

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use mlperf_plugin_api::ffi;
use mlperf_power::{PowerSample, PowerSource, Provenance, Scope, SourceError, SourceInfo, Trace};

use super::host_api::{host_api, take_error, HostContext};
use super::loader::{c_string, Plugin};
use super::resolve::resolve;

/// How long `stop` waits for a read in flight, beyond three periods, before giving up on it.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// The host polls no faster than this, whatever period the plugin asks for, so a meter cannot
/// take a core from the benchmark.
pub const MIN_PERIOD: Duration = Duration::from_millis(1);

/// Splits the argument of `--power plugin:…` (with or without the `plugin:` prefix) into the
/// library's name or path and the meter's TOML config: `PATH_OR_NAME?key=value&key2=value2`.
/// A value that is TOML by itself (`150.5`, `true`, `"text"`, `[1, 2]`) is kept as is, any
/// other becomes a string (`device=npu0` → `device = "npu0"`); a key without `=` is `true`.
/// Nothing is percent-decoded, so values cannot contain `&`, and a path with a `?` cannot be
/// named this way. Without `?` the config is empty.
pub fn parse_plugin_power_spec(argument: &str) -> (String, String) {
    let argument = argument.strip_prefix("plugin:").unwrap_or(argument);
    let (target, query) = argument.split_once('?').unwrap_or((argument, ""));
    let mut config = String::new();
    for pair in query.split('&').filter(|pair| !pair.trim().is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, "true"));
        config.push_str(&toml_key(key.trim()));
        config.push_str(" = ");
        config.push_str(&toml_value(value.trim()));
        config.push('\n');
    }
    (target.to_owned(), config)
}

fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match bare {
        true => key.to_owned(),
        false => toml::Value::String(key.to_owned()).to_string(),
    }
}

fn toml_value(value: &str) -> String {
    match format!("value = {value}").parse::<toml::Table>() {
        Ok(_) => value.to_owned(),
        Err(_) => toml::Value::String(value.to_owned()).to_string(),
    }
}

/// Opens the power meter of the plugin `name_or_path` (resolved as SUT plugins are), creates
/// an instance configured by `config_toml` (may be empty) and asks what it measures. `spec`
/// names the source in messages and in its [`SourceInfo`].
pub fn open_power_plugin(
    spec: &str,
    name_or_path: &str,
    config_toml: &str,
) -> Result<Box<dyn PowerSource>, SourceError> {
    let refuse = |message: String| SourceError::Spec {
        spec: spec.to_owned(),
        message,
    };
    let path = resolve(name_or_path).map_err(|e| refuse(crate::error_chain(&e)))?;
    let plugin = Plugin::open_power_meter(&path).map_err(|e| refuse(crate::error_chain(&e)))?;
    let meter = MeterInstance::create(&plugin, config_toml).map_err(refuse)?;
    let said = meter.power_info().map_err(refuse)?;
    let info = &plugin.info;
    let description = match said.description.trim() {
        "" => format!("{} power plugin", info.name),
        text => text.to_owned(),
    };
    let simulated = said.flags & ffi::POWER_SIMULATED != 0;
    let source_info = SourceInfo {
        name: spec.to_owned(),
        scope: match said.scope {
            ffi::POWER_SCOPE_WALL => Scope::Wall,
            _ => Scope::Component(description.clone()),
        },
        provenance: match simulated {
            true => Provenance::Simulated,
            false => Provenance::OnHost,
        },
        period: said.period,
        identity: format!(
            "{} {} power plugin{}: {description} ({}, sha256 {})",
            info.name,
            info.version,
            if simulated { ", simulated" } else { "" },
            info.path.display(),
            info.sha256
        ),
    };
    Ok(Box::new(PluginPowerSource {
        info: source_info,
        has_energy_counter: said.flags & ffi::POWER_HAS_ENERGY_COUNTER != 0,
        meter: Arc::new(meter),
        running: None,
        abandoned: false,
    }))
}

/// What `power_info` said, copied.
struct SaidInfo {
    scope: u32,
    flags: u32,
    description: String,
    /// The polling period: the plugin's, at least [`MIN_PERIOD`].
    period: Duration,
}

type ReadPowerFn = unsafe extern "C" fn(
    instance: *mut c_void,
    reading: *mut ffi::mlperf_power_reading,
) -> *mut ffi::mlperf_error;
type PowerInfoFn = unsafe extern "C" fn(
    instance: *mut c_void,
    info: *mut ffi::mlperf_power_info,
) -> *mut ffi::mlperf_error;

/// One created meter instance. Dropping it destroys the instance, then lets the library go.
struct MeterInstance {
    // Field order matters on drop: the instance goes first (see Drop), the library last.
    instance: *mut c_void,
    destroy: Option<unsafe extern "C" fn(instance: *mut c_void)>,
    power_info: PowerInfoFn,
    read_power: ReadPowerFn,
    /// The plugin's file, for messages.
    file: String,
    // The table and context the plugin was given; it may keep them until destroy.
    _host: Box<ffi::mlperf_host_api>,
    _context: Box<HostContext>,
    _library: Arc<libloading::Library>,
}

// SAFETY: the ABI lets the host call a meter's functions from any thread as long as calls on
// one instance do not overlap; `PluginPowerSource` ensures that (power_info once at open, then
// read_power from at most one sampling thread at a time, never after one was abandoned).
unsafe impl Send for MeterInstance {}
// SAFETY: as above: shared only to hand the instance to the sampling thread.
unsafe impl Sync for MeterInstance {}

impl MeterInstance {
    fn create(plugin: &Plugin, config_toml: &str) -> Result<MeterInstance, String> {
        let info = &plugin.info;
        let file = info.path.display().to_string();
        let table = plugin.table();
        if table.kind != ffi::KIND_POWER {
            return Err(format!(
                "{file}: the plugin ({:?}) is a {} plugin, not a power meter: its \
                 `mlperf_plugin_entry` table is not of kind power, and it exports no \
                 `mlperf_power_plugin_entry`",
                info.name, info.kind
            ));
        }
        // The power functions were appended in 1.1: read them only if the table has them.
        let needed = std::mem::size_of::<ffi::mlperf_plugin_api>();
        if table.abi_minor < 1 || table.struct_size < needed {
            return Err(format!(
                "{file}: a power plugin of ABI {} whose table ({} bytes) has no power \
                 functions (ABI 1.1 added them, {needed} bytes): rebuild it against \
                 mlperf_plugin.h 1.1",
                info.abi, table.struct_size
            ));
        }
        // SAFETY: the table is at least `needed` bytes (checked above) and static in the
        // library; the fields are read in place, not through a reference to the whole.
        let (power_info, read_power) = unsafe {
            (
                std::ptr::addr_of!((*plugin.api).power_info).read(),
                std::ptr::addr_of!((*plugin.api).read_power).read(),
            )
        };
        let missing = |function: &str| {
            format!("{file}: the power plugin does not provide the required function `{function}`")
        };
        let create = table.create.ok_or_else(|| missing("create"))?;
        let destroy = table.destroy.ok_or_else(|| missing("destroy"))?;
        let power_info = power_info.ok_or_else(|| missing("power_info"))?;
        let read_power = read_power.ok_or_else(|| missing("read_power"))?;

        let context = HostContext::new(info.name.clone(), &[], None);
        let host = Box::new(host_api(&context, None));
        if let Some(init) = table.init {
            // SAFETY: the host table lives in `host` for as long as the instance.
            if let Some(error) = unsafe { take_error(init(&*host)) } {
                return Err(call_failed(&file, "init", error));
            }
        }
        let mut instance: *mut c_void = std::ptr::null_mut();
        // SAFETY: per the ABI; the config bytes live across the call.
        let error = unsafe {
            create(
                &*host,
                config_toml.as_ptr().cast(),
                config_toml.len(),
                &mut instance,
            )
        };
        // SAFETY: the plugin's error object, if any.
        if let Some(error) = unsafe { take_error(error) } {
            return Err(call_failed(&file, "create", error));
        }
        Ok(MeterInstance {
            instance,
            destroy: Some(destroy),
            power_info,
            read_power,
            file,
            _host: host,
            _context: context,
            _library: Arc::clone(&plugin.library),
        })
    }

    fn power_info(&self) -> Result<SaidInfo, String> {
        let mut info = ffi::mlperf_power_info {
            struct_size: std::mem::size_of::<ffi::mlperf_power_info>(),
            next: std::ptr::null(),
            scope: ffi::POWER_SCOPE_COMPONENT,
            flags: 0,
            description: std::ptr::null(),
            period_ns: 0,
        };
        // SAFETY: per the ABI; `info` is ours, sized by its struct_size.
        let error = unsafe { (self.power_info)(self.instance, &mut info) };
        // SAFETY: the plugin's error object, if any.
        if let Some(error) = unsafe { take_error(error) } {
            return Err(call_failed(&self.file, "power_info", error));
        }
        if info.period_ns == 0 {
            return Err(format!(
                "{}: power_info gave a period of 0 ns; a meter must say how often it can be read",
                self.file
            ));
        }
        Ok(SaidInfo {
            scope: info.scope,
            flags: info.flags,
            // Valid until destroy, per the ABI; copied now.
            description: c_string(info.description),
            period: Duration::from_nanos(info.period_ns).max(MIN_PERIOD),
        })
    }

    /// One reading, stamped with the middle of the call; `Err` carries the plugin's message.
    fn read(&self) -> Result<(SystemTime, ffi::mlperf_power_reading), String> {
        let mut reading = ffi::mlperf_power_reading {
            struct_size: std::mem::size_of::<ffi::mlperf_power_reading>(),
            next: std::ptr::null(),
            watts: f64::NAN,
            volts: f64::NAN,
            amps: f64::NAN,
            power_factor: f64::NAN,
            energy_joules: f64::NAN,
        };
        let before = SystemTime::now();
        // SAFETY: per the ABI; `reading` is ours, sized by its struct_size.
        let error = unsafe { (self.read_power)(self.instance, &mut reading) };
        let after = SystemTime::now();
        // SAFETY: the plugin's error object, if any.
        if let Some(error) = unsafe { take_error(error) } {
            return Err(call_failed(&self.file, "read_power", error));
        }
        let took = after.duration_since(before).unwrap_or_default();
        Ok((before + took / 2, reading))
    }
}

impl Drop for MeterInstance {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy.take() {
            // SAFETY: destroyed once; no call is in flight (the last owner is dropping it).
            unsafe { destroy(self.instance) };
        }
    }
}

/// `FILE: FUNCTION failed (error CODE, NAME): MESSAGE`.
fn call_failed(file: &str, function: &str, (code, message): (i32, String)) -> String {
    let name = match code {
        ffi::ERROR_INVALID_ARGUMENT => "invalid argument",
        ffi::ERROR_INVALID_CONFIG => "invalid config",
        ffi::ERROR_UNSUPPORTED => "unsupported",
        ffi::ERROR_RESOURCE_EXHAUSTED => "resource exhausted",
        ffi::ERROR_DEVICE => "device",
        ffi::ERROR_INTERNAL => "internal",
        ffi::ERROR_PANIC => "panic",
        _ => "unknown",
    };
    format!("{file}: {function} failed (error {code}, {name}): {message}")
}

/// A power plugin's meter as a [`PowerSource`].
struct PluginPowerSource {
    info: SourceInfo,
    has_energy_counter: bool,
    meter: Arc<MeterInstance>,
    running: Option<Running>,
    /// A read never returned and its thread was left behind: no new one may call the meter.
    abandoned: bool,
}

struct Running {
    stop: Sender<()>,
    result: Receiver<Result<Trace, String>>,
    thread: JoinHandle<()>,
}

impl PluginPowerSource {
    fn failed(&self, message: String) -> SourceError {
        SourceError::Failed {
            name: self.info.name.clone(),
            message,
        }
    }
}

impl PowerSource for PluginPowerSource {
    fn info(&self) -> SourceInfo {
        self.info.clone()
    }

    fn start(&mut self, _mark: &str) -> Result<(), SourceError> {
        if self.running.is_some() {
            return Err(self.failed("started twice".into()));
        }
        if self.abandoned {
            return Err(self.failed(format!(
                "{}: an earlier read_power never returned; the meter cannot be used again",
                self.meter.file
            )));
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let (report, result) = mpsc::channel();
        let meter = Arc::clone(&self.meter);
        let (period, has_energy_counter) = (self.info.period, self.has_energy_counter);
        let thread = std::thread::Builder::new()
            .name("power-plugin".into())
            .spawn(move || {
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    sample(&meter, period, has_energy_counter, &stopped)
                }))
                .unwrap_or_else(|_| Err("the host's sampling thread panicked".into()));
                let _ = report.send(outcome);
                // If the source was dropped meanwhile, the instance is destroyed here.
                drop(meter);
            })
            .map_err(|e| self.failed(format!("cannot start its sampling thread: {e}")))?;
        self.running = Some(Running {
            stop,
            result,
            thread,
        });
        Ok(())
    }

    fn stop(&mut self) -> Result<Trace, SourceError> {
        let running = self
            .running
            .take()
            .ok_or_else(|| self.failed("not started".into()))?;
        // The thread may have ended already (a failed read): then the send just fails.
        let _ = running.stop.send(());
        let patience = STOP_GRACE + self.info.period * 3;
        match running.result.recv_timeout(patience) {
            Ok(outcome) => {
                let _ = running.thread.join();
                outcome.map_err(|message| self.failed(message))
            }
            Err(RecvTimeoutError::Timeout) => {
                // Dropping the handle detaches the thread; it keeps the instance alive.
                self.abandoned = true;
                Err(self.failed(format!(
                    "{}: read_power did not return within {:.1} s of the stop; the measurement \
                     is lost and its sampling thread was left behind",
                    self.meter.file,
                    patience.as_secs_f64()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = running.thread.join();
                Err(self.failed("its sampling thread ended without a result".into()))
            }
        }
    }
}

impl Drop for PluginPowerSource {
    fn drop(&mut self) {
        // Never stopped: tell the thread, which finishes on its own and drops its share of
        // the instance; nothing waits here.
        if let Some(running) = self.running.take() {
            let _ = running.stop.send(());
        }
    }
}

/// The sampling thread's loop: a reading once a period until told to stop, then one last
/// reading so the trace covers the stop. Slots missed behind a slow read are skipped, not
/// caught up in a burst.
fn sample(
    meter: &MeterInstance,
    period: Duration,
    has_energy_counter: bool,
    stopped: &Receiver<()>,
) -> Result<Trace, String> {
    let mut trace = Trace::default();
    let mut next = Instant::now();
    loop {
        record(meter, has_energy_counter, &mut trace)?;
        next += period;
        let now = Instant::now();
        if next < now {
            next = now;
        }
        match stopped.recv_timeout(next - now) {
            Err(RecvTimeoutError::Timeout) => continue,
            _ => {
                record(meter, has_energy_counter, &mut trace)?;
                return Ok(trace);
            }
        }
    }
}

fn record(
    meter: &MeterInstance,
    has_energy_counter: bool,
    trace: &mut Trace,
) -> Result<(), String> {
    let (time, reading) = meter.read().map_err(|message| {
        format!(
            "{message} (after {} reading(s); the measurement is lost)",
            trace.samples.len()
        )
    })?;
    let known = |value: f64| value.is_finite().then_some(value);
    trace.samples.push(PowerSample {
        time,
        // PTDaemon's mark of a missing reading, which the checker leaves out.
        watts: known(reading.watts).unwrap_or(-1.0),
        volts: known(reading.volts),
        amps: known(reading.amps),
        power_factor: known(reading.power_factor),
    });
    if has_energy_counter {
        if let Some(joules) = known(reading.energy_joules) {
            trace.energy.push((time, joules));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_splits_into_target_and_toml() {
        let split = |argument: &str| parse_plugin_power_spec(argument);
        assert_eq!(split("plugin:null"), ("null".into(), String::new()));
        assert_eq!(
            split("/opt/npu/libnpu.so"),
            ("/opt/npu/libnpu.so".into(), String::new())
        );
        assert_eq!(
            split("plugin:./libnpu.so?watts=150&period_ms=5&device=npu0&wall&&name=\"a b\""),
            (
                "./libnpu.so".into(),
                "watts = 150\nperiod_ms = 5\ndevice = \"npu0\"\nwall = true\nname = \"a b\"\n"
                    .into()
            )
        );
        // What is not TOML by itself becomes a string; odd keys are quoted.
        let (_, config) = split("x?list=1,2&eq=a=b&empty=&sensor.id=3&quote=say \"hi\"");
        assert_eq!(
            config,
            "list = \"1,2\"\neq = \"a=b\"\nempty = \"\"\n\"sensor.id\" = 3\nquote = 'say \"hi\"'\n"
        );
        assert!(config.parse::<toml::Table>().is_ok(), "{config}");
    }
}
