//! The official MLPerf LoadGen 6.0.17 as a second engine: its C++ library compiled unaltered
//! from the PyPI source distribution (see build.rs), driven through a small C bridge.
//!
//! A benchmark implements [`SystemUnderTest`] and [`QuerySampleLibrary`], configures
//! [`TestSettings`] through the official `FromConfig` and field by field, and calls
//! [`start_test`]; the official library writes its own logs. A SUT completes samples with
//! [`query_samples_complete`] from any thread.
//!
//! When the sources were not found at build time the crate still builds:
//! [`is_available`] is false and every entry point returns [`Error::NotBuilt`].

mod ffi;
mod settings;
mod test;

pub use settings::{Mode, Scenario, TestSettings};
pub use test::{abort_test, exit_immediately, first_token_complete, query_samples_complete};
pub use test::{run_cpp_null_sut, start_test, LogOutput};
pub use test::{QuerySampleLibrary, SystemUnderTest};

/// The official LoadGen release this crate compiles.
pub const VERSION: &str = "6.0.17";

/// The command that fetches the sources; a rebuild then compiles them.
pub const SETUP_COMMAND: &str = "export \"$(bash scripts/setup-official-engine.sh | tail -n1)\"";

// Ids and indices cross as uintptr_t/size_t, which these types mirror on 64-bit targets.
const _: () = assert!(std::mem::size_of::<usize>() == 8);

/// One issued sample, laid out as the official `mlperf::QuerySample`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct QuerySample {
    /// The official LoadGen's opaque handle (a pointer of its own); never 0.
    pub id: u64,
    pub index: usize,
}

/// One answer, laid out as the official `mlperf::QuerySampleResponse`: `size` bytes at
/// address `data` (read during the completion call only) and, in token runs, the token count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct QuerySampleResponse {
    pub id: u64,
    pub data: usize,
    pub size: usize,
    pub n_tokens: i64,
}

/// True when this build holds the official library.
pub fn is_available() -> bool {
    cfg!(official_loadgen)
}

/// `6.0.17 @ d6147c7eb7`: the version and git revision the official logs carry.
pub fn loadgen_version() -> Result<String, Error> {
    require_built()?;
    let mut buffer = [0 as std::ffi::c_char; 128];
    // SAFETY: the bridge writes a NUL-terminated string within the buffer.
    unsafe { ffi::mlh_loadgen_version(buffer.as_mut_ptr(), buffer.len()) };
    Ok(text(&buffer))
}

/// What went wrong in the official engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "this mlperf-host was built without the official LoadGen {VERSION} sources; fetch them \
         and rebuild: {SETUP_COMMAND} && cargo build --release"
    )]
    NotBuilt,
    #[error("the official TestSettings has no field {0:?}")]
    UnknownKey(String),
    #[error("{value:?} is not a valid value for the official TestSettings field {key}")]
    BadValue { key: String, value: String },
    #[error("{0:?} contains a NUL byte")]
    Nul(String),
    #[error("the official FromConfig rejected {file} (model {model}, scenario {scenario}; error {code}: {reason})")]
    Config {
        file: String,
        model: String,
        scenario: String,
        code: i32,
        reason: &'static str,
    },
    #[error("the official StartTest failed: {0}")]
    StartTest(String),
}

fn require_built() -> Result<(), Error> {
    if is_available() {
        Ok(())
    } else {
        Err(Error::NotBuilt)
    }
}

fn c_string(text: &str) -> Result<std::ffi::CString, Error> {
    std::ffi::CString::new(text).map_err(|_| Error::Nul(text.to_string()))
}

/// The NUL-terminated text the bridge wrote into `buffer`.
fn text(buffer: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = buffer
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_the_sources_says_how_to_get_them() {
        let message = Error::NotBuilt.to_string();
        assert!(message.contains("without the official LoadGen 6.0.17 sources"));
        assert!(message.contains("bash scripts/setup-official-engine.sh"));
        assert!(message.ends_with("cargo build --release"));
        // Entry points refuse exactly when the library is absent.
        assert_eq!(TestSettings::new().is_err(), !is_available());
    }
}
