//! The steps of MLPerf's `tools/accuracy-coco.py` around COCOeval, for the
//! yolo invocation (`--mlperf-accuracy-file LOG --coco-dir DIR`, no
//! `--use-inv-map`, no `--remove-48-empty-images`).

use std::collections::{BTreeSet, HashSet};

use crate::cocoeval::{evaluate_bbox, Evaluation};
use crate::dataset::GroundTruth;
use crate::detection::Detection;
use crate::error::Error;
use crate::mlperf_log::{as_f32, decode_hex, LogEntry};

/// How `float32 * int` promotes in the script's de-normalisation
/// (`ymin *= height` with `ymin` a numpy float32 scalar).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Promotion {
    /// numpy >= 2 (NEP 50): the Python int is "weak", the product and the
    /// later `xmax - xmin` are float32. The YOLO reference pins numpy>=2.2.6.
    #[default]
    Nep50,
    /// numpy 1.x: scalar-scalar promotion gives float64, so the product and
    /// the difference are computed in double. Gives different bits.
    Legacy,
}

/// What the script computed and printed (apart from pycocotools' progress
/// and timing lines, which carry wall-clock times).
#[derive(Debug, Clone)]
pub struct ScriptOutput {
    /// The list written to `coco-results.json`, in order.
    pub detections: Vec<Detection>,
    /// The set handed to `params.imgIds`, sorted.
    pub image_ids: Vec<i64>,
    /// Lines printed while reading the log: `ERROR: loadgen(..)...` always,
    /// `no results: ...` only with `verbose`.
    pub loop_lines: Vec<String>,
    pub evaluation: Evaluation,
    /// `mAP=NN.NNN%`, the line the submission checker parses.
    pub map_line: String,
    /// The four `found ... / ignored ... dupes` lines (verbose only).
    pub verbose_lines: Vec<String>,
}

impl ScriptOutput {
    /// Every line of stdout that does not depend on timing, in order.
    pub fn stable_stdout_lines(&self) -> Vec<String> {
        let mut v = self.loop_lines.clone();
        v.extend(self.evaluation.summary.lines.iter().cloned());
        v.push(self.map_line.clone());
        v.extend(self.verbose_lines.iter().cloned());
        v
    }
}

/// Options of the script that change its behaviour here.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub verbose: bool,
    pub promotion: Promotion,
}

/// Result of reading the log, before evaluation.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub detections: Vec<Detection>,
    pub image_ids: BTreeSet<i64>,
    pub loop_lines: Vec<String>,
    pub no_results: usize,
    pub unique: usize,
}

/// Python's `int(x)` on a float32: truncation toward zero; NaN and
/// infinities raise there, an error here.
fn py_int(v: f32, seq_id: u64, key: &'static str) -> Result<i64, Error> {
    if v.is_finite() && (v as f64).abs() < 9.2e18 {
        Ok(v.trunc() as i64)
    } else {
        Err(Error::NotInteger {
            seq_id,
            key,
            value: v,
        })
    }
}

/// Decodes the log the way the script's main loop does.
///
/// Only the first record of each `qsl_idx` counts (TEST01 logs repeat
/// samples); later ones are skipped even if their payload differs. A payload
/// of fewer than 7 floats means "no detections" but still puts the image in
/// the evaluated set, so its ground truth counts as missed.
pub fn decode(gt: &GroundTruth, log: &[LogEntry], opts: Options) -> Result<Decoded, Error> {
    let mut seen = HashSet::new();
    let mut out = Decoded {
        detections: Vec::new(),
        image_ids: BTreeSet::new(),
        loop_lines: Vec::new(),
        no_results: 0,
        unique: 0,
    };
    for e in log {
        let idx = e.qsl_idx;
        if !seen.insert(idx) {
            continue;
        }
        let image = usize::try_from(idx)
            .ok()
            .and_then(|i| gt.images.get(i))
            .ok_or(Error::QslOutOfRange {
                seq_id: e.seq_id,
                qsl_idx: idx,
                images: gt.images.len(),
            })?;
        let data = as_f32(&decode_hex(&e.data, e.seq_id)?, e.seq_id)?;
        if data.len() < 7 {
            out.image_ids.insert(image.id);
            out.no_results += 1;
            if opts.verbose {
                let url = image.coco_url.as_ref().ok_or(Error::MissingCocoUrl {
                    image_id: image.id,
                    qsl_idx: idx,
                })?;
                out.loop_lines.push(format!("no results: {url}, idx={idx}"));
            }
            continue;
        }
        if !data.len().is_multiple_of(7) {
            // The script unpacks a short final slice and raises ValueError.
            return Err(Error::PartialDetection {
                seq_id: e.seq_id,
                floats: data.len(),
            });
        }
        for d in data.chunks_exact(7) {
            let image_idx = py_int(d[0], e.seq_id, "image_idx")?;
            if image_idx != idx {
                out.loop_lines.push(format!(
                    "ERROR: loadgen({idx}) and payload({image_idx}) disagree on image_idx"
                ));
            }
            let label = py_int(d[6], e.seq_id, "label")?;
            out.detections.push(Detection {
                image_id: image.id,
                category_id: label,
                bbox: denormalise(
                    [d[1], d[2], d[3], d[4]],
                    image.width,
                    image.height,
                    opts.promotion,
                ),
                score: d[5] as f64,
            });
            out.image_ids.insert(image.id);
        }
    }
    out.unique = seen.len();
    Ok(out)
}

/// `[ymin, xmin, ymax, xmax]` normalised -> `[x, y, w, h]` pixels, with the
/// script's exact float types.
pub fn denormalise(b: [f32; 4], width: f64, height: f64, promotion: Promotion) -> [f64; 4] {
    let [ymin, xmin, ymax, xmax] = b;
    match promotion {
        Promotion::Nep50 => {
            // The weak Python scalar is cast to float32 first.
            let (h, w) = (height as f32, width as f32);
            let (ymin, xmin, ymax, xmax) = (ymin * h, xmin * w, ymax * h, xmax * w);
            [
                xmin as f64,
                ymin as f64,
                (xmax - xmin) as f64,
                (ymax - ymin) as f64,
            ]
        }
        Promotion::Legacy => {
            let (ymin, xmin) = (ymin as f64 * height, xmin as f64 * width);
            let (ymax, xmax) = (ymax as f64 * height, xmax as f64 * width);
            [xmin, ymin, xmax - xmin, ymax - ymin]
        }
    }
}

/// The whole script: decode, evaluate over every image seen, print.
///
/// Fails with [`Error::NoDetections`] where the reference crashes (a log
/// with no detection at all).
pub fn run_accuracy_coco(
    gt: &GroundTruth,
    log: &[LogEntry],
    opts: Options,
) -> Result<ScriptOutput, Error> {
    let dec = decode(gt, log, opts)?;
    if dec.detections.is_empty() {
        return Err(Error::NoDetections);
    }
    let image_ids: Vec<i64> = dec.image_ids.iter().copied().collect();
    let evaluation = evaluate_bbox(gt, &dec.detections, &image_ids);
    let map_line = format!("mAP={:.3}%", 100.0 * evaluation.summary.stats[0]);
    let verbose_lines = if opts.verbose {
        vec![
            format!("found {} results", log.len()),
            format!("found {} images", image_ids.len()),
            format!("found {} images with no results", dec.no_results),
            format!("ignored {} dupes", log.len() - dec.unique),
        ]
    } else {
        Vec::new()
    };
    Ok(ScriptOutput {
        detections: dec.detections,
        image_ids,
        loop_lines: dec.loop_lines,
        evaluation,
        map_line,
        verbose_lines,
    })
}
