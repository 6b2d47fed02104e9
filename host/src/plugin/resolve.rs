//! Finding a plugin by path or by name. A name resolves through `MLPERF_HOST_PLUGIN_PATH`
//! (directories separated by `:`), then the standard plugin directories; each plugin is a
//! `<name>/plugin.toml` manifest beside its library. Last, the plugins built with the host
//! are found beside its executable (`libmlperf_plugin_<name>.so`, cargo's layout).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::PluginError;

/// `<name>/plugin.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    /// "sut" or "power".
    pub kind: String,
    /// The library file, relative to the manifest's directory.
    pub library: String,
    /// The ABI version the plugin was built for, e.g. "1.0".
    pub abi: String,
    #[serde(default)]
    pub description: String,
    /// Where the manifest was found (not in the file).
    #[serde(skip)]
    pub directory: PathBuf,
}

impl Manifest {
    pub fn read(path: &Path) -> Result<Manifest, PluginError> {
        let text = mlperf_submission::input_file::read_to_string(path).map_err(|source| {
            PluginError::Io {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let mut manifest: Manifest =
            toml::from_str(&text).map_err(|source| PluginError::Manifest {
                path: path.to_path_buf(),
                source: Box::new(source),
            })?;
        manifest.directory = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Ok(manifest)
    }

    pub fn library_path(&self) -> PathBuf {
        self.directory.join(&self.library)
    }
}

/// The directories searched for plugins by name, in order.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("MLPERF_HOST_PLUGIN_PATH")
        .map(|value| std::env::split_paths(&value).collect())
        .unwrap_or_default();
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")));
    if let Some(data_home) = data_home {
        dirs.push(data_home.join("mlperf-host/plugins"));
    }
    if let Some(exe_dir) = exe_dir() {
        dirs.push(exe_dir.join("../lib/mlperf-host/plugins"));
    }
    dirs.push(PathBuf::from("/usr/local/lib/mlperf-host/plugins"));
    dirs.push(PathBuf::from("/usr/lib/mlperf-host/plugins"));
    dirs
}

/// A path before a name: an existing file is the library; a plugin folder (one holding a
/// `plugin.toml`, as installed) is its manifest's library; anything else with a separator is
/// a path (missing: the loader says so). Otherwise `spec` is a name looked up in the plugin
/// directories, so a folder of that name in the current directory does not shadow it.
pub fn resolve(spec: &str) -> Result<PathBuf, PluginError> {
    let as_path = Path::new(spec);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    let manifest_path = as_path.join("plugin.toml");
    if as_path.is_dir() && manifest_path.is_file() {
        return Ok(Manifest::read(&manifest_path)?.library_path());
    }
    if spec.contains(std::path::MAIN_SEPARATOR) {
        if as_path.is_dir() {
            return Err(PluginError::NotAFile {
                path: as_path.to_path_buf(),
                why: " (a directory without a plugin.toml)",
            });
        }
        return Ok(as_path.to_path_buf());
    }
    let dirs = search_dirs();
    for dir in &dirs {
        let manifest_path = dir.join(spec).join("plugin.toml");
        if manifest_path.is_file() {
            return Ok(Manifest::read(&manifest_path)?.library_path());
        }
    }
    let built = built_beside_executable(spec);
    if let Some(path) = built.iter().find(|path| path.is_file()) {
        return Ok(path.clone());
    }
    Err(PluginError::NotFound {
        name: spec.to_string(),
        searched: dirs
            .iter()
            .chain(&built)
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

fn exe_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.to_path_buf())
}

/// Where cargo leaves the workspace's plugin `name` beside the host: `target/<profile>/`
/// (`cargo build`) or its `deps/` (`cargo test`).
fn built_beside_executable(name: &str) -> Vec<PathBuf> {
    let Some(dir) = exe_dir() else {
        return Vec::new();
    };
    let file = format!(
        "{}mlperf_plugin_{}{}",
        std::env::consts::DLL_PREFIX,
        name.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    );
    vec![dir.join(&file), dir.join("deps").join(&file)]
}

/// The plugins built beside this executable (`cargo build` leaves them there), by the name
/// `--plugin NAME` finds them with, in name order.
pub fn built_beside() -> Vec<(String, PathBuf)> {
    let Some(dir) = exe_dir() else {
        return Vec::new();
    };
    let prefix = format!("{}mlperf_plugin_", std::env::consts::DLL_PREFIX);
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    // As `resolve` looks: the folder first, then its deps/.
    for folder in [dir.clone(), dir.join("deps")] {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut here: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let file = entry.file_name().into_string().ok()?;
                let name = file
                    .strip_prefix(&prefix)?
                    .strip_suffix(std::env::consts::DLL_SUFFIX)?;
                Some((name.replace('_', "-"), entry.path()))
            })
            .filter(|(name, _)| !found.iter().any(|(known, _)| known == name))
            .collect();
        here.sort();
        found.extend(here);
    }
    found.sort();
    found
}

/// Every plugin manifest in the search directories.
pub fn list() -> Vec<Result<Manifest, PluginError>> {
    let mut found = Vec::new();
    for dir in search_dirs() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path().join("plugin.toml"))
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        found.extend(paths.iter().map(|p| Manifest::read(p)));
    }
    found
}
