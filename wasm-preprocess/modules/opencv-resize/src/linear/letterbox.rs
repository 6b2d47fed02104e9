//! ultralytics 8.4.190's YOLO input pipeline for `model.predict(path)`:
//! `LetterBox` (`data/augment.py:1675-1857`) followed by
//! `BasePredictor.preprocess` (`engine/predictor.py:183-204`).
//!
//! 1. `get_params` (augment.py:1776-1823), in Python double precision:
//!    `r = min(new_h / h, new_w / w)` (then `min(r, 1.0)` without `scaleup`),
//!    `new_unpad = (max(round(w * r), 1), max(round(h * r), 1))` with
//!    Python's round half to even, `dw = new_w - new_unpad_w` (likewise
//!    `dh`), reduced `mod stride` in `auto` mode (minimal rectangle), halved
//!    when centring, then `top = round(dh - 0.1)`, `bottom = round(dh + 0.1)`,
//!    `left = round(dw - 0.1)`, `right = round(dw + 0.1)`; an odd total puts
//!    the extra pixel at the bottom/right.
//! 2. `apply_image`: `cv2.resize(img, new_unpad, interpolation=INTER_LINEAR)`
//!    only if the size changes (augment.py:1839-1840), then
//!    `cv2.copyMakeBorder(..., BORDER_CONSTANT, value=(114, 114, 114))`.
//! 3. `preprocess`: HWC to CHW, BGR to RGB (`flip(1)`), `.float()`, then
//!    `div_(255)`.
//!
//! The last step depends on where torch runs it (see [`Normalization`]): on
//! the CPU it is an IEEE float32 division `x / 255.0f`, on CUDA it is
//! `x * (1.0f / 255.0f)`, which differs in the last bit for 126 of the 256
//! byte values (114, the padding, among them).

use super::sink::{RowSink, WindowRows};
use super::{resize_into, ResizeError, Scratch, ScratchRequirement};
use crate::checks::check_lengths;
use crate::rounding::round_half_even_f64_wide as round_half_even_f64;

/// The padding value `LetterBox` uses (`padding_value=114`).
pub const PAD_VALUE: u8 = 114;

/// `LetterBox(new_shape, auto, scale_fill, scaleup, center, stride)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LetterboxParams {
    /// Target `(height, width)`; `imgsz=640` becomes `(640, 640)`.
    pub new_shape: (usize, usize),
    /// Minimal rectangle: pad only up to a multiple of `stride`.
    pub auto: bool,
    /// Stretch to `new_shape` without keeping the aspect ratio.
    pub scale_fill: bool,
    /// Allow `r > 1`.
    pub scaleup: bool,
    /// Centre the image (else pad only at the bottom and right).
    pub center: bool,
    pub stride: usize,
}

impl LetterboxParams {
    /// What `BasePredictor.pre_transform` builds for a YOLO11 model at
    /// `imgsz=640`: stride 32, `scaleup`, centred. `auto` is true for a `.pt`
    /// model or a dynamic-shape export and false for a static 640x640 export
    /// (see YOLO-FACTS.md).
    pub const fn yolo640(auto: bool) -> Self {
        Self {
            new_shape: (640, 640),
            auto,
            scale_fill: false,
            scaleup: true,
            center: true,
            stride: 32,
        }
    }
}

/// Why a letterbox was refused. Nothing is written on error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LetterboxError {
    /// `new_shape` has a zero side, or `auto` is set with `stride == 0`.
    BadParams,
    /// The source image is empty.
    EmptyImage,
    /// A computed padding came out negative (Python's `copyMakeBorder`
    /// would raise).
    NegativePadding,
    /// `src.len()` is not `src_w * src_h * 3`.
    SourceLength { expected: usize, actual: usize },
    /// The output buffer length is not [`LetterboxGeometry::tensor_len`] or
    /// [`LetterboxGeometry::image_len`].
    OutputLength { expected: usize, actual: usize },
    /// The row buffer is shorter than [`LetterboxGeometry::row_scratch_len`].
    RowScratchTooSmall { needed: usize, provided: usize },
    /// The resize refused (for example its scratch is too small).
    Resize(ResizeError),
}

impl From<ResizeError> for LetterboxError {
    fn from(error: ResizeError) -> Self {
        Self::Resize(error)
    }
}

