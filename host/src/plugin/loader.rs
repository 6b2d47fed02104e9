//! Opening a plugin library and checking it before anything runs: entry symbol, ABI version,
//! table size, kind, required functions, and (for plugins built with our Rust SDK) the type
//! layout of the ABI they were compiled against.

use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_plugin_api::ffi;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::PluginError;

/// What a plugin says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginInfo {
    pub path: PathBuf,
    pub sha256: String,
    pub abi: String,
    pub kind: String,
    pub name: String,
    pub version: String,
    pub capabilities: Vec<&'static str>,
    /// Built with the Rust SDK: its ABI layout was checked.
    pub layout_checked: bool,
}

/// A loaded, checked plugin library.
pub struct Plugin {
    pub(crate) library: Arc<libloading::Library>,
    pub(crate) api: *const ffi::mlperf_plugin_api,
    pub info: PluginInfo,
}

// SAFETY: the table is immutable static data inside the library, which `library` keeps loaded.
unsafe impl Send for Plugin {}
// SAFETY: as for Send: nothing reachable through a Plugin is ever written.
unsafe impl Sync for Plugin {}

/// `sizeof(mlperf_plugin_api)` in ABI 1.0 (64-bit).
const TABLE_SIZE_1_0: usize = 104;

const CAPABILITY_NAMES: [(u64, &str); 6] = [
    (ffi::CAP_ASYNC_COMPLETION, "async_completion"),
    (ffi::CAP_CONCURRENT_ISSUE, "concurrent_issue"),
    (ffi::CAP_NATIVE_BATCHING, "native_batching"),
    (ffi::CAP_TOKENS, "tokens"),
    (ffi::CAP_NEEDS_SAMPLE_DATA, "needs_sample_data"),
    (ffi::CAP_SAMPLE_TIMING, "sample_timing"),
];

impl Plugin {
    /// Loads and checks the library at `path` (canonicalised first).
    pub fn open(path: &Path) -> Result<Plugin, PluginError> {
        Self::open_entry(path, false)
    }

    /// As [`Plugin::open`], for a power meter: through the library's second entry,
    /// `mlperf_power_plugin_entry`, when it has one (a SUT library that also offers a meter),
    /// else through `mlperf_plugin_entry`. The table's kind is left to the caller to check.
    pub(crate) fn open_power_meter(path: &Path) -> Result<Plugin, PluginError> {
        Self::open_entry(path, true)
    }

