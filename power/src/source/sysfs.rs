//! What the sources read from sysfs (`rapl`, `hwmon`) share: their spec, file reads with
//! errors that name the file, and, for tests, fake sysfs trees.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::options::{spec_error, Argument};
use super::poller::DEFAULT_PERIOD;
use super::{Provenance, Scope, SourceError, SourceInfo};

/// A sysfs source's spec, `KIND[:SELECTOR,…][?period_ms=MS&root=PATH]`, read.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SysfsSpec<'a> {
    /// The spec as written: the source's name.
    pub name: &'a str,
    /// The sysfs root: `/sys`, or a fake tree.
    pub root: &'a Path,
    /// Which zones or chips, none for the default ones.
    pub selectors: Vec<String>,
    pub period: Duration,
}

impl<'a> SysfsSpec<'a> {
    /// Reads `argument`, what follows `KIND:` in `spec`.
    pub(super) fn parse(spec: &'a str, argument: &'a str) -> Result<SysfsSpec<'a>, SourceError> {
        let argument = Argument::parse(spec, argument, &["period_ms=MS", "root=PATH"])?;
        Ok(SysfsSpec {
            name: spec,
            root: Path::new(argument.option("root").unwrap_or("/sys")),
            selectors: argument.selectors(),
            period: argument.period(DEFAULT_PERIOD)?,
        })
    }

    pub(super) fn error(&self, message: impl Into<String>) -> SourceError {
        spec_error(self.name, message)
    }

    /// The info of the source it opens: an on-host figure of `component`.
    pub(super) fn info(&self, component: String, identity: String) -> SourceInfo {
        SourceInfo {
            name: self.name.to_owned(),
            scope: Scope::Component(component),
            provenance: Provenance::OnHost,
            period: self.period,
            identity,
        }
    }
}

/// A sysfs file that could not be read, or held something else than expected.
#[derive(Debug)]
pub(super) enum FileError {
    Io(PathBuf, io::Error),
    Content(PathBuf, String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io(path, error) => write!(f, "cannot read {}: {error}", path.display()),
            FileError::Content(path, content) => write!(
                f,
                "{} holds {content:?} where a non-negative integer was expected",
                path.display()
            ),
        }
    }
}

/// A sysfs file's text, without its trailing newline.
pub(super) fn read_text(path: &Path) -> Result<String, FileError> {
    fs::read_to_string(path)
        .map(|text| text.trim().to_owned())
        .map_err(|e| FileError::Io(path.to_owned(), e))
}

/// A sysfs file holding one unsigned integer (a counter, microwatts).
pub(super) fn read_integer(path: &Path) -> Result<u64, FileError> {
    let text = read_text(path)?;
    text.parse()
        .map_err(|_| FileError::Content(path.to_owned(), text))
}

/// Fake sysfs trees for the on-host sources' tests.
#[cfg(test)]
pub(super) mod fake {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::SysfsSpec;

    /// A fresh directory under the system's temporary one, removed on drop.
    pub(crate) struct FakeRoot(pub PathBuf);

    impl FakeRoot {
        pub(crate) fn new(what: &str) -> FakeRoot {
            static COUNT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "mlperf-power-{what}-{}-{}",
                std::process::id(),
                COUNT.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            FakeRoot(path)
        }

        /// Writes `contents` at `relative`, making its directories.
        pub(crate) fn write(&self, relative: &str, contents: &str) -> PathBuf {
            let path = self.0.join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // Through a rename, so that a poller never reads a half-written file.
            let partial = path.with_extension("partial");
            std::fs::write(&partial, contents).unwrap();
            std::fs::rename(&partial, &path).unwrap();
            path
        }

        pub(crate) fn path(&self) -> &Path {
            &self.0
        }

        /// The spec of a source named `name` reading this tree.
        pub(crate) fn spec<'a>(
            &'a self,
            name: &'a str,
            selectors: &[&str],
            period: Duration,
        ) -> SysfsSpec<'a> {
            SysfsSpec {
                name,
                root: self.path(),
                selectors: selectors.iter().map(|s| s.to_string()).collect(),
                period,
            }
        }
    }

    impl Drop for FakeRoot {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeRoot;
    use super::*;

    #[test]
    fn specs_read_with_their_defaults() {
        let spec = SysfsSpec::parse("hwmon:a, b?root=/tmp/x", "a, b?root=/tmp/x").unwrap();
        assert_eq!(spec.selectors, ["a", "b"]);
        assert_eq!(spec.root, Path::new("/tmp/x"));
        assert_eq!(spec.period, DEFAULT_PERIOD);
        let spec = SysfsSpec::parse("rapl?period_ms=20", "?period_ms=20").unwrap();
        assert!(spec.selectors.is_empty());
        assert_eq!(
            (spec.root, spec.period),
            (Path::new("/sys"), Duration::from_millis(20))
        );
        let error = SysfsSpec::parse("rapl?lib=x", "?lib=x").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("(known: period_ms=MS, root=PATH)"),
            "{error}"
        );
    }

    #[test]
    fn reads_name_the_file() {
        let root = FakeRoot::new("sysfs");
        let file = root.write("a/energy_uj", "123\n");
        assert_eq!(read_integer(&file).unwrap(), 123);
        assert_eq!(read_text(&file).unwrap(), "123");
        let bad = root.write("a/name", "lots\n");
        let error = read_integer(&bad).unwrap_err().to_string();
        assert!(
            error.contains(&bad.display().to_string()) && error.contains("\"lots\""),
            "{error}"
        );
        let absent = root.path().join("absent");
        let error = read_text(&absent).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("cannot read {}", absent.display())),
            "{error}"
        );
    }
}
