//! `COCOeval.summarize` for bbox: the 12 standard numbers and their lines.

use crate::accumulate::Accumulated;
use crate::numpy::mean;
use crate::params::Params;

/// Which slice of the accumulated arrays one stat averages.
struct Query {
    ap: bool,
    iou_thr: Option<f64>,
    area: &'static str,
    max_dets: usize,
}

const fn q(ap: bool, iou_thr: Option<f64>, area: &'static str, max_dets: usize) -> Query {
    Query {
        ap,
        iou_thr,
        area,
        max_dets,
    }
}

/// The 12 stats in pycocotools' order.
const QUERIES: [Query; 12] = [
    q(true, None, "all", 100),
    q(true, Some(0.5), "all", 100),
    q(true, Some(0.75), "all", 100),
    q(true, None, "small", 100),
    q(true, None, "medium", 100),
    q(true, None, "large", 100),
    q(false, None, "all", 1),
    q(false, None, "all", 10),
    q(false, None, "all", 100),
    q(false, None, "small", 100),
    q(false, None, "medium", 100),
    q(false, None, "large", 100),
];

/// Stats plus the lines `summarize` prints.
#[derive(Debug, Clone)]
pub struct Summary {
    pub stats: [f64; 12],
    pub lines: Vec<String>,
}

pub fn summarize(acc: &Accumulated, p: &Params) -> Summary {
    let mut stats = [0.0; 12];
    let mut lines = Vec::with_capacity(12);
    for (s, qr) in stats.iter_mut().zip(QUERIES.iter()) {
        *s = one(acc, p, qr);
        lines.push(line(p, qr, *s));
    }
    Summary { stats, lines }
}

/// Mean over the selected entries that are > -1, taken in the C order of
/// numpy's fancy-indexed slice (threshold, then recall point, then
/// category); -1 when there are none.
fn one(acc: &Accumulated, p: &Params, qr: &Query) -> f64 {
    let aind: Vec<usize> = (0..p.area_lbl.len())
        .filter(|&i| p.area_lbl[i] == qr.area)
        .collect();
    let mind: Vec<usize> = (0..p.max_dets.len())
        .filter(|&i| p.max_dets[i] == qr.max_dets)
        .collect();
    // np.where(iouThr == p.iouThrs): exact float equality, as in numpy.
    let tind: Vec<usize> = match qr.iou_thr {
        Some(thr) => (0..acc.t).filter(|&t| p.iou_thrs[t] == thr).collect(),
        None => (0..acc.t).collect(),
    };
    let mut vals = Vec::new();
    // s[:, :, :, aind, mind] pairs aind[i] with mind[i] (broadcast), and
    // each list holds at most one index here.
    let pairs: Vec<(usize, usize)> = aind.iter().copied().zip(mind.iter().copied()).collect();
    for &t in &tind {
        if qr.ap {
            for r in 0..acc.r {
                for k in 0..acc.k {
                    for &(a, m) in &pairs {
                        vals.push(acc.precision[acc.p_index(t, r, k, a, m)]);
                    }
                }
            }
        } else {
            for k in 0..acc.k {
                for &(a, m) in &pairs {
                    vals.push(acc.recall[acc.r_index(t, k, a, m)]);
                }
            }
        }
    }
    vals.retain(|&v| v > -1.0);
    if vals.is_empty() {
        -1.0
    } else {
        mean(&vals)
    }
}

/// `' {:<18} {} @[ IoU={:<9} | area={:>6s} | maxDets={:>3d} ] = {:0.3f}'`.
fn line(p: &Params, qr: &Query, v: f64) -> String {
    let title = if qr.ap {
        "Average Precision"
    } else {
        "Average Recall"
    };
    let ty = if qr.ap { "(AP)" } else { "(AR)" };
    let iou = match qr.iou_thr {
        None => format!(
            "{:.2}:{:.2}",
            p.iou_thrs[0],
            p.iou_thrs[p.iou_thrs.len() - 1]
        ),
        Some(t) => format!("{t:.2}"),
    };
    format!(
        " {title:<18} {ty} @[ IoU={iou:<9} | area={:>6} | maxDets={:>3} ] = {v:.3}",
        qr.area, qr.max_dets
    )
}

#[cfg(test)]
mod tests {
    /// Python's `'{:.3f}'.format` rounds the exact binary value half to
    /// even; Rust's `{:.3}` must agree, ties included.
    #[test]
    fn three_decimals_like_python() {
        let cases = [
            (0.0625, "0.062"),
            (0.125, "0.125"),
            (0.0005, "0.001"), // 0.0005 is slightly above the tie in binary
            (2.5, "2.500"),
            (-1.0, "-1.000"),
            (89.4530881659594, "89.453"),
            (100.0, "100.000"),
        ];
        for (v, want) in cases {
            assert_eq!(format!("{v:.3}"), want, "{v}");
        }
        assert_eq!(format!("{:.2}", 0.125), "0.12");
        assert_eq!(format!("{:.0}", 0.5), "0");
    }
}