/// Everything `LetterBox.get_params` computes, plus the output size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LetterboxGeometry {
    pub src_w: usize,
    pub src_h: usize,
    /// `params["ratio"]`: `(r, r)`, or the two stretch ratios with
    /// `scale_fill`, as (width, height).
    pub ratio: (f64, f64),
    /// `new_unpad`: the size `cv2.resize` is asked for.
    pub resized_w: usize,
    pub resized_h: usize,
    pub top: usize,
    pub bottom: usize,
    pub left: usize,
    pub right: usize,
    /// The letterboxed image: `resized + padding`.
    pub out_w: usize,
    pub out_h: usize,
}

impl LetterboxGeometry {
    /// `apply_image` resizes only when `(w, h) != new_unpad`.
    pub fn needs_resize(&self) -> bool {
        (self.src_w, self.src_h) != (self.resized_w, self.resized_h)
    }

    /// f32 count of the `(3, out_h, out_w)` tensor.
    pub fn tensor_len(&self) -> usize {
        3 * self.out_h * self.out_w
    }

    /// Byte count of the padded `(out_h, out_w, 3)` BGR image.
    pub fn image_len(&self) -> usize {
        3 * self.out_h * self.out_w
    }

    /// Bytes of row buffer [`letterbox_tensor`] needs: one resized row.
    pub fn row_scratch_len(&self) -> usize {
        3 * self.resized_w
    }

    /// Resize scratch for the `src -> resized` step (zero when no resize).
    pub fn resize_scratch(&self) -> ScratchRequirement {
        if self.needs_resize() {
            super::scratch_requirement(self.src_w, self.src_h, self.resized_w, self.resized_h, 3)
                .unwrap_or_default()
        } else {
            ScratchRequirement::default()
        }
    }

    /// What `scale_boxes(img.shape[2:], boxes, orig_img.shape)` recomputes
    /// from the letterboxed and original shapes (it does not reuse `ratio`).
    pub fn scale_boxes(&self) -> ScaleBoxes {
        scale_boxes_params((self.out_h, self.out_w), (self.src_h, self.src_w))
    }
}

/// `LetterBox.get_params` for a `src_w x src_h` image.
pub fn letterbox_geometry(
    src_w: usize,
    src_h: usize,
    params: &LetterboxParams,
) -> Result<LetterboxGeometry, LetterboxError> {
    let (new_h, new_w) = params.new_shape;
    if new_h == 0 || new_w == 0 || (params.auto && params.stride == 0) {
        return Err(LetterboxError::BadParams);
    }
    if src_w == 0 || src_h == 0 {
        return Err(LetterboxError::EmptyImage);
    }
    // r = min(new_shape[0] / shape[0], new_shape[1] / shape[1])
    let r = python_min(new_h as f64 / src_h as f64, new_w as f64 / src_w as f64);
    let r = if params.scaleup {
        r
    } else {
        python_min(r, 1.0)
    };
    let mut ratio = (r, r);
    let mut resized_w = round_half_even_f64(src_w as f64 * r).max(1);
    let mut resized_h = round_half_even_f64(src_h as f64 * r).max(1);
    let mut dw = new_w as i64 - resized_w;
    let mut dh = new_h as i64 - resized_h;
    if params.auto {
        // np.mod with a positive divisor: the floor remainder.
        dw = dw.rem_euclid(params.stride as i64);
        dh = dh.rem_euclid(params.stride as i64);
    } else if params.scale_fill {
        dw = 0;
        dh = 0;
        resized_w = new_w as i64;
        resized_h = new_h as i64;
        ratio = (new_w as f64 / src_w as f64, new_h as f64 / src_h as f64);
    }
    let (top, bottom, left, right) = if params.center {
        let (half_w, half_h) = (dw as f64 / 2.0, dh as f64 / 2.0);
        (
            round_half_even_f64(half_h - 0.1),
            round_half_even_f64(half_h + 0.1),
            round_half_even_f64(half_w - 0.1),
            round_half_even_f64(half_w + 0.1),
        )
    } else {
        (
            0,
            round_half_even_f64(dh as f64 + 0.1),
            0,
            round_half_even_f64(dw as f64 + 0.1),
        )
    };
    let non_negative = |v: i64| usize::try_from(v).map_err(|_| LetterboxError::NegativePadding);
    let (top, bottom, left, right) = (
        non_negative(top)?,
        non_negative(bottom)?,
        non_negative(left)?,
        non_negative(right)?,
    );
    let (resized_w, resized_h) = (resized_w as usize, resized_h as usize);
    Ok(LetterboxGeometry {
        src_w,
        src_h,
        ratio,
        resized_w,
        resized_h,
        top,
        bottom,
        left,
        right,
        out_w: resized_w + left + right,
        out_h: resized_h + top + bottom,
    })
}

