//! The compiled-module cache: Cranelift output kept on disk by the module's sha256 and the
//! engine's compatibility hash (wasmtime version and settings), so a run compiles a module
//! once and later runs only map it in. Any cache problem falls back to compiling.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::{Engine, Module};

fn artifact_path(dir: &Path, engine: &Engine, sha256: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    dir.join(format!("{sha256}-{:016x}.cwasm", hasher.finish()))
}

/// The module compiled from `bytes`, from the cache when it holds it.
pub(crate) fn compile(
    engine: &Engine,
    bytes: &[u8],
    sha256: &str,
    dir: Option<&Path>,
) -> wasmtime::Result<Module> {
    let Some(dir) = dir else {
        return Module::new(engine, bytes);
    };
    let path = artifact_path(dir, engine, sha256);
    // Read, not mapped: a file replaced or truncated by another run must not fault this one.
    if let Ok(artifact) = std::fs::read(&path) {
        // SAFETY: the file is one this cache wrote with `Module::serialize` under a name that
        // pins the source's hash and the engine's settings; wasmtime checks its header again.
        match unsafe { Module::deserialize(engine, &artifact) } {
            Ok(module) => return Ok(module),
            Err(error) => tracing::debug!("ignoring cached module {}: {error}", path.display()),
        }
    }
    let module = Module::new(engine, bytes)?;
    if let Err(error) = store(&module, dir, &path) {
        tracing::debug!("not caching compiled module at {}: {error}", path.display());
    }
    Ok(module)
}

fn store(module: &Module, dir: &Path, path: &Path) -> Result<(), String> {
    let artifact = module.serialize().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    // Written aside under a name no other writer uses, then renamed: a concurrent load never
    // reads a half-written file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let partial = path.with_extension(format!(
        "{}-{}.partial",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&partial, artifact).map_err(|e| e.to_string())?;
    std::fs::rename(&partial, path).map_err(|e| e.to_string())
}
