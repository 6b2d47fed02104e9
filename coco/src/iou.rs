//! Box IoU as pycocotools' C `bbIou` computes it, in double precision and in
//! the same operation order (so the bits match, not just the value).

/// IoU of detection `d` with ground truth `g`, both `[x, y, w, h]`.
///
/// For a crowd ground truth the union is the detection's own area, so a
/// detection inside a crowd region scores its fraction covered.
/// `w <= 0` or `h <= 0` overlap gives 0 (touching boxes do not overlap).
pub fn bb_iou(d: &[f64; 4], g: &[f64; 4], crowd: bool) -> f64 {
    let ga = g[2] * g[3];
    let da = d[2] * d[3];
    let w = (d[2] + d[0]).min(g[2] + g[0]) - d[0].max(g[0]);
    if w <= 0.0 {
        return 0.0;
    }
    let h = (d[3] + d[1]).min(g[3] + g[1]) - d[1].max(g[1]);
    if h <= 0.0 {
        return 0.0;
    }
    let i = w * h;
    let u = if crowd { da } else { da + ga - i };
    i / u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple() {
        let g = [0.0, 0.0, 10.0, 10.0];
        assert_eq!(bb_iou(&[0.0, 0.0, 10.0, 5.0], &g, false), 0.5);
        assert_eq!(bb_iou(&[10.0, 0.0, 10.0, 5.0], &g, false), 0.0);
        // Crowd: union is the detection area.
        assert_eq!(bb_iou(&[5.0, 5.0, 10.0, 10.0], &g, true), 0.25);
        assert_eq!(bb_iou(&[2.0, 2.0, 2.0, 2.0], &g, true), 1.0);
    }
}
