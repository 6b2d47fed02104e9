//! A loaded preprocessing module: read, hashed, compiled once (or mapped from the cache),
//! checked against the guest ABI, and ready to make one worker per thread.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::{ExternType, Linker, Module, ValType};

use crate::cache;
use crate::instance::{read_metadata, Shared};
use crate::metadata::{ElementType, Metadata, ModuleIdentity};
use crate::sandbox::{Sandbox, Ticker};
use crate::worker::Worker;
use crate::PreprocessError;

/// The guest ABI's function exports: name, parameter count (all `i32`), one `i32` result.
pub(crate) const FUNCTIONS: [(&str, usize); 7] = [
    ("mlperf_preprocess_abi", 0),
    ("mlperf_preprocess_metadata", 0),
    ("mlperf_preprocess_metadata_len", 0),
    ("mlperf_preprocess_shape", 0),
    ("mlperf_preprocess_input", 1),
    ("mlperf_preprocess", 1),
    ("mlperf_preprocess_output", 0),
];

/// A compiled, checked module.
pub struct PreprocessModule {
    shared: Arc<Shared>,
}

impl PreprocessModule {
    /// Loads the module at `path`.
    pub fn load(path: &Path, sandbox: Sandbox) -> Result<PreprocessModule, PreprocessError> {
        let bytes = std::fs::read(path).map_err(|source| PreprocessError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_bytes(path, &bytes, sandbox)
    }

    /// Loads a module from its bytes; `path` names it in messages and logs.
    pub fn from_bytes(
        path: &Path,
        bytes: &[u8],
        sandbox: Sandbox,
    ) -> Result<PreprocessModule, PreprocessError> {
        let sha256 = hex(&Sha256::digest(bytes));
        let label = path.display().to_string();
        let abi_error = |message: String| PreprocessError::Abi {
            module: label.clone(),
            sha256: sha256.clone(),
            message,
        };
        let engine = sandbox.engine()?;
        let module = cache::compile(&engine, bytes, &sha256, sandbox.cache_dir.as_deref())
            .map_err(|e| PreprocessError::Malformed {
                module: label.clone(),
                message: format!("{e:#}"),
            })?;
        refuse_imports(&module).map_err(|imports| PreprocessError::Imports {
            module: label.clone(),
            sha256: sha256.clone(),
            imports,
        })?;
        check_exports(&module).map_err(abi_error)?;
        let pre = Linker::new(&engine)
            .instantiate_pre(&module)
            .map_err(|e| abi_error(format!("{e:#}")))?;
        let ticker = match sandbox.fuel {
            Some(_) => None,
            None => Some(Ticker::start(&engine)?),
        };
        let placeholder = ModuleIdentity {
            path: path.to_path_buf(),
            sha256: sha256.clone(),
            metadata: Metadata::parse(
                "name=?\nversion=?\ninput_dtype=uint8\ninput_shape=*\n\
                 output_dtype=uint8\noutput_shape=*",
            )
            .expect("placeholder metadata"),
        };
        let mut shared = Shared {
            engine,
            pre,
            sandbox,
            identity: placeholder,
            _ticker: ticker,
        };
        // A first instance reads the ABI version and the metadata.
        let metadata = read_metadata(&shared).map_err(abi_error)?;
        shared.identity.metadata = metadata;
        Ok(PreprocessModule {
            shared: Arc::new(shared),
        })
    }

    pub fn identity(&self) -> &ModuleIdentity {
        &self.shared.identity
    }

    pub fn metadata(&self) -> &Metadata {
        &self.shared.identity.metadata
    }

    /// Checks that samples of `dtype` and `shape` are what the module takes.
    pub fn check_input(&self, dtype: ElementType, shape: &[u64]) -> Result<(), PreprocessError> {
        let declared = &self.metadata().input;
        if dtype == declared.dtype && declared.shape.accepts(shape) {
            return Ok(());
        }
        let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
        Err(PreprocessError::Input {
            module: self.identity().label(),
            sha256: self.identity().sha256.clone(),
            what: format!("samples of {dtype} [{}]", shape.join(",")),
            message: format!("it takes {declared}"),
        })
    }

    /// A worker with its own long-lived instance, for one thread.
    pub fn worker(&self) -> Result<Worker, PreprocessError> {
        Worker::new(Arc::clone(&self.shared))
    }
}

/// Lists the module's imports, if it has any.
fn refuse_imports(module: &Module) -> Result<(), String> {
    let imports: Vec<String> = module
        .imports()
        .map(|import| {
            let kind = match import.ty() {
                ExternType::Func(_) => "function",
                ExternType::Memory(_) => "memory",
                ExternType::Table(_) => "table",
                ExternType::Global(_) => "global",
                _ => "item",
            };
            format!("{}.{} ({kind})", import.module(), import.name())
        })
        .collect();
    match imports.is_empty() {
        true => Ok(()),
        false => Err(imports.join(", ")),
    }
}

fn check_exports(module: &Module) -> Result<(), String> {
    let mut problems = Vec::new();
    match module.get_export("memory") {
        Some(ExternType::Memory(memory)) if !memory.is_64() => {}
        Some(ExternType::Memory(_)) => problems.push("`memory` is a 64-bit memory".to_string()),
        Some(_) => problems.push("`memory` is not a memory".to_string()),
        None => problems.push("no `memory` export".to_string()),
    }
    for (name, params) in FUNCTIONS {
        let Some(export) = module.get_export(name) else {
            problems.push(format!("no `{name}` export"));
            continue;
        };
        let ExternType::Func(func) = export else {
            problems.push(format!("`{name}` is not a function"));
            continue;
        };
        let params_ok =
            func.params().len() == params && func.params().all(|p| matches!(p, ValType::I32));
        let results: Vec<ValType> = func.results().collect();
        if !params_ok || results.len() != 1 || !matches!(results[0], ValType::I32) {
            let wanted = vec!["i32"; params].join(", ");
            problems.push(format!("`{name}` is not `({wanted}) -> i32`"));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems.join("; ")),
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
