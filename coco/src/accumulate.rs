//! `COCOeval.accumulate`: per category, area range and max-detections,
//! pool the images' detections, rank them, and sample the interpolated
//! precision at 101 recall points.

use crate::evaluate::EvalImg;
use crate::numpy::{argsort_desc_stable, searchsorted_left, SPACING_ONE};
use crate::params::Params;

/// `precision[T,R,K,A,M]` and `recall[T,K,A,M]`, C order, -1 where a setting
/// has no (non-ignored) ground truth.
#[derive(Debug, Clone)]
pub struct Accumulated {
    pub precision: Vec<f64>,
    pub recall: Vec<f64>,
    pub t: usize,
    pub r: usize,
    pub k: usize,
    pub a: usize,
    pub m: usize,
}

impl Accumulated {
    pub fn p_index(&self, t: usize, r: usize, k: usize, a: usize, m: usize) -> usize {
        (((t * self.r + r) * self.k + k) * self.a + a) * self.m + m
    }

    pub fn r_index(&self, t: usize, k: usize, a: usize, m: usize) -> usize {
        ((t * self.k + k) * self.a + a) * self.m + m
    }
}

/// `eval_imgs[(k * A + a) * I + i]`, as `evaluate` lays them out.
pub fn accumulate(
    eval_imgs: &[Option<EvalImg>],
    k_n: usize,
    i_n: usize,
    p: &Params,
) -> Accumulated {
    let (t_n, r_n, a_n, m_n) = (
        p.iou_thrs.len(),
        p.rec_thrs.len(),
        p.area_rng.len(),
        p.max_dets.len(),
    );
    let mut acc = Accumulated {
        precision: vec![-1.0; t_n * r_n * k_n * a_n * m_n],
        recall: vec![-1.0; t_n * k_n * a_n * m_n],
        t: t_n,
        r: r_n,
        k: k_n,
        a: a_n,
        m: m_n,
    };
    for k in 0..k_n {
        for a in 0..a_n {
            let base = (k * a_n + a) * i_n;
            let es: Vec<&EvalImg> = eval_imgs[base..base + i_n].iter().flatten().collect();
            if es.is_empty() {
                continue;
            }
            for (m, &max_det) in p.max_dets.iter().enumerate() {
                accumulate_one(&mut acc, &es, k, a, m, max_det, p);
            }
        }
    }
    acc
}

fn accumulate_one(
    acc: &mut Accumulated,
    es: &[&EvalImg],
    k: usize,
    a: usize,
    m: usize,
    max_det: usize,
    p: &Params,
) {
    // Concatenate per image (sorted image-id order), each cut to max_det.
    let mut scores = Vec::new();
    let mut origin = Vec::new(); // (image slot, detection index)
    for (ei, e) in es.iter().enumerate() {
        let n = e.num_dt.min(max_det);
        scores.extend_from_slice(&e.dt_scores[..n]);
        origin.extend((0..n).map(|d| (ei, d)));
    }
    let npig = es
        .iter()
        .flat_map(|e| e.gt_ignore.iter())
        .filter(|&&ig| !ig)
        .count();
    if npig == 0 {
        return;
    }
    let inds = argsort_desc_stable(&scores);
    let nd = inds.len();
    let npig = npig as f64;
    for (t, _) in p.iou_thrs.iter().enumerate() {
        let (mut tp, mut fp) = (0u64, 0u64);
        let mut rc = Vec::with_capacity(nd);
        let mut pr = Vec::with_capacity(nd);
        for &j in &inds {
            let (ei, d) = origin[j];
            let e = es[ei];
            if !e.dt_ignored(t, d) {
                if e.dt_match(t, d) != 0 {
                    tp += 1;
                } else {
                    fp += 1;
                }
            }
            let (tpf, fpf) = (tp as f64, fp as f64);
            rc.push(tpf / npig);
            pr.push(tpf / (fpf + tpf + SPACING_ONE));
        }
        let ri = acc.r_index(t, k, a, m);
        acc.recall[ri] = if nd > 0 { rc[nd - 1] } else { 0.0 };
        // Make precision non-increasing from the right.
        for i in (1..nd).rev() {
            if pr[i] > pr[i - 1] {
                pr[i - 1] = pr[i];
            }
        }
        for (r, &thr) in p.rec_thrs.iter().enumerate() {
            let pi = searchsorted_left(&rc, thr);
            let idx = acc.p_index(t, r, k, a, m);
            // Past the last detection the reference stops filling and leaves
            // the zeros it started with.
            acc.precision[idx] = if pi < nd { pr[pi] } else { 0.0 };
        }
    }
}