    fn open_entry(path: &Path, power_meter: bool) -> Result<Plugin, PluginError> {
        let io = |source| PluginError::Io {
            path: path.to_path_buf(),
            source,
        };
        let path = path.canonicalize().map_err(io)?;
        // A FIFO or device would block or never end: only a regular file is read.
        if !std::fs::metadata(&path).map_err(io)?.is_file() {
            return Err(PluginError::NotAFile { path, why: "" });
        }
        let bytes = std::fs::read(&path).map_err(io)?;
        let sha256 = hex(&Sha256::digest(&bytes));

        // SAFETY: loading runs the library's initialisers; a plugin is trusted code by choice.
        let library =
            unsafe { libloading::Library::new(&path) }.map_err(|source| PluginError::Load {
                path: path.clone(),
                source,
            })?;
        let power_entry = match power_meter {
            true => {
                // SAFETY: the symbol's type is fixed by the ABI.
                unsafe { library.get::<ffi::mlperf_plugin_entry_fn>(ffi::POWER_ENTRY_SYMBOL) }.ok()
            }
            false => None,
        };
        let entry: ffi::mlperf_plugin_entry_fn = match power_entry {
            Some(entry) => *entry,
            // SAFETY: as above.
            None => unsafe {
                *library
                    .get::<ffi::mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
                    .map_err(|_| PluginError::MissingEntry { path: path.clone() })?
            },
        };
        // SAFETY: the entry point of ABI 1.x.
        let api = unsafe { entry(ffi::ABI_MAJOR, ffi::ABI_MINOR) };
        if api.is_null() {
            return Err(PluginError::Refused {
                path,
                major: ffi::ABI_MAJOR,
                minor: ffi::ABI_MINOR,
            });
        }
        // SAFETY: non-null, a static table of the library; its first field says how much of
        // it there is, checked before anything else is read.
        let table_size = unsafe { (*api).struct_size };
        // Later minors only append: a table of at least the 1.0 size serves this host.
        let minimum = TABLE_SIZE_1_0;
        if table_size < minimum {
            return Err(PluginError::TooSmall {
                path,
                table: "mlperf_plugin_api",
                found: table_size,
                minimum,
            });
        }
        // SAFETY: the table is at least as large as this host's view of it.
        let table = unsafe { &*api };
        if table.abi_major != ffi::ABI_MAJOR {
            return Err(PluginError::WrongMajor {
                path,
                found: table.abi_major,
                expected: ffi::ABI_MAJOR,
            });
        }
        let same_version = table.abi_minor == ffi::ABI_MINOR;
        let layout_checked = check_layout(&library, &path, same_version)?;
        let kind = match table.kind {
            ffi::KIND_SUT => "sut".to_string(),
            ffi::KIND_POWER => "power".to_string(),
            other => format!("unknown ({other})"),
        };
        let info = PluginInfo {
            sha256,
            abi: format!("{}.{}", table.abi_major, table.abi_minor),
            kind,
            name: c_string(table.name),
            version: c_string(table.version),
            capabilities: CAPABILITY_NAMES
                .iter()
                .filter(|(bit, _)| table.capabilities & bit != 0)
                .map(|(_, name)| *name)
                .collect(),
            layout_checked,
            path,
        };
        Ok(Plugin {
            library: Arc::new(library),
            api,
            info,
        })
    }

    pub(crate) fn table(&self) -> &ffi::mlperf_plugin_api {
        // SAFETY: checked in `open`; the library stays loaded while self lives.
        unsafe { &*self.api }
    }

    /// The table has `load_samples` or `unload_samples` (ABI 1.3).
    /// The plugin offers memory for the loaded samples (ABI 1.4's allocate_samples).
    pub fn offers_sample_memory(&self) -> bool {
        super::sample_memory::SampleMemory::of(self.table()).is_some()
    }

    pub fn has_sample_set_calls(&self) -> bool {
        let table = self.table();
        table.struct_size > ffi::TABLE_SIZE_1_2
            && (table.load_samples.is_some() || table.unload_samples.is_some())
    }

    /// Refuses a plugin that is not a SUT backend or lacks a function a SUT needs.
    pub fn require_sut(&self) -> Result<(), PluginError> {
        let table = self.table();
        let path = || self.info.path.clone();
        if table.kind != ffi::KIND_SUT {
            return Err(PluginError::WrongKind {
                path: path(),
                kind: self.info.kind.clone(),
            });
        }
        let required = [
            ("create", table.create.is_some()),
            ("destroy", table.destroy.is_some()),
            ("issue_query", table.issue_query.is_some()),
            ("flush_queries", table.flush_queries.is_some()),
        ];
        for (function, present) in required {
            if !present {
                return Err(PluginError::MissingFunction {
                    path: path(),
                    function,
                });
            }
        }
        Ok(())
    }
}

/// Plugins built with the Rust SDK export their ABI layout; a mismatch with ours is refused.
/// The check is exact, so it applies only when the plugin answers this host's own version.
fn check_layout(
    library: &libloading::Library,
    path: &Path,
    same_version: bool,
) -> Result<bool, PluginError> {
    use mlperf_plugin_api::layout::{check_layout, LayoutFn, LAYOUT_SYMBOL};
    // SAFETY: the symbol's type is fixed by the SDK.
    let Ok(layout) = (unsafe { library.get::<LayoutFn>(LAYOUT_SYMBOL) }) else {
        return Ok(false);
    };
    if !same_version {
        return Ok(false);
    }
    check_layout(layout()).map_err(|message| PluginError::Layout {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(true)
}

pub(crate) fn c_string(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: the ABI hands out NUL-terminated strings that live as long as the library.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
