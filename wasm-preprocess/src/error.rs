//! What can go wrong loading a module or preprocessing a sample. Every message names the
//! module, and every sample failure also its sha256 and the sample index, so that a log line
//! alone tells an auditor what ran and where it stopped.

use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum PreprocessError {
    #[error("cannot read preprocessing module {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("preprocessing module {module} is not a valid WebAssembly module: {message}")]
    Malformed { module: String, message: String },
    #[error(
        "preprocessing module {module} (sha256 {sha256}) imports {imports}; preprocessing \
         modules run sandboxed and may import nothing"
    )]
    Imports {
        module: String,
        sha256: String,
        imports: String,
    },
    #[error(
        "preprocessing module {module} (sha256 {sha256}) does not follow the guest ABI: \
         {message} (see wasm-preprocess/README.md)"
    )]
    Abi {
        module: String,
        sha256: String,
        message: String,
    },
    #[error("preprocessing module {module} (sha256 {sha256}) cannot take {what}: {message}")]
    Input {
        module: String,
        sha256: String,
        what: String,
        message: String,
    },
    #[error("WebAssembly runtime: {0}")]
    Runtime(String),
    #[error("preprocessing module {module} (sha256 {sha256}) failed on sample {index}: {failure}")]
    Sample {
        module: String,
        sha256: String,
        index: usize,
        failure: SampleFailure,
    },
}

/// Why one sample's preprocessing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SampleFailure {
    #[error("time limit of {} ms exceeded", .0.as_millis())]
    TimeLimit(Duration),
    #[error("fuel limit of {0} units exhausted")]
    FuelLimit(u64),
    #[error("memory cap of {} MiB reached", .0 / (1024 * 1024))]
    MemoryCap(usize),
    #[error("stack limit of {} KiB exceeded", .0 / 1024)]
    StackLimit(usize),
    #[error("trapped: {0}")]
    Trap(String),
    #[error("the module returned error code {code} ({})", error_code_meaning(*.code))]
    Code { code: i32 },
    #[error("the module cannot take an input of {0} bytes")]
    InputTooLarge(usize),
    #[error("{0}")]
    BadOutput(String),
}

/// The meaning of the guest ABI's reserved error codes.
pub fn error_code_meaning(code: i32) -> &'static str {
    match code {
        -1 => "input shape not accepted",
        -2 => "input length does not match its shape",
        -3 => "out of memory",
        _ => "module-specific",
    }
}
