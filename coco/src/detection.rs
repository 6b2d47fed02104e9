//! The detection side: what `COCO.loadRes` makes of a results list.

use std::path::Path;

use serde::Deserialize;

use crate::error::Error;

/// One detection in COCO results form: absolute `[x, y, w, h]` pixels.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Detection {
    pub image_id: i64,
    pub category_id: i64,
    pub bbox: [f64; 4],
    pub score: f64,
}

/// A detection as `loadRes` annotates it: 1-based id in list order and
/// `area = w * h` (f64 multiply, as Python does).
#[derive(Debug, Clone, Copy)]
pub struct LoadedDetection {
    pub id: i64,
    pub det: Detection,
    pub area: f64,
}

/// Mirrors `loadRes` for bbox results: ids are positions + 1, area is w*h.
pub fn load_res(dets: &[Detection]) -> Vec<LoadedDetection> {
    dets.iter()
        .enumerate()
        .map(|(i, d)| LoadedDetection {
            id: i as i64 + 1,
            det: *d,
            area: d.bbox[2] * d.bbox[3],
        })
        .collect()
}

/// Reads a `coco-results.json` (a list of detections; extra keys such as
/// `image_loc` are ignored).
pub fn read_results_json(path: &Path) -> Result<Vec<Detection>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::json(path, e))
}
