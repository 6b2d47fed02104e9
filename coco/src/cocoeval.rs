//! `COCOeval(cocoGt, cocoDt, 'bbox')` with `params.imgIds` set, then
//! `evaluate()`, `accumulate()`, `summarize()`.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::accumulate::{accumulate, Accumulated};
use crate::dataset::{Annotation, GroundTruth};
use crate::detection::{load_res, Detection, LoadedDetection};
use crate::evaluate::{evaluate_img, EvalImg, ImgCat};
use crate::iou::bb_iou;
use crate::numpy::argsort_desc_stable;
use crate::params::Params;
use crate::summarize::{summarize, Summary};

/// Result of a full evaluation.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub params: Params,
    /// Sorted unique image ids evaluated (`np.unique(imgIds)`).
    pub img_ids: Vec<i64>,
    /// Sorted unique category ids from the ground truth's `categories`.
    pub cat_ids: Vec<i64>,
    pub accumulated: Accumulated,
    pub summary: Summary,
}

impl Evaluation {
    pub fn stats(&self) -> [f64; 12] {
        self.summary.stats
    }
}

/// Evaluates `dets` (in results-file order, which decides detection ids and
/// the order of equal scores) against `gt` over `img_ids`.
///
/// Only categories listed in `gt.categories` are scored; detections of any
/// other class are dropped, like `getAnnIds(catIds=...)` drops them.
/// Ground truth of images outside `img_ids` is not scored at all.
pub fn evaluate_bbox(gt: &GroundTruth, dets: &[Detection], img_ids: &[i64]) -> Evaluation {
    let p = Params::default();
    let img_ids: Vec<i64> = img_ids
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let cat_ids: Vec<i64> = gt
        .categories
        .iter()
        .map(|c| c.id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let img_set: HashSet<i64> = img_ids.iter().copied().collect();
    let cat_set: HashSet<i64> = cat_ids.iter().copied().collect();

    // _prepare: group by (image, category), each group in file order.
    let mut gts: HashMap<(i64, i64), Vec<&Annotation>> = HashMap::new();
    for a in &gt.annotations {
        if img_set.contains(&a.image_id) && cat_set.contains(&a.category_id) {
            gts.entry((a.image_id, a.category_id)).or_default().push(a);
        }
    }
    let mut dts: HashMap<(i64, i64), Vec<LoadedDetection>> = HashMap::new();
    for d in load_res(dets) {
        if img_set.contains(&d.det.image_id) && cat_set.contains(&d.det.category_id) {
            dts.entry((d.det.image_id, d.det.category_id))
                .or_default()
                .push(d);
        }
    }

    let (k_n, a_n, i_n) = (cat_ids.len(), p.area_rng.len(), img_ids.len());
    let mut eval_imgs: Vec<Option<EvalImg>> = vec![None; k_n * a_n * i_n];
    for (k, &cat) in cat_ids.iter().enumerate() {
        for (i, &img) in img_ids.iter().enumerate() {
            let ic = img_cat(
                gts.remove(&(img, cat)).unwrap_or_default(),
                dts.remove(&(img, cat)).unwrap_or_default(),
                &p,
            );
            for (a, rng) in p.area_rng.iter().enumerate() {
                eval_imgs[(k * a_n + a) * i_n + i] = evaluate_img(&ic, *rng, p.max_det(), &p);
            }
        }
    }
    let accumulated = accumulate(&eval_imgs, k_n, i_n, &p);
    let summary = summarize(&accumulated, &p);
    Evaluation {
        params: p,
        img_ids,
        cat_ids,
        accumulated,
        summary,
    }
}

/// `computeIoU`: sort detections by score (stable), keep maxDets[-1], and
/// compute the D x G IoU table against the ground truths in file order.
fn img_cat<'a>(gts: Vec<&'a Annotation>, dts: Vec<LoadedDetection>, p: &Params) -> ImgCat<'a> {
    let scores: Vec<f64> = dts.iter().map(|d| d.det.score).collect();
    let order = argsort_desc_stable(&scores);
    let dts: Vec<LoadedDetection> = order
        .into_iter()
        .take(p.max_det())
        .map(|i| dts[i])
        .collect();
    let mut ious = Vec::new();
    if !dts.is_empty() && !gts.is_empty() {
        ious.reserve(dts.len() * gts.len());
        for d in &dts {
            for g in &gts {
                ious.push(bb_iou(&d.det.bbox, &g.bbox, g.iscrowd));
            }
        }
    }
    ImgCat { gts, dts, ious }
}
