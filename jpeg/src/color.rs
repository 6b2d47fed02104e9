//! OpenCV's own CMYK -> BGR step.
//!
//! For 4-component JPEGs OpenCV asks libjpeg for CMYK (libjpeg turns YCCK into CMYK but
//! does not convert to RGB) and converts each pixel itself. It treats the samples the way
//! Adobe writes them, inverted (255 = no ink), and scales each of C, M, Y by K with an
//! integer product and a right shift by 8 (a division by 256, not 255):
//!
//! `out = k - (((255 - x) * k) >> 8)`, with R from C, G from M, B from Y.
//!
//! The division by 256 is why a pure white pixel (all 255) comes out as 255 but a mid
//! value can be one lower than an exact conversion would give; we keep it bit for bit.

/// Convert packed CMYK rows (4 bytes per pixel) into packed BGR (3 bytes per pixel).
pub(crate) fn cmyk_to_bgr(cmyk: &[u8]) -> Vec<u8> {
    let scale = |x: u8, k: u8| -> u8 {
        let (x, k) = (u32::from(x), u32::from(k));
        // k - floor((255 - x) * k / 256) is always within 0..=k.
        (k - (((255 - x) * k) >> 8)) as u8
    };
    let mut bgr = Vec::with_capacity(cmyk.len() / 4 * 3);
    for px in cmyk.chunks_exact(4) {
        let [c, m, y, k] = [px[0], px[1], px[2], px[3]];
        bgr.extend_from_slice(&[scale(y, k), scale(m, k), scale(c, k)]);
    }
    bgr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_edges() {
        // No ink at all (Adobe-inverted 255s) is white; K = 0 is black whatever C, M, Y.
        assert_eq!(cmyk_to_bgr(&[255, 255, 255, 255]), vec![255, 255, 255]);
        assert_eq!(cmyk_to_bgr(&[10, 200, 255, 0]), vec![0, 0, 0]);
        // 255 - ((255 - 0) * 255 >> 8) = 255 - 254 = 1, not 0: the >> 8 rounding.
        assert_eq!(cmyk_to_bgr(&[0, 128, 255, 255]), vec![255, 129, 1]);
    }
}
