//! MLPerf ResNet-50's preprocessing, `pre_process_vgg` of the reference
//! (`vision/classification_and_detection/python/dataset.py`), on the image `cv2.imread` gives:
//!
//! 1. BGR to RGB (`cv2.cvtColor`; done at the crop below: INTER_AREA treats the channels
//!    alike, so swapping them after the resize gives the same bytes);
//! 2. `cv2.resize(INTER_AREA)` so that the short side is 256 and the long side
//!    `int(256 * long / short)` (`resize_with_aspectratio` at scale 87.5), bit for bit
//!    (`mlperf-opencv-resize`);
//! 3. the centre crop at `int((side - 224) / 2)`;
//! 4. float32, minus the RGB means 123.68, 116.78, 103.94 (no scaling), as
//!    `img -= np.array(means, np.float32)` computes it;
//! 5. HWC to CHW: float32 `[3, 224, 224]`.

#![cfg_attr(target_arch = "wasm32", no_std)]
// Outside wasm32 the export macro expands to nothing and only the tests call the module.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use mlperf_opencv_resize::area::{
    resize_area_u8c3, scratch_requirement, short_side_resize_dims, AreaTap, Scratch,
};
use mlperf_preprocess_guest::{carve, export_preprocess, Error, Output, Preprocess, Shape};

/// The crop's side.
pub const CROP: usize = 224;
/// The short side after resizing: `int(100 * 224 / 87.5)`.
pub const SHORT_SIDE: usize = 256;
/// The reference's means, in RGB order.
pub const MEANS: [f32; 3] = [123.68, 116.78, 103.94];
const OUTPUT_BYTES: usize = 3 * CROP * CROP * 4;
const OUTPUT_SHAPE: Shape = Shape::new(&[3, CROP as u32, CROP as u32]);

struct ImagenetVgg;

impl Preprocess for ImagenetVgg {
    const METADATA: &'static str = concat!(
        "name=imagenet-vgg\n",
        "version=1.0.0\n",
        "description=MLPerf ResNet-50 (the reference's pre_process_vgg) on cv2.imread's BGR image: ",
        "INTER_AREA resize of the short side to 256 as OpenCV 5.0 computes it, centre crop 224, ",
        "RGB minus the means 123.68/116.78/103.94, CHW\n",
        "input_dtype=uint8\n",
        "input_shape=*,*,3\n",
        "output_dtype=float32\n",
        "output_shape=3,224,224",
    );

    fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error> {
        let &[height, width, 3] = shape.dims() else {
            return Err(Error::BadShape);
        };
        let (height, width) = (height as usize, width as usize);
        if height == 0 || width == 0 {
            return Err(Error::BadShape);
        }
        if input.len() as u64 != height as u64 * width as u64 * 3 {
            return Err(Error::LengthMismatch);
        }
        let (resized_width, resized_height) = short_side_resize_dims(width, height, SHORT_SIDE);
        let need = scratch_requirement(width, height, resized_width, resized_height, 3)
            .map_err(|_| Error::BadShape)?;
        let resized_len = resized_width * resized_height * 3;
        // One buffer: the output, the resized image, then the resize's tables and rows (each
        // carve may pad to its alignment).
        let scratch_len = resized_len
            + need.ints * 4
            + need.floats * 4
            + need.taps * core::mem::size_of::<AreaTap>()
            + 3 * 16;
        let buffer = output.bytes(OUTPUT_BYTES + scratch_len)?;
        let (out, rest) = buffer.split_at_mut(OUTPUT_BYTES);
        let (resized, rest) = rest.split_at_mut(resized_len);
        let (ints, rest) = carve::<i32>(rest, need.ints)?;
        let (floats, rest) = carve::<f32>(rest, need.floats)?;
        let (taps, _) = carve::<AreaTap>(rest, need.taps)?;
        let mut scratch = Scratch { ints, floats, taps };
        resize_area_u8c3(
            input,
            width,
            height,
            resized,
            resized_width,
            resized_height,
            &mut scratch,
        )
        .map_err(|_| Error::BadShape)?;
        crop_to_chw(resized, resized_width, resized_height, out);
        output.truncate(OUTPUT_BYTES)?;
        Ok(OUTPUT_SHAPE)
    }
}

/// The centre `CROP`² of the BGR image `resized`, as RGB planes of float32 minus the means,
/// into `out` (little-endian bytes).
pub fn crop_to_chw(resized: &[u8], width: usize, height: usize, out: &mut [u8]) {
    let (left, top) = ((width - CROP) / 2, (height - CROP) / 2);
    for (rgb, plane) in out.chunks_exact_mut(CROP * CROP * 4).enumerate() {
        let bgr = 2 - rgb;
        for (y, row) in plane.chunks_exact_mut(CROP * 4).enumerate() {
            let source = &resized[((top + y) * width + left) * 3..][..CROP * 3];
            for (value, pixel) in row.chunks_exact_mut(4).zip(source.chunks_exact(3)) {
                let centred = pixel[bgr] as f32 - MEANS[rgb];
                value.copy_from_slice(&centred.to_le_bytes());
            }
        }
    }
}

export_preprocess!(ImagenetVgg);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_becomes_the_references_tensor_shape_and_a_bad_one_is_refused() {
        // 500x375 shrinks by a non-integer ratio to 341x256 (true area averaging).
        let image = std::vec![77u8; 375 * 500 * 3];
        let mut buffer = std::vec![0u8; 4 << 20];
        let mut output = Output::from_slice(&mut buffer);
        let shape = ImagenetVgg::preprocess(&image, &Shape::new(&[375, 500, 3]), &mut output);
        assert_eq!(shape, Ok(OUTPUT_SHAPE));
        assert_eq!(output.len(), OUTPUT_BYTES);
        let first = f32::from_le_bytes(buffer[..4].try_into().unwrap());
        assert_eq!(first, 77.0 - 123.68);
        let mut output = Output::from_slice(&mut buffer);
        let bad = ImagenetVgg::preprocess(&image, &Shape::new(&[375, 500, 4]), &mut output);
        assert_eq!(bad, Err(Error::BadShape));
        let short = ImagenetVgg::preprocess(&image[1..], &Shape::new(&[375, 500, 3]), &mut output);
        assert_eq!(short, Err(Error::LengthMismatch));
    }

    #[test]
    fn the_crop_is_centred_and_the_channels_swapped() {
        // 2 columns and 3 rows more than the crop: the crop starts at (1, 1).
        let (width, height) = (CROP + 2, CROP + 3);
        let mut image = std::vec![0u8; (CROP + 2) * (CROP + 3) * 3];
        for y in 0..height {
            for x in 0..width {
                let at = (y * width + x) * 3;
                image[at..at + 3].copy_from_slice(&[x as u8, y as u8, 200]);
            }
        }
        let mut out = std::vec![0u8; OUTPUT_BYTES];
        crop_to_chw(&image, width, height, &mut out);
        let value = |plane: usize, y: usize, x: usize| {
            let at = ((plane * CROP + y) * CROP + x) * 4;
            f32::from_le_bytes(out[at..at + 4].try_into().unwrap())
        };
        // R is the BGR image's third byte, B its first.
        assert_eq!(value(0, 0, 0), 200.0 - 123.68);
        assert_eq!(value(1, 0, 0), 1.0 - 116.78);
        assert_eq!(value(2, 5, 7), 8.0 - 103.94);
        assert_eq!(value(1, 223, 0), 224.0 - 116.78);
    }
}
