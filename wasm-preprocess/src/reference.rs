//! Native reference implementations of the shipped modules (`modules/fmnist`,
//! `modules/image-classification`): the yardstick the modules are compared with, bit for bit,
//! and timed against. Written plainly on purpose; every float operation is in `f32`, in the
//! order the modules use (Rust never fuses a multiply and an add).

/// Side of a Fashion-MNIST image.
pub const FMNIST_SIDE: usize = 28;
/// Pixels in a Fashion-MNIST image, and floats in its preprocessed form.
pub const FMNIST_LEN: usize = FMNIST_SIDE * FMNIST_SIDE;

/// Side of the square crop an image-classification model reads.
pub const IMAGE_SIZE: usize = 224;
/// The shorter side of an image after resizing: MLPerf's 224 / 0.875.
pub const RESIZE_SHORT_SIDE: usize = 256;
/// Channels of an image (RGB).
pub const IMAGE_CHANNELS: usize = 3;
/// Floats in a preprocessed image: `[3, 224, 224]`.
pub const IMAGE_OUTPUT_LEN: usize = IMAGE_CHANNELS * IMAGE_SIZE * IMAGE_SIZE;
/// Per-channel mean subtracted from a pixel (ImageNet, 0..255 scale).
pub const MEAN: [f32; 3] = [123.675, 116.28, 103.53];
/// Per-channel standard deviation a pixel is divided by, as a multiplication by its inverse.
pub const STD: [f32; 3] = [58.395, 57.12, 57.375];
/// `1 / STD`, rounded to `f32` once, at compile time.
pub const INV_STD: [f32; 3] = [1.0 / 58.395, 1.0 / 57.12, 1.0 / 57.375];

/// Fashion-MNIST: each pixel divided by 255 (a true division, as numpy's
/// `u8.astype(np.float32) / 255`).
///
/// # Panics
/// If `input` or `output` is not [`FMNIST_LEN`] long.
pub fn fmnist(input: &[u8], output: &mut [f32]) {
    assert_eq!(
        input.len(),
        FMNIST_LEN,
        "a Fashion-MNIST image is 28x28 bytes"
    );
    assert_eq!(output.len(), FMNIST_LEN, "the output holds 784 floats");
    for (out, &pixel) in output.iter_mut().zip(input) {
        *out = pixel as f32 / 255.0;
    }
}

/// Generic image classification (not the MLPerf reference's; the `imagenet-vgg` module is): the HWC RGB image `input` (`height` × `width` × 3 bytes) is
/// resized (bilinear, pixel centres aligned) so its shorter side is 256, center-cropped to
/// 224 × 224, normalised per channel and written CHW into `output`.
///
/// # Panics
/// If a side is 0, `input` is not `height * width * 3` long, or `output` is not
/// [`IMAGE_OUTPUT_LEN`] long.
pub fn image_classification(input: &[u8], height: usize, width: usize, output: &mut [f32]) {
    assert!(height > 0 && width > 0, "an image has at least one pixel");
    assert_eq!(
        input.len(),
        height * width * IMAGE_CHANNELS,
        "input is not HxWx3 bytes"
    );
    assert_eq!(
        output.len(),
        IMAGE_OUTPUT_LEN,
        "output is not 3x224x224 floats"
    );

    let (resized_height, resized_width) = resized_size(height as u64, width as u64);
    let crop = IMAGE_SIZE as u64;
    let top = (resized_height - crop) / 2;
    let left = (resized_width - crop) / 2;
    let scale_y = height as f32 / resized_height as f32;
    let scale_x = width as f32 / resized_width as f32;

    let rows: Vec<Taps> = (0..crop).map(|y| taps(top + y, scale_y, height)).collect();
    let columns: Vec<Taps> = (0..crop).map(|x| taps(left + x, scale_x, width)).collect();
    let pixel = |y: usize, x: usize, channel: usize| input[(y * width + x) * 3 + channel] as f32;

    for channel in 0..IMAGE_CHANNELS {
        for (y, row) in rows.iter().enumerate() {
            for (x, column) in columns.iter().enumerate() {
                let p00 = pixel(row.near, column.near, channel);
                let p01 = pixel(row.near, column.far, channel);
                let p10 = pixel(row.far, column.near, channel);
                let p11 = pixel(row.far, column.far, channel);
                let top = p00 + (p01 - p00) * column.weight;
                let bottom = p10 + (p11 - p10) * column.weight;
                let value = top + (bottom - top) * row.weight;
                output[(channel * IMAGE_SIZE + y) * IMAGE_SIZE + x] =
                    (value - MEAN[channel]) * INV_STD[channel];
            }
        }
    }
}

