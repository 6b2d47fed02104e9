//! COCO 2017 val's "safe" subset as the YOLO reference reads it (`yolo/yolo_loadgen.py`'s
//! `Coco`): a folder holding `annotations/instances_val2017.json` and the images under
//! `val2017_safe/`. A sample's `qsl_idx` is its image's place in the annotation file's
//! `images` list; `accuracy-coco.py` indexes that same list, so every listed image must be
//! there (the harness skips a missing one, and every later sample's boxes are then scored
//! against the wrong image).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use mlperf_cocoeval::dataset::GroundTruth;

use super::DatasetError;

/// The annotation file's place inside a data set folder.
pub const ANNOTATIONS: &str = "annotations/instances_val2017.json";
/// The images' folder inside a data set folder.
pub const IMAGES: &str = "val2017_safe";

/// One image of the list: the fields the harness and the scorer use.
#[derive(Debug, Clone, PartialEq)]
pub struct CocoImage {
    pub id: i64,
    pub file_name: String,
    pub width: u32,
    pub height: u32,
}

/// The annotation file's images, in order, with its ground truth for the scorer.
#[derive(Debug, Clone)]
pub struct CocoList {
    pub path: PathBuf,
    pub images: Vec<CocoImage>,
    pub ground_truth: GroundTruth,
}

impl CocoList {
    /// Reads `dir`'s annotation file, refusing an image entry the harness could not use
    /// (no file name, a name outside the folder, a name twice, a size that is not a positive
    /// integer), named by its id.
    pub fn read(dir: &Path) -> Result<CocoList, DatasetError> {
        let path = dir.join(ANNOTATIONS);
        if !path.is_file() {
            return Err(DatasetError::file(
                &path,
                format!(
                    "missing: a COCO data set folder holds {ANNOTATIONS} and the images under {IMAGES}/ (MLCommons' coco_safe layout)"
                ),
            ));
        }
        let ground_truth =
            GroundTruth::load(&path).map_err(|e| DatasetError::file(&path, e.to_string()))?;
        let mut names = HashSet::new();
        let mut images = Vec::with_capacity(ground_truth.images.len());
        for image in &ground_truth.images {
            let refuse = |why: String| {
                DatasetError::file(
                    &path,
                    format!("images: the image of id {}: {why}", image.id),
                )
            };
            let name = image.file_name.as_str();
            if name.is_empty() {
                return Err(refuse("no file_name".into()));
            }
            if name.contains("..") || name.starts_with('/') || name.contains('\\') {
                return Err(refuse(format!("{name:?} is not a file inside {IMAGES}/")));
            }
            if !names.insert(name) {
                return Err(refuse(format!("{name} is listed twice")));
            }
            let side = |value: f64, key: &str| {
                (value >= 1.0 && value.fract() == 0.0 && value <= u32::MAX as f64)
                    .then_some(value as u32)
                    .ok_or_else(|| refuse(format!("{key} {value} is not a positive whole number")))
            };
            images.push(CocoImage {
                id: image.id,
                file_name: name.to_string(),
                width: side(image.width, "width")?,
                height: side(image.height, "height")?,
            });
        }
        if images.is_empty() {
            return Err(DatasetError::file(&path, "lists no image"));
        }
        Ok(CocoList {
            path,
            images,
            ground_truth,
        })
    }

    pub fn len(&self) -> usize {
        self.images.len()
    }

    pub fn is_empty(&self) -> bool {
        self.images.is_empty()
    }

    /// The file of image `image` under `dir`.
    pub fn file(dir: &Path, image: &CocoImage) -> PathBuf {
        dir.join(IMAGES).join(&image.file_name)
    }

    /// Every image's file is in `dir` (the first `count` only, when given: the harness's
    /// `--count` stops there); the first one missing is named.
    pub fn check_files(&self, dir: &Path, count: Option<usize>) -> Result<(), DatasetError> {
        let listed = count.unwrap_or(self.images.len());
        let mut missing = self.images[..listed]
            .iter()
            .filter(|image| !CocoList::file(dir, image).is_file());
        if let Some(first) = missing.next() {
            let more = missing.count();
            return Err(DatasetError::file(
                CocoList::file(dir, first),
                format!(
                    "missing{}: {} lists it (image id {}), and the accuracy script scores sample i against the list's image i, so a data set with images missing cannot be scored; restore them or use the annotation file made for the images present",
                    if more > 0 { format!(", and {more} more of the list") } else { String::new() },
                    ANNOTATIONS,
                    first.id
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/coco/coco_safe")
    }

    #[test]
    fn the_fixtures_list_is_read_in_the_annotation_files_order() {
        let list = CocoList::read(&fixture()).unwrap();
        assert_eq!(list.len(), 6);
        // Not sorted by name or id: the list's own order is the qsl_idx.
        assert_eq!(list.images[0].file_name, "000000900005.jpg");
        assert_eq!(list.images[1].id, 900001);
        assert!(list
            .images
            .iter()
            .all(|image| image.width > 0 && image.height > 0));
        list.check_files(&fixture(), None).unwrap();
    }

    #[test]
    fn a_missing_image_or_a_bad_entry_is_named() {
        let dir = std::env::temp_dir().join(format!("coco-list-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("annotations")).unwrap();
        std::fs::create_dir_all(dir.join(IMAGES)).unwrap();
        let write = |images: &str| {
            std::fs::write(
                dir.join(ANNOTATIONS),
                format!(r#"{{"images": [{images}], "annotations": [], "categories": []}}"#),
            )
            .unwrap()
        };
        write(
            r#"{"id": 7, "file_name": "a.jpg", "width": 4, "height": 3}, {"id": 8, "file_name": "b.jpg", "width": 4, "height": 3}"#,
        );
        std::fs::write(dir.join(IMAGES).join("a.jpg"), b"").unwrap();
        let list = CocoList::read(&dir).unwrap();
        list.check_files(&dir, Some(1)).unwrap();
        let error = list.check_files(&dir, None).unwrap_err().to_string();
        assert!(
            error.contains("b.jpg: missing") && error.contains("image id 8"),
            "{error}"
        );
        write(r#"{"id": 7, "file_name": "../a.jpg", "width": 4, "height": 3}"#);
        let error = CocoList::read(&dir).unwrap_err().to_string();
        assert!(
            error.contains("id 7") && error.contains("not a file inside"),
            "{error}"
        );
        write(r#"{"id": 9, "file_name": "a.jpg", "width": 4.5, "height": 3}"#);
        let error = CocoList::read(&dir).unwrap_err().to_string();
        assert!(error.contains("width 4.5"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
        let error = CocoList::read(&dir).unwrap_err().to_string();
        assert!(error.contains("instances_val2017.json: missing"), "{error}");
    }
}
