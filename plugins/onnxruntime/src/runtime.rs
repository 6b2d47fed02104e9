//! The ONNX Runtime library, loaded once per process (ort keeps one library and one environment
//! for the whole process): the first instance loads it, later instances with the same library
//! reuse it, and an instance asking for another library is refused with both paths.

use std::ffi::{CStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mlperf_plugin_api::sdk::PluginError;
use ort::environment::Environment;

/// Where the library is named when the config does not name it.
pub(crate) const LIBRARY_ENV: &str = "ORT_DYLIB_PATH";

/// A loaded ONNX Runtime.
pub(crate) struct Runtime {
    /// The library, as given (canonical paths are compared).
    pub path: PathBuf,
    canonical: PathBuf,
    /// Its GetVersionString, e.g. "1.31.1".
    pub version: String,
    /// Its execution providers, e.g. ["CPUExecutionProvider"].
    pub providers: Vec<String>,
    pub environment: Environment,
}

static LOADED: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

/// The library the config names, else `from_env` (ORT_DYLIB_PATH's value), else the one pip
/// installed in `venv` (`scripts/setup-onnxruntime.sh` puts it in the clone's `.venv`: a
/// quickstart followed by a run from a new shell finds it); an error saying how to name one.
pub(crate) fn library_path(
    configured: Option<&Path>,
    from_env: Option<OsString>,
    venv: &Path,
) -> Result<PathBuf, PluginError> {
    if let Some(path) = configured {
        return Ok(path.to_path_buf());
    }
    match from_env {
        Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
        _ => installed_in(venv).ok_or_else(|| {
            PluginError::invalid_config(format!(
                "onnxruntime plugin: no ONNX Runtime library given: set `library` in the plugin \
                 config (e.g. --plugin-set library=/path/to/libonnxruntime.so.1.31.1) or the \
                 {LIBRARY_ENV} environment variable, or run from the clone whose .venv \
                 scripts/setup-onnxruntime.sh installed it in; pip's onnxruntime wheel has the \
                 library at site-packages/onnxruntime/capi/libonnxruntime.so.<version>"
            ))
        }),
    }
}

/// `VENV/lib/python*/site-packages/onnxruntime/capi/libonnxruntime.so.<version>`, the last by
/// name when there are several.
fn installed_in(venv: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(venv.join("lib"))
        .ok()?
        .flatten()
        .map(|python| python.path().join("site-packages/onnxruntime/capi"))
        .filter_map(|capi| std::fs::read_dir(capi).ok())
        .flat_map(|entries| entries.flatten().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("libonnxruntime.so."))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Loads ONNX Runtime from `path`, or returns the one this process already loaded from there.
pub(crate) fn load(path: &Path) -> Result<Arc<Runtime>, PluginError> {
    let canonical = std::fs::canonicalize(path).map_err(|e| {
        PluginError::invalid_config(format!(
            "onnxruntime plugin: library = \"{}\": {e}",
            path.display()
        ))
    })?;
    if !canonical.is_file() {
        return Err(PluginError::invalid_config(format!(
            "onnxruntime plugin: library = \"{}\" is not a file",
            path.display()
        )));
    }
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(runtime) = loaded.as_ref() {
        if runtime.canonical == canonical {
            return Ok(Arc::clone(runtime));
        }
        return Err(PluginError::invalid_config(format!(
            "onnxruntime plugin: library = \"{}\", but this process already loaded ONNX Runtime \
             {} from \"{}\" and can load only one: use the same library for every instance",
            path.display(),
            runtime.version,
            runtime.path.display()
        )));
    }
    let runtime = Arc::new(open(path, canonical)?);
    *loaded = Some(Arc::clone(&runtime));
    Ok(runtime)
}

fn open(path: &Path, canonical: PathBuf) -> Result<Runtime, PluginError> {
    // Opened here first for dlopen's own reason on failure (ort's message drops it); kept open
    // until ort has its handle to the same library.
    // SAFETY: loading a library runs its initialisers; ONNX Runtime's are what ort runs too.
    let _opened = unsafe { libloading::Library::new(&canonical) }.map_err(|e| {
        let reason = std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
        PluginError::invalid_config(format!(
            "onnxruntime plugin: cannot use library = \"{}\" as ONNX Runtime: {reason}",
            path.display()
        ))
    })?;
    // The canonical (absolute) path: ort would look for a relative one beside the executable.
    let builder = ort::init_from(&canonical).map_err(|e| {
        PluginError::invalid_config(format!(
            "onnxruntime plugin: cannot use library = \"{}\" as ONNX Runtime: {e}",
            path.display()
        ))
    })?;
    let environment = builder
        .with_name("mlperf-plugin-onnxruntime")
        .with_telemetry(false)
        .build()
        .map_err(|e| {
            PluginError::internal(format!(
                "onnxruntime plugin: cannot create the ONNX Runtime environment: {e}"
            ))
        })?;
    Ok(Runtime {
        path: path.to_path_buf(),
        version: version_string(&canonical)?,
        providers: available_providers()?,
        environment,
        canonical,
    })
}

/// OrtGetApiBase()->GetVersionString() (ort checks the version but does not expose it).
fn version_string(library: &Path) -> Result<String, PluginError> {
    let failed = |what: String| {
        PluginError::internal(format!(
            "onnxruntime plugin: cannot read the version of \"{}\": {what}",
            library.display()
        ))
    };
    // SAFETY: ort already loaded this library (so dlopen only counts a reference) and checked
    // that it exports OrtGetApiBase with this signature.
    unsafe {
        let library = libloading::Library::new(library).map_err(|e| failed(e.to_string()))?;
        let base = library
            .get::<unsafe extern "C" fn() -> *const ort::sys::OrtApiBase>(b"OrtGetApiBase")
            .map_err(|e| failed(e.to_string()))?();
        let base = base
            .as_ref()
            .ok_or_else(|| failed("OrtGetApiBase returned NULL".into()))?;
        let version = (base.GetVersionString)();
        if version.is_null() {
            return Err(failed("GetVersionString returned NULL".into()));
        }
        Ok(CStr::from_ptr(version).to_string_lossy().into_owned())
    }
}

/// GetAvailableProviders: the execution providers the library was built with.
fn available_providers() -> Result<Vec<String>, PluginError> {
    let api = ort::api();
    let mut names = std::ptr::null_mut();
    let mut count = 0;
    // SAFETY: the C API's out-pointers; the array is released below with its own count.
    unsafe {
        ort::Error::result_from_status((api.GetAvailableProviders)(&mut names, &mut count))
            .map_err(|e| {
                PluginError::internal(format!(
                    "onnxruntime plugin: cannot list execution providers: {e}"
                ))
            })?;
        if names.is_null() {
            return Ok(Vec::new());
        }
        let list = (0..count.max(0) as usize)
            .map(|i| CStr::from_ptr(*names.add(i)).to_string_lossy().into_owned())
            .collect();
        let _ = ort::Error::result_from_status((api.ReleaseAvailableProviders)(names, count));
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_wins_then_the_environment() {
        let configured = Some(Path::new("/a/libonnxruntime.so"));
        let env = Some(OsString::from("/b/libonnxruntime.so"));
        let no_venv = Path::new("/nonexistent/.venv");
        assert_eq!(
            library_path(configured, env.clone(), no_venv).unwrap(),
            Path::new("/a/libonnxruntime.so")
        );
        assert_eq!(
            library_path(None, env, no_venv).unwrap(),
            Path::new("/b/libonnxruntime.so")
        );
        for unset in [None, Some(OsString::new())] {
            let error = library_path(None, unset, no_venv).unwrap_err();
            assert_eq!(error.code, mlperf_plugin_api::ffi::ERROR_INVALID_CONFIG);
            assert!(error.message.contains("`library`"), "{}", error.message);
            assert!(error.message.contains(LIBRARY_ENV), "{}", error.message);
        }
    }

    #[test]
    fn without_config_or_environment_the_venvs_library_is_found() {
        let venv = std::env::temp_dir().join(format!("ort-venv-{}", std::process::id()));
        let capi = venv.join("lib/python3.11/site-packages/onnxruntime/capi");
        std::fs::create_dir_all(&capi).unwrap();
        for name in ["libonnxruntime.so.1.31.1", "onnxruntime_pybind11_state.so"] {
            std::fs::write(capi.join(name), b"").unwrap();
        }
        let found = library_path(None, None, &venv);
        std::fs::remove_dir_all(&venv).unwrap();
        assert_eq!(found.unwrap(), capi.join("libonnxruntime.so.1.31.1"));
    }
}