/// Python's `min(a, b)`: `b` only if `b < a`.
fn python_min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// The gains and paddings `ultralytics.utils.ops.scale_boxes` derives when
/// `ratio_pad` is None (ops.py:151-155): `gain = min(h1 / h0, w1 / w0)`,
/// `new_h, new_w = max(round(h0 * gain), 1), max(round(w0 * gain), 1)`,
/// `gain_y = new_h / h0`, `gain_x = new_w / w0`,
/// `pad_x = round((w1 - new_w) / 2 - 0.1)`, `pad_y` likewise. Boxes are then
/// `(x - pad_x) / gain_x` and `(y - pad_y) / gain_y` in the box tensor's
/// float32 (on CUDA torch multiplies by the float32 reciprocal of the
/// float32-rounded gain instead of dividing) and clipped to the original
/// image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleBoxes {
    pub gain_x: f64,
    pub gain_y: f64,
    pub pad_x: i64,
    pub pad_y: i64,
}

/// `scale_boxes`' parameters for `img1_shape = (h1, w1)` (the letterboxed
/// input) and `img0_shape = (h0, w0)` (the original image).
pub fn scale_boxes_params(img1_shape: (usize, usize), img0_shape: (usize, usize)) -> ScaleBoxes {
    let (h1, w1) = (img1_shape.0 as f64, img1_shape.1 as f64);
    let (h0, w0) = (img0_shape.0 as f64, img0_shape.1 as f64);
    let gain = python_min(h1 / h0, w1 / w0);
    let new_h = round_half_even_f64(h0 * gain).max(1);
    let new_w = round_half_even_f64(w0 * gain).max(1);
    ScaleBoxes {
        gain_x: new_w as f64 / w0,
        gain_y: new_h as f64 / h0,
        pad_x: round_half_even_f64((img1_shape.1 as i64 - new_w) as f64 / 2.0 - 0.1),
        pad_y: round_half_even_f64((img1_shape.0 as i64 - new_h) as f64 / 2.0 - 0.1),
    }
}

/// How `uint8 -> float32 / 255` is rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalization {
    /// `x / 255.0f` in IEEE float32: torch on the CPU
    /// (`div_true_kernel`, `a / b`), and numpy (`img.astype(np.float32) /
    /// 255`).
    Divide,
    /// `x * (1.0f / 255.0f)`: torch on CUDA, whose `div_true_kernel_cuda`
    /// multiplies by the reciprocal when the divisor is a CPU scalar
    /// (`aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu`).
    MultiplyReciprocal,
}

/// Builds a table of the 256 normalised values (IEEE arithmetic in const
/// evaluation, the same as at run time).
const fn normalisation_table(reciprocal: bool) -> [f32; 256] {
    let inverse = 1.0f32 / 255.0f32;
    let mut table = [0.0f32; 256];
    let mut value = 0;
    while value < 256 {
        let x = value as f32;
        table[value] = if reciprocal { x * inverse } else { x / 255.0 };
        value += 1;
    }
    table
}

static DIVIDE_TABLE: [f32; 256] = normalisation_table(false);
static RECIPROCAL_TABLE: [f32; 256] = normalisation_table(true);

impl Normalization {
    /// The float each byte value becomes.
    pub fn table(self) -> &'static [f32; 256] {
        match self {
            Self::Divide => &DIVIDE_TABLE,
            Self::MultiplyReciprocal => &RECIPROCAL_TABLE,
        }
    }
}

/// Working memory for [`letterbox_tensor`]: the resize scratch
/// ([`LetterboxGeometry::resize_scratch`]) and one resized BGR row
/// ([`LetterboxGeometry::row_scratch_len`] bytes).
pub struct LetterboxScratch<'a> {
    pub resize: Scratch<'a>,
    pub row: &'a mut [u8],
}

