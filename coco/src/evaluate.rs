//! `COCOeval.evaluateImg`: greedy matching of one image's detections of one
//! category to its ground truths, for one area range, at every IoU threshold.

use crate::dataset::Annotation;
use crate::detection::LoadedDetection;
use crate::params::Params;

/// Per image/category/area-range result, shaped like pycocotools' dict.
/// Matrices are `T x D`, stored threshold-major.
#[derive(Debug, Clone)]
pub struct EvalImg {
    /// Scores, highest first (the sorted, truncated detections).
    pub dt_scores: Vec<f64>,
    /// Id of the matched ground truth, 0 when unmatched. Kept as an id, not
    /// a flag, because pycocotools tests `dtm == 0`: a match to a ground
    /// truth whose id is 0 counts as no match there, and so here.
    pub dt_matches: Vec<i64>,
    pub dt_ignore: Vec<bool>,
    /// Ignore flag per ground truth, non-ignored first.
    pub gt_ignore: Vec<bool>,
    pub num_dt: usize,
}

impl EvalImg {
    pub fn dt_match(&self, t: usize, d: usize) -> i64 {
        self.dt_matches[t * self.num_dt + d]
    }

    pub fn dt_ignored(&self, t: usize, d: usize) -> bool {
        self.dt_ignore[t * self.num_dt + d]
    }
}

/// Inputs shared by the four area ranges of one image and category.
pub struct ImgCat<'a> {
    /// Ground truths in annotation-file order.
    pub gts: Vec<&'a Annotation>,
    /// Detections sorted by descending score (stable) and cut to maxDets[-1].
    pub dts: Vec<LoadedDetection>,
    /// IoU of detection `d` with ground truth `g` (file order) at `d * G + g`;
    /// empty when either side is empty, as `maskUtils.iou` returns `[]`.
    pub ious: Vec<f64>,
}

/// One `evaluateImg(imgId, catId, aRng, maxDet)` call; `None` when the image
/// has neither ground truth nor detections of the category.
pub fn evaluate_img(
    ic: &ImgCat<'_>,
    a_rng: [f64; 2],
    max_det: usize,
    p: &Params,
) -> Option<EvalImg> {
    if ic.gts.is_empty() && ic.dts.is_empty() {
        return None;
    }
    let out_of_range = |area: f64| area < a_rng[0] || area > a_rng[1];
    let g_ignore: Vec<bool> = ic
        .gts
        .iter()
        .map(|g| g.iscrowd || out_of_range(g.area))
        .collect();
    // Stable argsort of the 0/1 ignore flags: kept objects first, each group
    // in file order.
    let gtind: Vec<usize> = (0..ic.gts.len())
        .filter(|&i| !g_ignore[i])
        .chain((0..ic.gts.len()).filter(|&i| g_ignore[i]))
        .collect();
    let gts: Vec<&Annotation> = gtind.iter().map(|&i| ic.gts[i]).collect();
    let gt_ig: Vec<bool> = gtind.iter().map(|&i| g_ignore[i]).collect();
    let dts = &ic.dts[..ic.dts.len().min(max_det)];

    let t_n = p.iou_thrs.len();
    let (g_n, d_n) = (gts.len(), dts.len());
    let g_all = ic.gts.len();
    let mut gtm = vec![0i64; t_n * g_n];
    let mut dtm = vec![0i64; t_n * d_n];
    let mut dt_ig = vec![false; t_n * d_n];

    if !ic.ious.is_empty() {
        for (ti, &t) in p.iou_thrs.iter().enumerate() {
            for (di, d) in dts.iter().enumerate() {
                // Best match so far; ties go to the later ground truth
                // because only a strictly smaller IoU is skipped.
                let mut best = t.min(1.0 - 1e-10);
                let mut m: Option<usize> = None;
                for gi in 0..g_n {
                    if gtm[ti * g_n + gi] > 0 && !gts[gi].iscrowd {
                        continue;
                    }
                    // Once matched to a real object, never fall back to an
                    // ignored one (they are sorted last).
                    if let Some(mm) = m {
                        if !gt_ig[mm] && gt_ig[gi] {
                            break;
                        }
                    }
                    let iou = ic.ious[di * g_all + gtind[gi]];
                    if iou < best {
                        continue;
                    }
                    best = iou;
                    m = Some(gi);
                }
                if let Some(mm) = m {
                    dt_ig[ti * d_n + di] = gt_ig[mm];
                    dtm[ti * d_n + di] = gts[mm].id;
                    gtm[ti * g_n + mm] = d.id;
                }
            }
        }
    }
    // Unmatched detections outside the area range are ignored, not counted
    // as false positives.
    for (di, d) in dts.iter().enumerate() {
        if out_of_range(d.area) {
            for ti in 0..t_n {
                let k = ti * d_n + di;
                dt_ig[k] = dt_ig[k] || dtm[k] == 0;
            }
        }
    }
    Some(EvalImg {
        dt_scores: dts.iter().map(|d| d.det.score).collect(),
        dt_matches: dtm,
        dt_ignore: dt_ig,
        gt_ignore: gt_ig,
        num_dt: d_n,
    })
}
