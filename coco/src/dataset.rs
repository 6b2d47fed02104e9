//! The ground-truth side: a COCO `instances_*.json`, reduced to the fields
//! that bbox evaluation and `accuracy-coco.py` read.
//!
//! Everything else (segmentation, licenses, info) is skipped while parsing,
//! which keeps memory flat on the real 1 525-image file.

use std::path::Path;

use serde::Deserialize;

use crate::error::Error;

/// One entry of `images`; its position in the list is the MLPerf `qsl_idx`.
#[derive(Debug, Clone, Deserialize)]
pub struct Image {
    pub id: i64,
    /// Kept as f64 because the script multiplies by it; COCO stores ints.
    pub width: f64,
    pub height: f64,
    #[serde(default)]
    pub file_name: String,
    /// Only printed by `--verbose` for images without detections.
    #[serde(default)]
    pub coco_url: Option<String>,
}

/// `iscrowd` is 0/1 in COCO, but Python truth-tests it, so accept bools too.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum Flag {
    Int(i64),
    Bool(bool),
}

impl Flag {
    fn truthy(self) -> bool {
        match self {
            Flag::Int(v) => v != 0,
            Flag::Bool(b) => b,
        }
    }
}

#[derive(Debug, Deserialize)]
struct RawAnnotation {
    id: i64,
    image_id: i64,
    category_id: i64,
    bbox: Vec<f64>,
    area: f64,
    iscrowd: Flag,
}

/// A ground-truth box. `area` is the annotation's own field (the mask area in
/// real COCO), not `w*h`: pycocotools bins objects by it.
#[derive(Debug, Clone)]
pub struct Annotation {
    pub id: i64,
    pub image_id: i64,
    pub category_id: i64,
    pub bbox: [f64; 4],
    pub area: f64,
    pub iscrowd: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Category {
    pub id: i64,
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Deserialize)]
struct RawDataset {
    images: Vec<Image>,
    #[serde(default)]
    annotations: Vec<RawAnnotation>,
    #[serde(default)]
    categories: Vec<Category>,
}

/// The parsed annotation file, lists kept in file order (order matters: it
/// fixes `qsl_idx` and the tie order of equal-IoU ground truths).
#[derive(Debug, Clone)]
pub struct GroundTruth {
    pub images: Vec<Image>,
    pub annotations: Vec<Annotation>,
    pub categories: Vec<Category>,
}

impl GroundTruth {
    /// Reads and validates an instances json.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, path)
    }

    /// Parses instances json text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, Error> {
        let raw: RawDataset = serde_json::from_str(text).map_err(|e| Error::json(path, e))?;
        let mut annotations = Vec::with_capacity(raw.annotations.len());
        for a in raw.annotations {
            let bbox: [f64; 4] = a.bbox.as_slice().try_into().map_err(|_| Error::BadValue {
                path: path.to_path_buf(),
                what: "annotation",
                id: a.id,
                key: "bbox",
                value: format!("{:?} (needs 4 numbers)", a.bbox),
            })?;
            annotations.push(Annotation {
                id: a.id,
                image_id: a.image_id,
                category_id: a.category_id,
                bbox,
                area: a.area,
                iscrowd: a.iscrowd.truthy(),
            });
        }
        Ok(GroundTruth {
            images: raw.images,
            annotations,
            categories: raw.categories,
        })
    }
}
