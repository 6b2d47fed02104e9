//! `Params.setDetParams` for bbox: thresholds, area ranges and max detections.

use crate::numpy::linspace;

/// Evaluation parameters, fixed to the pycocotools defaults the script uses.
#[derive(Debug, Clone)]
pub struct Params {
    /// IoU thresholds .50:.05:.95 exactly as numpy's linspace yields them.
    pub iou_thrs: Vec<f64>,
    /// 101 recall points 0:.01:1.
    pub rec_thrs: Vec<f64>,
    /// Sorted, as `evaluate` sorts them.
    pub max_dets: [usize; 3],
    /// `[lo, hi]`, both ends inclusive (an area of exactly 32² is both
    /// small and medium).
    pub area_rng: [[f64; 2]; 4],
    pub area_lbl: [&'static str; 4],
}

impl Default for Params {
    fn default() -> Self {
        // int(np.round((0.95 - .5) / .05)) + 1 == 10; (1.00 - .0) / .01 -> 101.
        let n_iou = ((0.95f64 - 0.5) / 0.05).round_ties_even() as usize + 1;
        let n_rec = ((1.00f64 - 0.0) / 0.01).round_ties_even() as usize + 1;
        Params {
            iou_thrs: linspace(0.5, 0.95, n_iou),
            rec_thrs: linspace(0.0, 1.0, n_rec),
            max_dets: [1, 10, 100],
            area_rng: [
                [0.0, 1e5 * 1e5],
                [0.0, 32.0 * 32.0],
                [32.0 * 32.0, 96.0 * 96.0],
                [96.0 * 96.0, 1e5 * 1e5],
            ],
            area_lbl: ["all", "small", "medium", "large"],
        }
    }
}

impl Params {
    /// The largest max-detections setting: detections per image and category
    /// beyond it are dropped before matching.
    pub fn max_det(&self) -> usize {
        self.max_dets[self.max_dets.len() - 1]
    }
}
