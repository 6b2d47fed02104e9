//! The official `mlperf::TestSettings`, configured the official way: `FromConfig` for
//! mlperf.conf and user.conf, then single fields by their C++ names.

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::{c_string, ffi, require_built, text, Error};

/// The four scenarios, in the official enum's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    SingleStream,
    MultiStream,
    Server,
    Offline,
}

impl Scenario {
    const ALL: [Scenario; 4] = [
        Scenario::SingleStream,
        Scenario::MultiStream,
        Scenario::Server,
        Scenario::Offline,
    ];

    /// The name config files use (`model.Scenario.key`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::SingleStream => "SingleStream",
            Scenario::MultiStream => "MultiStream",
            Scenario::Server => "Server",
            Scenario::Offline => "Offline",
        }
    }
}

/// The four test modes, in the official enum's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    SubmissionRun,
    AccuracyOnly,
    PerformanceOnly,
    FindPeakPerformance,
}

impl Mode {
    const ALL: [Mode; 4] = [
        Mode::SubmissionRun,
        Mode::AccuracyOnly,
        Mode::PerformanceOnly,
        Mode::FindPeakPerformance,
    ];
}

/// Set once the official `FromConfig` has applied a user.conf in this process.
static USER_CONF_APPLIED: AtomicBool = AtomicBool::new(false);

/// An official `mlperf::TestSettings`, with the official defaults when made.
pub struct TestSettings {
    raw: *mut c_void,
}

// SAFETY: a plain C++ struct owned by this handle; nothing else points to it.
unsafe impl Send for TestSettings {}
// SAFETY: shared access only reads it.
unsafe impl Sync for TestSettings {}

impl TestSettings {
    /// The official defaults (SingleStream, PerformanceOnly).
    pub fn new() -> Result<TestSettings, Error> {
        require_built()?;
        // SAFETY: returns a fresh object or NULL.
        let raw = unsafe { ffi::mlh_settings_new() };
        if raw.is_null() {
            return Err(Error::StartTest("cannot allocate TestSettings".into()));
        }
        Ok(TestSettings { raw })
    }

    pub(crate) fn as_ptr(&self) -> *const c_void {
        self.raw
    }

    pub fn set_scenario(&mut self, scenario: Scenario) {
        // SAFETY: a live object; the value is one of the enum's.
        unsafe { ffi::mlh_settings_set_scenario(self.raw, scenario as c_int) };
    }

    pub fn set_mode(&mut self, mode: Mode) {
        // SAFETY: as above.
        unsafe { ffi::mlh_settings_set_mode(self.raw, mode as c_int) };
    }

    pub fn scenario(&self) -> Scenario {
        // SAFETY: a live object.
        let raw = unsafe { ffi::mlh_settings_get_scenario(self.raw) };
        Scenario::ALL[raw as usize]
    }

    pub fn mode(&self) -> Mode {
        // SAFETY: a live object.
        let raw = unsafe { ffi::mlh_settings_get_mode(self.raw) };
        Mode::ALL[raw as usize]
    }

    /// Whether this process has already had the official `FromConfig` apply a user.conf:
    /// another call would leave the rules' seeds out and log an error (the official LoadGen
    /// counts them in a static), so a process that runs several tests sets a later user.conf's
    /// values key by key instead.
    pub fn user_conf_applied() -> bool {
        USER_CONF_APPLIED.load(Ordering::SeqCst)
    }

    /// The official `FromConfig` on the mlperf.conf compiled into the library (conf_type 0):
    /// the rules, seeds included.
    pub fn apply_mlperf_conf(&mut self, model: &str, scenario: Scenario) -> Result<(), Error> {
        self.apply_config(None, model, scenario, 0)
    }

    /// The official `FromConfig` on a user.conf (conf_type 1). The first such call in a
    /// process applies the embedded mlperf.conf before it; a later one applies the user.conf
    /// alone (the rules' seeds stay 0) and is logged by the official LoadGen as an error
    /// ("Multiple conf files are used"): see [`user_conf_applied`].
    pub fn apply_user_conf(
        &mut self,
        path: &Path,
        model: &str,
        scenario: Scenario,
    ) -> Result<(), Error> {
        USER_CONF_APPLIED.store(true, Ordering::SeqCst);
        self.apply_config(Some(path), model, scenario, 1)
    }

    fn apply_config(
        &mut self,
        path: Option<&Path>,
        model: &str,
        scenario: Scenario,
        conf_type: c_int,
    ) -> Result<(), Error> {
        let file = path.map_or("the embedded mlperf.conf".to_string(), |p| {
            p.display().to_string()
        });
        let c_path = c_string(&path.map(|p| p.display().to_string()).unwrap_or_default())?;
        let c_model = c_string(model)?;
        let c_scenario = c_string(scenario.as_str())?;
        // SAFETY: a live object and NUL-terminated strings that outlive the call.
        let code = unsafe {
            ffi::mlh_settings_from_config(
                self.raw,
                c_path.as_ptr(),
                c_model.as_ptr(),
                c_scenario.as_ptr(),
                conf_type,
            )
        };
        if code == 0 {
            return Ok(());
        }
        let reason = match -code {
            2 => "cannot open the file",
            22 => "a line is not `key = number`",
            _ => "see the detail log",
        };
        Err(Error::Config {
            file,
            model: model.to_string(),
            scenario: scenario.as_str().to_string(),
            code,
            reason,
        })
    }

    /// Sets one field by its C++ name (`min_duration_ms`, `server_target_qps`, …) from text in
    /// the field's type: an unsigned integer, a number, or a flag (0/1/true/false).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), Error> {
        let c_key = c_string(key)?;
        let c_value = c_string(value.trim())?;
        // SAFETY: a live object and NUL-terminated strings that outlive the call.
        match unsafe { ffi::mlh_settings_set(self.raw, c_key.as_ptr(), c_value.as_ptr()) } {
            ffi::OK => Ok(()),
            ffi::UNKNOWN_KEY => Err(Error::UnknownKey(key.to_string())),
            _ => Err(Error::BadValue {
                key: key.to_string(),
                value: value.to_string(),
            }),
        }
    }

    /// One field as text: integers exactly, numbers with 17 significant digits, flags 0/1.
    pub fn get(&self, key: &str) -> Result<String, Error> {
        let c_key = c_string(key)?;
        let mut buffer = [0 as std::ffi::c_char; 64];
        // SAFETY: a live object; the bridge writes a NUL-terminated string within the buffer.
        let code = unsafe {
            ffi::mlh_settings_get(self.raw, c_key.as_ptr(), buffer.as_mut_ptr(), buffer.len())
        };
        if code != ffi::OK {
            return Err(Error::UnknownKey(key.to_string()));
        }
        Ok(text(&buffer))
    }
}

impl Drop for TestSettings {
    fn drop(&mut self) {
        // SAFETY: made by mlh_settings_new, freed once.
        unsafe { ffi::mlh_settings_free(self.raw) };
    }
}