/// The whole pipeline: letterbox a BGR `src_w x src_h` image (tightly packed
/// HWC u8, as `cv2.imread` returns) into `tensor`, the `(3, out_h, out_w)`
/// float32 RGB array (plane 0 = R) that `preprocess` hands the model (without
/// the batch dimension).
pub fn letterbox_tensor(
    src: &[u8],
    geometry: &LetterboxGeometry,
    normalization: Normalization,
    tensor: &mut [f32],
    scratch: &mut LetterboxScratch<'_>,
) -> Result<(), LetterboxError> {
    check_source(src, geometry)?;
    check_output(tensor.len(), geometry.tensor_len())?;
    let row_len = geometry.row_scratch_len();
    if geometry.needs_resize() && scratch.row.len() < row_len {
        return Err(LetterboxError::RowScratchTooSmall {
            needed: row_len,
            provided: scratch.row.len(),
        });
    }
    let table = normalization.table();
    let plane_len = geometry.out_w * geometry.out_h;
    let (red, rest) = tensor.split_at_mut(plane_len);
    let (green, blue) = rest.split_at_mut(plane_len);
    let row: &mut [u8] = if geometry.needs_resize() {
        &mut scratch.row[..row_len]
    } else {
        &mut []
    };
    let mut sink = TensorRows {
        planes: [red, green, blue],
        row,
        table,
        geometry,
    };
    if geometry.needs_resize() {
        resize_into::<3, _>(
            src,
            geometry.src_w,
            geometry.src_h,
            geometry.resized_w,
            geometry.resized_h,
            &mut scratch.resize,
            &mut sink,
        )?;
    } else {
        for (dy, row) in src.chunks_exact(row_len).enumerate() {
            sink.convert_row(dy, row);
        }
    }
    let pad = table[usize::from(PAD_VALUE)];
    for plane in &mut sink.planes {
        fill_border(plane, geometry, 1, pad);
    }
    Ok(())
}

/// Steps 1-2 only: the padded BGR u8 image `apply_image` returns
/// (`(out_h, out_w, 3)`, tightly packed), for engines that take u8 input.
pub fn letterbox_image(
    src: &[u8],
    geometry: &LetterboxGeometry,
    image: &mut [u8],
    scratch: &mut Scratch<'_>,
) -> Result<(), LetterboxError> {
    check_source(src, geometry)?;
    check_output(image.len(), geometry.image_len())?;
    let mut sink = WindowRows {
        image,
        stride: 3 * geometry.out_w,
        first_row: geometry.top,
        column_offset: 3 * geometry.left,
        row_len: 3 * geometry.resized_w,
    };
    if geometry.needs_resize() {
        resize_into::<3, _>(
            src,
            geometry.src_w,
            geometry.src_h,
            geometry.resized_w,
            geometry.resized_h,
            scratch,
            &mut sink,
        )?;
    } else {
        for (dy, row) in src.chunks_exact(3 * geometry.src_w).enumerate() {
            sink.row_mut(dy).copy_from_slice(row);
        }
    }
    fill_border(sink.image, geometry, 3, PAD_VALUE);
    Ok(())
}

fn check_source(src: &[u8], geometry: &LetterboxGeometry) -> Result<(), LetterboxError> {
    check_lengths(src.len(), geometry.src_w, geometry.src_h, 3)
        .map_err(|(expected, actual)| LetterboxError::SourceLength { expected, actual })
}

fn check_output(actual: usize, expected: usize) -> Result<(), LetterboxError> {
    if actual == expected {
        Ok(())
    } else {
        Err(LetterboxError::OutputLength { expected, actual })
    }
}

/// Writes `value` into the border of an `out_h x out_w` image of `samples`
/// interleaved values per pixel (3 for BGR u8, 1 for a tensor plane).
fn fill_border<T: Copy>(image: &mut [T], geometry: &LetterboxGeometry, samples: usize, value: T) {
    let stride = geometry.out_w * samples;
    let inner_rows = geometry.top..geometry.top + geometry.resized_h;
    let left_len = geometry.left * samples;
    let inner_end = (geometry.left + geometry.resized_w) * samples;
    for (y, row) in image.chunks_exact_mut(stride).enumerate() {
        if inner_rows.contains(&y) {
            row[..left_len].fill(value);
            row[inner_end..].fill(value);
        } else {
            row.fill(value);
        }
    }
}

