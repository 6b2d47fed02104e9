//! The kernel. Each output value is computed by exactly the float operations of
//! `wasm-preprocess/src/reference.rs`, in the same order (Rust never fuses them), so the
//! module and the native reference agree bit for bit; only the loops are arranged for speed.

/// Side of the square crop.
pub const CROP: usize = 224;
/// Floats in the output: three planes of CROP × CROP.
pub const OUTPUT_LEN: usize = 3 * PLANE;
const PLANE: usize = CROP * CROP;
/// The shorter side after resizing: MLPerf's 224 / 0.875.
const SHORT_SIDE: u64 = 256;
const MEAN: [f32; 3] = [123.675, 116.28, 103.53];
const INV_STD: [f32; 3] = [1.0 / 58.395, 1.0 / 57.12, 1.0 / 57.375];

/// Where one resized row or column reads the source: two neighbouring source indices and
/// the weight of the second.
#[derive(Clone, Copy)]
struct Taps {
    near: usize,
    far: usize,
    weight: f32,
}

/// Resized height and width: the shorter side becomes 256, the other keeps the aspect ratio
/// (truncated), and neither is below the crop.
fn resized_size(height: u64, width: u64) -> (u64, u64) {
    let (resized_height, resized_width) = if height <= width {
        (SHORT_SIDE, width * SHORT_SIDE / height)
    } else {
        (height * SHORT_SIDE / width, SHORT_SIDE)
    };
    let crop = CROP as u64;
    (resized_height.max(crop), resized_width.max(crop))
}

/// Taps of resized index `resized` on an axis of `size` source pixels, `scale` source pixels
/// per resized pixel (pixel centres aligned). Both indices are at most `size - 1`.
fn taps(resized: u64, scale: f32, size: u32) -> Taps {
    let mut source = (resized as f32 + 0.5) * scale - 0.5;
    if source < 0.0 {
        source = 0.0;
    }
    let last = size - 1;
    let near = (source as u32).min(last);
    let far = (near + 1).min(last);
    let weight = if near == last {
        0.0
    } else {
        source - near as f32
    };
    Taps {
        near: near as usize,
        far: far as usize,
        weight,
    }
}

/// Resizes, crops and normalises the HWC image `input` (`height` × `width` × 3 bytes, both
/// sides at least 1) into `output`, three CHW planes.
pub fn resize_crop_normalize(input: &[u8], height: u32, width: u32, output: &mut [f32]) {
    let row_len = width as usize * 3;
    assert!(height > 0 && width > 0 && input.len() == height as usize * row_len);
    let (resized_height, resized_width) = resized_size(u64::from(height), u64::from(width));
    let top = (resized_height - CROP as u64) / 2;
    let left = (resized_width - CROP as u64) / 2;
    let scale_y = height as f32 / resized_height as f32;
    let scale_x = width as f32 / resized_width as f32;

    // Per column, byte offsets of the two source pixels within a row.
    let mut columns = [Taps {
        near: 0,
        far: 0,
        weight: 0.0,
    }; CROP];
    for (x, column) in columns.iter_mut().enumerate() {
        let taps = taps(left + x as u64, scale_x, width);
        *column = Taps {
            near: taps.near * 3,
            far: taps.far * 3,
            weight: taps.weight,
        };
    }

    let (red, rest) = output.split_at_mut(PLANE);
    let (green, blue) = rest.split_at_mut(PLANE);
    let rows = red
        .chunks_exact_mut(CROP)
        .zip(green.chunks_exact_mut(CROP))
        .zip(blue.chunks_exact_mut(CROP));
    for (y, ((red, green), blue)) in rows.enumerate() {
        let taps = taps(top + y as u64, scale_y, height);
        let upper = &input[taps.near * row_len..][..row_len];
        let lower = &input[taps.far * row_len..][..row_len];
        let pixels = columns.iter().zip(red).zip(green).zip(blue);
        for (((column, red), green), blue) in pixels {
            // SAFETY: `taps` keeps indices at most `width - 1`, so `column.near` and
            // `column.far` are at most `row_len - 3` and channel offsets up to 2 stay inside
            // rows of `row_len` bytes.
            unsafe {
                *red = sample(upper, lower, column, taps.weight, 0);
                *green = sample(upper, lower, column, taps.weight, 1);
                *blue = sample(upper, lower, column, taps.weight, 2);
            }
        }
    }
}

/// One normalised channel value, interpolated across then down.
///
/// # Safety
/// `column.near + channel` and `column.far + channel` must be in bounds of `upper` and
/// `lower`.
#[inline(always)]
unsafe fn sample(
    upper: &[u8],
    lower: &[u8],
    column: &Taps,
    row_weight: f32,
    channel: usize,
) -> f32 {
    debug_assert!(column.near.max(column.far) + channel < upper.len().min(lower.len()));
    let p00 = *upper.get_unchecked(column.near + channel) as f32;
    let p01 = *upper.get_unchecked(column.far + channel) as f32;
    let p10 = *lower.get_unchecked(column.near + channel) as f32;
    let p11 = *lower.get_unchecked(column.far + channel) as f32;
    let top = p00 + (p01 - p00) * column.weight;
    let bottom = p10 + (p11 - p10) * column.weight;
    let value = top + (bottom - top) * row_weight;
    (value - MEAN[channel]) * INV_STD[channel]
}
