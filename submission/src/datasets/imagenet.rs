//! ImageNet 2012 validation as the ResNet-50 reference reads it: `val_map.txt`, one
//! `FILE LABEL` line per image (labels 0-999, caffe's `val.txt`), whose line number is the
//! image's `qsl_idx`; the images beside it, raw (`ILSVRC2012_val_00000001.JPEG`) or
//! preprocessed by the reference's cache (`ILSVRC2012_val_00000001.JPEG.npy`, float32
//! `[3, 224, 224]`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::DatasetError;

/// The list's name inside a data set folder.
pub const VAL_MAP: &str = "val_map.txt";
/// ImageNet's classes: labels are below this.
pub const CLASSES: u32 = 1000;
/// The suffix the reference's cache adds to an image's name.
pub const PREPROCESSED_SUFFIX: &str = ".npy";

/// One image of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file name as the list gives it, relative to the folder.
    pub name: String,
    pub label: u32,
}

/// `val_map.txt`, in order.
#[derive(Debug, Clone)]
pub struct ValMap {
    pub path: PathBuf,
    pub entries: Vec<Entry>,
}

impl ValMap {
    /// Reads the list at `path`. As the reference splits each line on whitespace, any run of
    /// spaces or tabs separates the name from the label; a line it could not read is refused
    /// here, naming the line.
    pub fn read(path: &Path) -> Result<ValMap, DatasetError> {
        let text = read_list(path)?;
        let mut entries = Vec::new();
        let mut names = HashSet::new();
        for (number, line) in text.lines().enumerate() {
            let at = |message: String| DatasetError::Line {
                path: path.to_path_buf(),
                line: number + 1,
                message,
            };
            let mut columns = line.split_whitespace();
            let (Some(name), Some(label)) = (columns.next(), columns.next()) else {
                return Err(at(format!(
                    "{line:?}: expected `FILE LABEL` (the reference reads every line, a blank one too)"
                )));
            };
            let label: u32 = label
                .parse()
                .ok()
                .filter(|&label| label < CLASSES)
                .ok_or_else(|| {
                    at(format!(
                        "label {label:?} of {name}: not a class of ImageNet (0 to {})",
                        CLASSES - 1
                    ))
                })?;
            if !names.insert(name) {
                return Err(at(format!("{name} is listed twice")));
            }
            if name.contains("..") || name.starts_with('/') {
                return Err(at(format!("{name}: not a file inside the data set folder")));
            }
            entries.push(Entry {
                name: name.to_string(),
                label,
            });
        }
        if entries.is_empty() {
            return Err(DatasetError::file(path, "lists no image"));
        }
        Ok(ValMap {
            path: path.to_path_buf(),
            entries,
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first `count` images only (the reference's `--count`).
    pub fn truncate(&mut self, count: usize) {
        self.entries.truncate(count);
    }
}

/// Which files a folder holds for the list's images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The JPEGs themselves.
    Raw,
    /// The reference's cache: `<image>.npy` beside the list, float32 `[3, 224, 224]`.
    Preprocessed,
}

impl Layout {
    /// The file that holds `entry` in this layout.
    pub fn file(self, dir: &Path, entry: &Entry) -> PathBuf {
        match self {
            Layout::Raw => dir.join(&entry.name),
            Layout::Preprocessed => dir.join(format!("{}{PREPROCESSED_SUFFIX}", entry.name)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Layout::Raw => "raw JPEGs",
            Layout::Preprocessed => "the reference's preprocessed cache (.JPEG.npy)",
        }
    }

    /// The layout of `dir`: the cache where the list's first image is there preprocessed,
    /// else the raw images.
    pub fn detect(dir: &Path, list: &ValMap) -> Layout {
        match list.entries.first() {
            Some(first) if Layout::Preprocessed.file(dir, first).is_file() => Layout::Preprocessed,
            _ => Layout::Raw,
        }
    }

    /// Checks that `dir` holds every listed image, and no image the list does not name (a
    /// list cut short by `limited` excepted): one error naming the first file out of place
    /// and how many there are.
    pub fn check_files(self, dir: &Path, list: &ValMap, limited: bool) -> Result<(), DatasetError> {
        let missing: Vec<PathBuf> = list
            .entries
            .iter()
            .map(|entry| self.file(dir, entry))
            .filter(|file| !file.is_file())
            .collect();
        if let Some(first) = missing.first() {
            return Err(DatasetError::file(
                first,
                format!(
                    "missing: {} of the {} images {} lists are not in {} as {}{}",
                    missing.len(),
                    list.len(),
                    list.path.display(),
                    dir.display(),
                    self.name(),
                    if missing.len() == list.len() {
                        " (is --dataset-dir the folder that holds them?)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if limited {
            return Ok(());
        }
        let listed: HashSet<PathBuf> = list.entries.iter().map(|e| self.file(dir, e)).collect();
        let entries = std::fs::read_dir(dir).map_err(|e| DatasetError::file(dir, e.to_string()))?;
        let mut extra = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| DatasetError::file(dir, e.to_string()))?
                .path();
            if self.is_image_file(&path) && !listed.contains(&path) {
                extra.push(path);
            }
        }
        extra.sort();
        match extra.first() {
            None => Ok(()),
            Some(first) => Err(DatasetError::file(
                first,
                format!(
                    "not in {}: {} image file(s) of the folder are not listed, so the list's \
                     line numbers may not be the qsl_idx the data set was made for (mend the \
                     list, or give --total-samples to use only its first lines)",
                    list.path.display(),
                    extra.len()
                ),
            )),
        }
    }

    fn is_image_file(self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let lower = name.to_ascii_lowercase();
        match self {
            Layout::Raw => lower.ends_with(".jpeg") || lower.ends_with(".jpg"),
            Layout::Preprocessed => lower.ends_with(".jpeg.npy") || lower.ends_with(".jpg.npy"),
        }
    }
}

/// A list file's text; a FIFO or a folder is refused before it is read.
fn read_list(path: &Path) -> Result<String, DatasetError> {
    let metadata = std::fs::metadata(path).map_err(|e| DatasetError::file(path, e.to_string()))?;
    if !metadata.is_file() {
        return Err(DatasetError::file(path, "not a regular file"));
    }
    std::fs::read_to_string(path).map_err(|e| DatasetError::file(path, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("imagenet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_list_is_read_as_the_reference_splits_it() {
        let dir = folder("list");
        let list = dir.join(VAL_MAP);
        std::fs::write(&list, "a.JPEG 65\nb.JPEG\t0\n  c.JPEG   999  \n").unwrap();
        let map = ValMap::read(&list).unwrap();
        let labels: Vec<u32> = map.entries.iter().map(|e| e.label).collect();
        assert_eq!(labels, [65, 0, 999]);
        assert_eq!(map.entries[2].name, "c.JPEG");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_line_is_named_with_its_number() {
        let dir = folder("bad");
        let list = dir.join(VAL_MAP);
        for (text, line, says) in [
            ("a.JPEG 1\nb.JPEG 1000\n", 2, "not a class"),
            ("a.JPEG 1\n\nb.JPEG 2\n", 2, "expected `FILE LABEL`"),
            ("a.JPEG -1\n", 1, "not a class"),
            ("a.JPEG 1\na.JPEG 2\n", 2, "listed twice"),
            ("../a.JPEG 1\n", 1, "not a file inside"),
        ] {
            std::fs::write(&list, text).unwrap();
            let error = ValMap::read(&list).unwrap_err().to_string();
            assert!(
                error.contains(&format!("{VAL_MAP}:{line}:")) && error.contains(says),
                "{text:?}: {error}"
            );
        }
        std::fs::write(&list, "").unwrap();
        assert!(ValMap::read(&list)
            .unwrap_err()
            .to_string()
            .contains("lists no image"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_and_unlisted_images_are_refused_before_a_run() {
        let dir = folder("files");
        std::fs::write(dir.join(VAL_MAP), "a.JPEG 1\nb.JPEG 2\n").unwrap();
        let map = ValMap::read(&dir.join(VAL_MAP)).unwrap();
        std::fs::write(dir.join("a.JPEG"), b"").unwrap();
        let error = Layout::Raw
            .check_files(&dir, &map, false)
            .unwrap_err()
            .to_string();
        assert!(error.contains("b.JPEG: missing: 1 of the 2"), "{error}");
        std::fs::write(dir.join("b.JPEG"), b"").unwrap();
        Layout::Raw.check_files(&dir, &map, false).unwrap();
        std::fs::write(dir.join("c.JPEG"), b"").unwrap();
        let error = Layout::Raw
            .check_files(&dir, &map, false)
            .unwrap_err()
            .to_string();
        assert!(error.contains("c.JPEG: not in"), "{error}");
        Layout::Raw.check_files(&dir, &map, true).unwrap();
        assert_eq!(Layout::detect(&dir, &map), Layout::Raw);
        std::fs::write(dir.join("a.JPEG.npy"), b"").unwrap();
        assert_eq!(Layout::detect(&dir, &map), Layout::Preprocessed);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