/// Converts each finished BGR row into the three RGB planes.
struct TensorRows<'a, 'g> {
    planes: [&'a mut [f32]; 3],
    row: &'a mut [u8],
    table: &'static [f32; 256],
    geometry: &'g LetterboxGeometry,
}

impl TensorRows<'_, '_> {
    fn convert_row(&mut self, dy: usize, bgr: &[u8]) {
        let g = self.geometry;
        let start = (g.top + dy) * g.out_w + g.left;
        let [red, green, blue] = &mut self.planes;
        let red = &mut red[start..start + g.resized_w];
        let green = &mut green[start..start + g.resized_w];
        let blue = &mut blue[start..start + g.resized_w];
        let table = self.table;
        for ((pixel, (r, g)), b) in bgr
            .chunks_exact(3)
            .zip(red.iter_mut().zip(green.iter_mut()))
            .zip(blue.iter_mut())
        {
            *b = table[usize::from(pixel[0])];
            *g = table[usize::from(pixel[1])];
            *r = table[usize::from(pixel[2])];
        }
    }
}

impl RowSink for TensorRows<'_, '_> {
    fn row_mut(&mut self, _dy: usize) -> &mut [u8] {
        self.row
    }

    fn row_done(&mut self, dy: usize) {
        let row = core::mem::take(&mut self.row);
        self.convert_row(dy, row);
        self.row = row;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coco_640x480_keeps_its_size_and_pads_to_640_or_not() {
        let full = letterbox_geometry(640, 480, &LetterboxParams::yolo640(false)).unwrap();
        assert!(!full.needs_resize());
        assert_eq!(
            (full.top, full.bottom, full.left, full.right),
            (80, 80, 0, 0)
        );
        assert_eq!((full.out_w, full.out_h), (640, 640));
        let minimal = letterbox_geometry(640, 480, &LetterboxParams::yolo640(true)).unwrap();
        assert_eq!((minimal.out_w, minimal.out_h), (640, 480));
    }

    #[test]
    fn odd_padding_goes_to_the_bottom_and_right() {
        // 427 wide, 640 high: r = 1, dw = 213 -> 106.5 -> left 106, right 107.
        let g = letterbox_geometry(427, 640, &LetterboxParams::yolo640(false)).unwrap();
        assert_eq!((g.left, g.right, g.top, g.bottom), (106, 107, 0, 0));
        // auto: 213 mod 32 = 21 -> 10.5 -> 10 and 11.
        let g = letterbox_geometry(427, 640, &LetterboxParams::yolo640(true)).unwrap();
        assert_eq!((g.left, g.right, g.out_w), (10, 11, 448));
    }

    #[test]
    fn upscales_small_images_and_keeps_thin_ones_one_pixel() {
        let g = letterbox_geometry(500, 375, &LetterboxParams::yolo640(false)).unwrap();
        assert_eq!((g.resized_w, g.resized_h), (640, 480));
        assert_eq!(g.ratio, (1.28, 1.28));
        let thin = letterbox_geometry(100_000, 1, &LetterboxParams::yolo640(true)).unwrap();
        assert_eq!((thin.resized_w, thin.resized_h), (640, 1));
        assert_eq!((thin.top, thin.bottom, thin.out_h), (15, 16, 32));
    }

    #[test]
    fn scale_boxes_recomputes_the_gain_from_the_shapes() {
        let g = letterbox_geometry(500, 375, &LetterboxParams::yolo640(false)).unwrap();
        let s = g.scale_boxes();
        assert_eq!((s.pad_x, s.pad_y), (0, 80));
        assert_eq!((s.gain_x, s.gain_y), (1.28, 1.28));
    }

    #[test]
    fn tables_match_run_time_arithmetic() {
        let inverse = core::hint::black_box(1.0f32) / core::hint::black_box(255.0f32);
        let mut differ = 0;
        for value in 0..=255u8 {
            let x = core::hint::black_box(f32::from(value));
            let divided = x / core::hint::black_box(255.0f32);
            let multiplied = x * inverse;
            let (d, m) = (
                Normalization::Divide.table()[usize::from(value)],
                Normalization::MultiplyReciprocal.table()[usize::from(value)],
            );
            assert_eq!(d.to_bits(), divided.to_bits(), "{value}");
            assert_eq!(m.to_bits(), multiplied.to_bits(), "{value}");
            differ += usize::from(d != m);
        }
        assert_eq!(differ, 126);
    }
}
