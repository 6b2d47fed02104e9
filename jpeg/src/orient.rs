//! Applying an EXIF orientation to a decoded HWC image.
//!
//! OpenCV composes `transpose` and `flip` to honour the tag after decoding; the result is
//! a pure permutation of pixels, so we compute it in one pass by mapping each output
//! pixel back to its source pixel. Values outside 1..=8 leave the image unchanged, as in
//! OpenCV.

use crate::Image;

/// Return `img` re-oriented for EXIF `orientation` (1 = as stored).
pub(crate) fn apply(img: Image, orientation: u16) -> Image {
    if !(2..=8).contains(&orientation) {
        return img;
    }
    let (w, h, c) = (img.width, img.height, Image::CHANNELS);
    let swaps = orientation >= 5;
    let (ow, oh) = if swaps { (h, w) } else { (w, h) };
    // For output pixel (oy, ox): the source pixel (sy, sx).
    let source = |oy: usize, ox: usize| -> (usize, usize) {
        match orientation {
            2 => (oy, w - 1 - ox),         // mirror left-right
            3 => (h - 1 - oy, w - 1 - ox), // rotate 180
            4 => (h - 1 - oy, ox),         // mirror top-bottom
            5 => (ox, oy),                 // transpose
            6 => (h - 1 - ox, oy),         // rotate 90 clockwise
            7 => (h - 1 - ox, w - 1 - oy), // transverse
            _ => (ox, w - 1 - oy),         // 8: rotate 90 counter-clockwise
        }
    };
    let mut data = Vec::with_capacity(img.data.len());
    for oy in 0..oh {
        for ox in 0..ow {
            let (sy, sx) = source(oy, ox);
            let at = (sy * w + sx) * c;
            data.extend_from_slice(&img.data[at..at + c]);
        }
    }
    Image {
        width: ow,
        height: oh,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3x2 image whose pixel (y, x) holds the value 10*y + x in every channel.
    fn sample() -> Image {
        let mut data = Vec::new();
        for y in 0..2u8 {
            for x in 0..3u8 {
                data.extend_from_slice(&[10 * y + x; 3]);
            }
        }
        Image {
            width: 3,
            height: 2,
            data,
        }
    }

    fn rows(img: &Image) -> Vec<Vec<u8>> {
        img.data
            .chunks(img.width * 3)
            .map(|r| r.iter().step_by(3).copied().collect())
            .collect()
    }

    #[test]
    fn all_eight_orientations() {
        let expect: [&[&[u8]]; 8] = [
            &[&[0, 1, 2], &[10, 11, 12]],
            &[&[2, 1, 0], &[12, 11, 10]],
            &[&[12, 11, 10], &[2, 1, 0]],
            &[&[10, 11, 12], &[0, 1, 2]],
            &[&[0, 10], &[1, 11], &[2, 12]],
            &[&[10, 0], &[11, 1], &[12, 2]],
            &[&[12, 2], &[11, 1], &[10, 0]],
            &[&[2, 12], &[1, 11], &[0, 10]],
        ];
        for (i, want) in expect.iter().enumerate() {
            let got = rows(&apply(sample(), i as u16 + 1));
            assert_eq!(got, *want, "orientation {}", i + 1);
        }
        assert_eq!(rows(&apply(sample(), 0)), rows(&sample()));
        assert_eq!(rows(&apply(sample(), 9)), rows(&sample()));
    }
}