/// Height and width after resizing: the shorter side becomes 256, the longer keeps the aspect
/// ratio (truncated); neither is below the crop.
pub fn resized_size(height: u64, width: u64) -> (u64, u64) {
    let short = RESIZE_SHORT_SIDE as u64;
    let (resized_height, resized_width) = if height <= width {
        (short, width * short / height)
    } else {
        (height * short / width, short)
    };
    let crop = IMAGE_SIZE as u64;
    (resized_height.max(crop), resized_width.max(crop))
}

/// Where one resized row (or column) reads the source: the two neighbouring source indices
/// and the weight of the second.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Taps {
    near: usize,
    far: usize,
    weight: f32,
}

/// The taps of resized index `resized` along an axis of `size` source pixels, with `scale`
/// source pixels per resized pixel.
fn taps(resized: u64, scale: f32, size: usize) -> Taps {
    let mut source = (resized as f32 + 0.5) * scale - 0.5;
    if source < 0.0 {
        source = 0.0;
    }
    let last = (size - 1) as u64;
    let near = (source as u64).min(last);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An HWC image whose bytes come from `pixel(y, x, channel)`.
    fn image(height: usize, width: usize, pixel: impl Fn(usize, usize, usize) -> u8) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(height * width * 3);
        for y in 0..height {
            for x in 0..width {
                bytes.extend((0..3).map(|channel| pixel(y, x, channel)));
            }
        }
        bytes
    }

    /// Bytes that look random and differ between neighbours (a small LCG).
    fn noise(y: usize, x: usize, channel: usize) -> u8 {
        let seed = (y * 7919 + x * 104_729 + channel * 1_299_709) as u32;
        (seed.wrapping_mul(1_103_515_245).wrapping_add(12345) >> 16) as u8
    }

    fn preprocess(input: &[u8], height: usize, width: usize) -> Vec<f32> {
        let mut output = vec![f32::NAN; IMAGE_OUTPUT_LEN];
        image_classification(input, height, width, &mut output);
        output
    }

    fn at(output: &[f32], channel: usize, y: usize, x: usize) -> f32 {
        output[(channel * IMAGE_SIZE + y) * IMAGE_SIZE + x]
    }

    fn normalised(value: f32, channel: usize) -> f32 {
        (value - MEAN[channel]) * INV_STD[channel]
    }

    #[test]
    fn fmnist_maps_0_and_255_to_0_and_1() {
        let mut input = [0u8; FMNIST_LEN];
        input[1] = 255;
        input[2] = 51;
        let mut output = [f32::NAN; FMNIST_LEN];
        fmnist(&input, &mut output);
        assert_eq!(output[0], 0.0);
        assert_eq!(output[1], 1.0);
        assert_eq!(output[2], 0.2);
        assert_eq!(output[3], 0.0);
    }

    #[test]
    fn fmnist_divides_rather_than_multiplies_by_the_inverse() {
        // The two differ for some bytes; numpy divides.
        let input: Vec<u8> = (0..FMNIST_LEN).map(|i| (i % 256) as u8).collect();
        let mut output = [0f32; FMNIST_LEN];
        fmnist(&input, &mut output);
        for (&out, &pixel) in output.iter().zip(&input) {
            assert_eq!(out.to_bits(), (pixel as f32 / 255.0).to_bits());
        }
        assert!((0..=255u8).any(|p| p as f32 / 255.0 != p as f32 * (1.0 / 255.0)));
    }

    #[test]
    #[should_panic(expected = "28x28")]
    fn fmnist_refuses_other_sizes() {
        fmnist(&[0; 10], &mut [0.0; FMNIST_LEN]);
    }

    #[test]
    fn inv_std_is_the_f32_inverse() {
        for channel in 0..3 {
            assert_eq!(INV_STD[channel], 1.0 / STD[channel]);
        }
    }

    #[test]
    fn resized_size_keeps_the_aspect_ratio_with_the_short_side_256() {
        assert_eq!(resized_size(375, 500), (256, 341));
        assert_eq!(resized_size(500, 375), (341, 256));
        assert_eq!(resized_size(100, 100), (256, 256));
        assert_eq!(resized_size(1, 1), (256, 256));
        assert_eq!(resized_size(1, 3), (256, 768));
    }

    #[test]
    fn a_constant_image_normalises_its_colour_everywhere() {
        let colour = [10u8, 128, 250];
        let output = preprocess(&image(300, 500, |_, _, c| colour[c]), 300, 500);
        for channel in 0..3 {
            let expected = normalised(colour[channel] as f32, channel);
            let plane = &output[channel * IMAGE_SIZE * IMAGE_SIZE..][..IMAGE_SIZE * IMAGE_SIZE];
            assert!(plane.iter().all(|&v| v == expected), "channel {channel}");
        }
    }

    #[test]
    fn a_256_square_image_is_only_cropped() {
        // Scale 1: every output pixel is a source pixel, from the central 224x224.
        let input = image(256, 256, noise);
        let output = preprocess(&input, 256, 256);
        for channel in 0..3 {
            for y in 0..IMAGE_SIZE {
                for x in 0..IMAGE_SIZE {
                    let source = noise(y + 16, x + 16, channel) as f32;
                    assert_eq!(at(&output, channel, y, x), normalised(source, channel));
                }
            }
        }
    }

    #[test]
    fn halving_samples_between_source_pixel_centres() {
        // A 512 square is halved: output pixel x reads between source columns 32 + 2x and
        // 33 + 2x with weight 1/2, so columns alternating 0 and 100 average to exactly 50.
        let input = image(512, 512, |_, x, _| if x % 2 == 0 { 0 } else { 100 });
        let output = preprocess(&input, 512, 512);
        for channel in 0..3 {
            let expected = normalised(50.0, channel);
            for y in [0, 100, IMAGE_SIZE - 1] {
                for x in [0, 1, 111, IMAGE_SIZE - 1] {
                    assert_eq!(
                        at(&output, channel, y, x),
                        expected,
                        "({channel}, {y}, {x})"
                    );
                }
            }
        }
    }

    #[test]
    fn a_horizontal_gradient_stays_increasing() {
        let input = image(300, 400, |_, x, _| (x * 255 / 399) as u8);
        let output = preprocess(&input, 300, 400);
        for y in [0, 57, IMAGE_SIZE - 1] {
            for x in 1..IMAGE_SIZE {
                assert!(
                    at(&output, 0, y, x) >= at(&output, 0, y, x - 1),
                    "({y}, {x})"
                );
            }
            assert!(at(&output, 0, y, IMAGE_SIZE - 1) > at(&output, 0, y, 0));
        }
    }

    #[test]
    fn portrait_and_landscape_are_transposes() {
        // Transposing the image transposes the output, up to the rounding of interpolating
        // across before down.
        let landscape = image(300, 451, noise);
        let portrait = image(451, 300, |y, x, c| noise(x, y, c));
        let landscape_out = preprocess(&landscape, 300, 451);
        let portrait_out = preprocess(&portrait, 451, 300);
        for channel in 0..3 {
            for y in 0..IMAGE_SIZE {
                for x in 0..IMAGE_SIZE {
                    let a = at(&landscape_out, channel, y, x);
                    let b = at(&portrait_out, channel, x, y);
                    assert!((a - b).abs() < 1e-4, "({channel}, {y}, {x}): {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn upscaling_a_tiny_image_stays_within_its_pixels() {
        let input = image(2, 3, noise);
        let output = preprocess(&input, 2, 3);
        for channel in 0..3 {
            let values: Vec<u8> = input.iter().skip(channel).step_by(3).copied().collect();
            let low = normalised(*values.iter().min().unwrap() as f32, channel);
            let high = normalised(*values.iter().max().unwrap() as f32, channel);
            let plane = &output[channel * IMAGE_SIZE * IMAGE_SIZE..][..IMAGE_SIZE * IMAGE_SIZE];
            assert!(
                plane.iter().all(|&v| v >= low && v <= high),
                "channel {channel}"
            );
        }
    }

    #[test]
    fn a_single_pixel_fills_the_output() {
        let output = preprocess(&[1, 2, 3], 1, 1);
        assert_eq!(at(&output, 2, 223, 223), normalised(3.0, 2));
        assert!(output.iter().all(|v| v.is_finite()));
    }

    #[test]
    #[should_panic(expected = "HxWx3")]
    fn a_wrong_input_length_panics() {
        preprocess(&[0; 10], 2, 2);
    }
}
