//! MLPerf YOLO's preprocessing, as the reference harness (`yolo/yolo_loadgen.py`:
//! `YOLO(model).predict(path, conf=0.001)`) gets it from ultralytics 8.4.190 for a static
//! 640x640 ONNX export, on the image `cv2.imread` gives:
//!
//! 1. `LetterBox((640, 640), auto=False, stride=32)`: a static export is not `dynamic`, so
//!    `pre_transform` pads to the full square rather than to the minimal stride-32 rectangle
//!    a `.pt` model gets (tests/fixtures/coco/YOLO-FACTS.md); `cv2.resize(INTER_LINEAR)` to
//!    the scaled size when it changes, bit for bit (`mlperf-opencv-resize`), and a border of
//!    114;
//! 2. HWC to CHW, BGR to RGB, float32, `/ 255` as torch divides on the CPU (an IEEE
//!    division; CUDA multiplies by the reciprocal and differs in the last bit for 126 of the
//!    256 byte values).
//!
//! Output: float32 `[3, 640, 640]`, the model's `images` input without the batch axis. The
//! original size the post-processing rescales boxes to is the input's shape, which the host
//! keeps.

#![cfg_attr(target_arch = "wasm32", no_std)]
// Outside wasm32 the export macro expands to nothing and only the tests call the module.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use mlperf_opencv_resize::linear::letterbox::{
    letterbox_geometry, letterbox_tensor, LetterboxParams, LetterboxScratch, Normalization,
};
use mlperf_opencv_resize::linear::{ColumnTap, Scratch};
use mlperf_preprocess_guest::{carve, export_preprocess, Error, Output, Preprocess, Shape};

/// The model's input side.
pub const SIDE: usize = 640;
/// A static export's letterbox: the full square.
pub const PARAMS: LetterboxParams = LetterboxParams::yolo640(false);
const OUTPUT_BYTES: usize = 3 * SIDE * SIDE * 4;
const OUTPUT_SHAPE: Shape = Shape::new(&[3, SIDE as u32, SIDE as u32]);

struct YoloLetterbox;

impl Preprocess for YoloLetterbox {
    const METADATA: &'static str = concat!(
        "name=yolo-letterbox\n",
        "version=1.0.0\n",
        "description=MLPerf YOLO (ultralytics 8.4.190 predict on a static 640x640 export) on ",
        "cv2.imread's BGR image: LetterBox to 640x640 (INTER_LINEAR as OpenCV 5.0 computes it, ",
        "border 114), RGB, CHW, float32 / 255 as torch divides on the CPU\n",
        "input_dtype=uint8\n",
        "input_shape=*,*,3\n",
        "output_dtype=float32\n",
        "output_shape=3,640,640",
    );

    fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error> {
        let &[height, width, 3] = shape.dims() else {
            return Err(Error::BadShape);
        };
        let (height, width) = (height as usize, width as usize);
        if input.len() as u64 != height as u64 * width as u64 * 3 {
            return Err(Error::LengthMismatch);
        }
        let geometry = letterbox_geometry(width, height, &PARAMS).map_err(|_| Error::BadShape)?;
        let need = geometry.resize_scratch();
        let row_len = geometry.row_scratch_len();
        // One buffer: the tensor, then the resize's column taps, its rows and one resized
        // row (each carve may pad to its alignment).
        let scratch_len =
            need.columns * core::mem::size_of::<ColumnTap>() + need.rows * 2 + row_len + 3 * 16;
        let buffer = output.bytes(OUTPUT_BYTES + scratch_len)?;
        let (out, rest) = buffer.split_at_mut(OUTPUT_BYTES);
        let (columns, rest) = carve::<ColumnTap>(rest, need.columns)?;
        let (rows, rest) = carve::<u16>(rest, need.rows)?;
        let (tensor, _) = carve::<f32>(out, 3 * SIDE * SIDE)?;
        let mut scratch = LetterboxScratch {
            resize: Scratch { columns, rows },
            row: &mut rest[..row_len],
        };
        letterbox_tensor(
            input,
            &geometry,
            Normalization::Divide,
            tensor,
            &mut scratch,
        )
        .map_err(|_| Error::BadShape)?;
        output.truncate(OUTPUT_BYTES)?;
        Ok(OUTPUT_SHAPE)
    }
}

export_preprocess!(YoloLetterbox);

#[cfg(test)]
mod tests {
    use super::*;

    fn run(height: usize, width: usize, image: &[u8]) -> Result<std::vec::Vec<f32>, Error> {
        // A large allocation is page-aligned, as a module's output region is aligned.
        let mut buffer = std::vec![0u8; 8 << 20];
        let mut output = Output::from_slice(&mut buffer);
        let shape = YoloLetterbox::preprocess(
            image,
            &Shape::new(&[height as u32, width as u32, 3]),
            &mut output,
        )?;
        assert_eq!(shape.dims(), [3, 640, 640]);
        assert_eq!(output.len(), OUTPUT_BYTES);
        Ok(buffer[..OUTPUT_BYTES]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect())
    }

    #[test]
    fn a_landscape_image_fills_the_width_and_is_padded_above_and_below() {
        // 480x640 stays 640 wide (no resize): 80 rows of 114 above and below.
        let mut image = std::vec![0u8; 480 * 640 * 3];
        for pixel in image.chunks_exact_mut(3) {
            pixel.copy_from_slice(&[10, 20, 30]); // B, G, R
        }
        let tensor = run(480, 640, &image).unwrap();
        let plane = 640 * 640;
        let at = |channel: usize, y: usize, x: usize| tensor[channel * plane + y * 640 + x];
        assert_eq!(at(0, 0, 0), 114.0 / 255.0);
        assert_eq!(at(0, 80, 0), 30.0 / 255.0, "plane 0 is red");
        assert_eq!(at(2, 559, 639), 10.0 / 255.0, "plane 2 is blue");
        assert_eq!(at(1, 560, 5), 114.0 / 255.0);
    }

    #[test]
    fn a_bad_shape_or_length_is_refused() {
        assert!(matches!(run(2, 2, &[0; 11]), Err(Error::LengthMismatch)));
        let mut buffer = std::vec![0u8; 64];
        let mut output = Output::from_slice(&mut buffer);
        let refused =
            YoloLetterbox::preprocess(&[0; 4], &Shape::new(&[2, 2]), &mut output).unwrap_err();
        assert!(matches!(refused, Error::BadShape));
    }
}
