//! Bit-exact post-processing of raw YOLO11 detection output, as the MLPerf Inference YOLO
//! reference harness (`vision/classification_and_detection/yolo/yolo_loadgen.py`) gets it
//! from ultralytics 8.4.190 `YOLO(model).predict(img, conf=0.001)` on CPU with torchvision:
//!
//! 1. [`non_max_suppression`]: candidate filter, `xywh2xyxy`, best class, top-`max_nms` cut,
//!    class-aware NMS (class offset added to the boxes), `max_det` cut.
//! 2. [`scale_boxes`]: letterbox coordinates back to the original image, then clip.
//! 3. [`mlperf_records`]: the harness's `struct.pack("7f", ...)` records.
//!
//! [`postprocess`] chains the three on the model's raw little-endian output bytes.
//!
//! Every step runs in the same floating-point type and order as the reference (float32
//! tensors, comparisons against Python floats as torch/torchvision do them); the crate's
//! tests compare the payload bytes with ones recorded from the real Python stack.
#![forbid(unsafe_code)]

mod stdsort;

/// YOLO's 80 contiguous class indices to the 91-id COCO category ids, as the harness's
/// `COCO_80_TO_91` table gives them.
pub const COCO_80_TO_91: [u32; 80] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28,
    31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55,
    56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84,
    85, 86, 87, 88, 89, 90,
];

/// Number of box channels (cx, cy, w, h) before the class scores.
pub const BOX_CHANNELS: usize = 4;

/// One detection: corners, score and 0-based class index (YOLO's 80-class numbering).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    pub x1: f32,
    pub y1: f32,
    pub x2: f32,
    pub y2: f32,
    pub score: f32,
    pub class: u32,
}

/// NMS settings. [`Default`] gives what the harness's `predict(conf=0.001)` runs with.
///
/// `conf` and `iou` are the Python floats ultralytics passes; they are applied the way torch and
/// torchvision compare them (see the crate README).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NmsParams {
    /// Confidence threshold; candidates need `score > conf` (strict).
    pub conf: f64,
    /// IoU threshold; a box is suppressed when its IoU with a kept box is `> iou`.
    pub iou: f64,
    /// Most detections returned.
    pub max_det: usize,
    /// Most candidates passed to NMS (top by score).
    pub max_nms: usize,
    /// Per-class coordinate offset for class-aware NMS.
    pub max_wh: f32,
}

impl Default for NmsParams {
    fn default() -> Self {
        Self {
            conf: 0.001,
            iou: 0.7,
            max_det: 300,
            max_nms: 30000,
            max_wh: 7680.0,
        }
    }
}

/// Reusable buffers for [`non_max_suppression`], so a hot path allocates nothing once warm.
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    cand: Vec<Detection>,
    kept: Vec<Detection>,
    order: Vec<(f32, u32)>,
    offset: Vec<[f32; 4]>,
    areas: Vec<f32>,
    suppressed: Vec<bool>,
}

impl Scratch {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Errors of [`postprocess`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    #[error(
        "raw output has {got} bytes, expected {expected} ({channels} channels x {anchors} anchors x 4 bytes)"
    )]
    BadLength {
        got: usize,
        expected: usize,
        channels: usize,
        anchors: usize,
    },
    #[error("raw output slice has {got} floats, expected {expected}")]
    BadFloatCount { got: usize, expected: usize },
    #[error("image shape {0}x{1} has a zero side")]
    EmptyShape(usize, usize),
}

/// `(score, row)` pairs of `cand` in the order torch's CPU `sort(descending=True)` gives:
/// unstable (`stable=False`, libstdc++ `std::sort`) for the `max_nms` cut's `argsort`, or
/// stable for torchvision's NMS, which sorts with `stable=true`.
fn torch_sort_desc(cand: &[Detection], order: &mut Vec<(f32, u32)>, stable: bool) {
    order.clear();
    order.extend(cand.iter().enumerate().map(|(i, d)| (d.score, i as u32)));
    if stable {
        order.sort_by(stdsort::cmp_desc);
    } else {
        stdsort::sort_desc(order);
    }
}

/// ultralytics `non_max_suppression` for one image, on the raw `(4 + classes, anchors)`
/// float32 output (row-major: channel `c` of anchor `a` at `raw[c * anchors + a]`).
///
/// Clears `out` and fills it with at most `params.max_det` detections in letterboxed
/// coordinates, in NMS output order (descending score).
pub fn non_max_suppression_into(
    raw: &[f32],
    classes: usize,
    anchors: usize,
    params: &NmsParams,
    scratch: &mut Scratch,
    out: &mut Vec<Detection>,
) -> Result<(), Error> {
    out.clear();
    let expected = (BOX_CHANNELS + classes) * anchors;
    if raw.len() != expected {
        return Err(Error::BadFloatCount {
            got: raw.len(),
            expected,
        });
    }
    // torch compares a float32 tensor with a Python float after casting the scalar to float32.
    let conf = params.conf as f32;
    let ch = |c: usize| &raw[c * anchors..(c + 1) * anchors];
    let (cx, cy, w, h) = (ch(0), ch(1), ch(2), ch(3));

    // Candidates: best class (first maximum), score > conf, xywh -> xyxy in float32.
    let cand = &mut scratch.cand;
    cand.clear();
    for a in 0..anchors {
        let mut best = f32::NEG_INFINITY;
        let mut best_k = 0usize;
        let mut nan = false;
        for k in 0..classes {
            let s = raw[(BOX_CHANNELS + k) * anchors + a];
            if s.is_nan() {
                nan = true;
                break;
            }
            if s > best {
                best = s;
                best_k = k;
            }
        }
        // `amax` propagates NaN and `NaN > conf` is false; `best` is not NaN past this point.
        if nan || classes == 0 || best <= conf {
            continue;
        }
        let (hw, hh) = (w[a] / 2.0, h[a] / 2.0);
        cand.push(Detection {
            x1: cx[a] - hw,
            y1: cy[a] - hh,
            x2: cx[a] + hw,
            y2: cy[a] + hh,
            score: best,
            class: best_k as u32,
        });
    }
    if cand.is_empty() {
        return Ok(());
    }

    // Top-max_nms cut: `x[x[:, 4].argsort(descending=True)[:max_nms]]`, rows in that order.
    let order = &mut scratch.order;
    if cand.len() > params.max_nms {
        torch_sort_desc(cand, order, false);
        let kept = &mut scratch.kept;
        kept.clear();
        kept.extend(
            order[..params.max_nms]
                .iter()
                .map(|&(_, i)| cand[i as usize]),
        );
        std::mem::swap(cand, kept);
    }

    // Class-aware boxes: the float32 class index times max_wh, added in float32.
    let offset = &mut scratch.offset;
    offset.clear();
    offset.extend(cand.iter().map(|d| {
        let c = d.class as f32 * params.max_wh;
        [d.x1 + c, d.y1 + c, d.x2 + c, d.y2 + c]
    }));
    let areas = &mut scratch.areas;
    areas.clear();
    areas.extend(offset.iter().map(|b| (b[2] - b[0]) * (b[3] - b[1])));

    // torchvision CPU nms: visit by descending score, keep, suppress later ones with IoU > thr.
    torch_sort_desc(cand, order, true);
    let suppressed = &mut scratch.suppressed;
    suppressed.clear();
    suppressed.resize(cand.len(), false);
    for oi in 0..order.len() {
        if out.len() >= params.max_det {
            break;
        }
        let i = order[oi].1 as usize;
        if suppressed[i] {
            continue;
        }
        out.push(cand[i]);
        let bi = offset[i];
        let ai = areas[i];
        for &(_, j) in &order[oi + 1..] {
            let j = j as usize;
            if suppressed[j] {
                continue;
            }
            let bj = offset[j];
            let xx1 = bi[0].max(bj[0]);
            let yy1 = bi[1].max(bj[1]);
            let xx2 = bi[2].min(bj[2]);
            let yy2 = bi[3].min(bj[3]);
            let iw = max0(xx2 - xx1);
            let ih = max0(yy2 - yy1);
            let inter = iw * ih;
            let ovr = inter / (ai + areas[j] - inter);
            // float32 IoU against the double threshold, as `ovr > iou_threshold` in C++.
            if f64::from(ovr) > params.iou {
                suppressed[j] = true;
            }
        }
    }
    Ok(())
}

/// `std::max(0, v)` as C++ evaluates it: returns `0` unless `0 < v` (NaN gives 0).
#[inline]
fn max0(v: f32) -> f32 {
    if 0.0 < v {
        v
    } else {
        0.0
    }
}

/// Allocating convenience wrapper around [`non_max_suppression_into`].
pub fn non_max_suppression(
    raw: &[f32],
    classes: usize,
    anchors: usize,
    params: &NmsParams,
    scratch: &mut Scratch,
) -> Result<Vec<Detection>, Error> {
    let mut out = Vec::new();
    non_max_suppression_into(raw, classes, anchors, params, scratch, &mut out)?;
    Ok(out)
}

/// Python's `round()` of a float to an integer: nearest, ties to even.
fn py_round(v: f64) -> f64 {
    v.round_ties_even()
}

/// ultralytics 8.4.190 `scale_boxes(img1_shape, boxes, img0_shape)` with `ratio_pad=None`,
/// followed by its `clip_boxes`. `letterboxed` is `(h1, w1)`, the network input's size;
/// `original` is `(h0, w0)`.
pub fn scale_boxes(dets: &mut [Detection], letterboxed: (usize, usize), original: (usize, usize)) {
    let (h1, w1) = (letterboxed.0 as f64, letterboxed.1 as f64);
    let (h0, w0) = (original.0 as f64, original.1 as f64);
    // Gain and padding in double precision, as Python computes them.
    let gain = (h1 / h0).min(w1 / w0);
    let new_h = py_round(h0 * gain).max(1.0);
    let new_w = py_round(w0 * gain).max(1.0);
    let (gain_y, gain_x) = (new_h / h0, new_w / w0);
    let pad_x = py_round((w1 - new_w) / 2.0 - 0.1);
    let pad_y = py_round((h1 - new_h) / 2.0 - 0.1);
    // Tensor-scalar ops on a float32 tensor: the Python scalar is cast to float32 first.
    let (pad_x, pad_y) = (pad_x as f32, pad_y as f32);
    let (gain_x, gain_y) = (gain_x as f32, gain_y as f32);
    let (cw, ch) = (original.1 as f32, original.0 as f32);
    for d in dets {
        d.x1 = clamp((d.x1 - pad_x) / gain_x, cw);
        d.y1 = clamp((d.y1 - pad_y) / gain_y, ch);
        d.x2 = clamp((d.x2 - pad_x) / gain_x, cw);
        d.y2 = clamp((d.y2 - pad_y) / gain_y, ch);
    }
}

/// torch `clamp_(0, hi)` on float32: `min(max(v, 0), hi)`, NaN stays NaN.
#[inline]
fn clamp(v: f32, hi: f32) -> f32 {
    if v.is_nan() {
        return v;
    }
    let v = if v < 0.0 { 0.0 } else { v };
    if v > hi {
        hi
    } else {
        v
    }
}

/// Appends the harness's record for each detection to `out`: seven native (little-endian)
/// float32s `qsl_idx, y1/h0, x1/w0, y2/h0, x2/w0, score, COCO_80_TO_91[class]`.
/// `original` is `(h0, w0)`. Detections are expected in original-image coordinates
/// (after [`scale_boxes`]).
///
/// # Panics
/// If a detection's class is 80 or more (the harness's table lookup would fail too).
pub fn mlperf_records(
    qsl_idx: u64,
    dets: &[Detection],
    original: (usize, usize),
    out: &mut Vec<u8>,
) {
    // `float(qitem.index)` is a double, which `struct.pack("f")` rounds to float32.
    let idx = (qsl_idx as f64) as f32;
    // numpy 2: float32 scalar / Python int stays float32 (the int is cast to float32).
    let (h, w) = (original.0 as f32, original.1 as f32);
    out.reserve(dets.len() * 28);
    for d in dets {
        let cat = COCO_80_TO_91[d.class as usize] as f32;
        for v in [idx, d.y1 / h, d.x1 / w, d.y2 / h, d.x2 / w, d.score, cat] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// The whole pipeline with its buffers, for reuse across samples.
#[derive(Debug, Clone)]
pub struct Postprocessor {
    pub params: NmsParams,
    /// Number of class channels (80 for COCO YOLO11).
    pub classes: usize,
    scratch: Scratch,
    raw: Vec<f32>,
    dets: Vec<Detection>,
}

impl Default for Postprocessor {
    fn default() -> Self {
        Self::new(NmsParams::default(), COCO_80_TO_91.len())
    }
}

impl Postprocessor {
    pub fn new(params: NmsParams, classes: usize) -> Self {
        Self {
            params,
            classes,
            scratch: Scratch::new(),
            raw: Vec::new(),
            dets: Vec::new(),
        }
    }

    /// Runs NMS, [`scale_boxes`] from `letterboxed` `(h1, w1)` to `original` `(h0, w0)`, and
    /// appends the [`mlperf_records`] to `out`, on the model's raw output bytes: float32
    /// little-endian, shape `(1, 4 + classes, anchors)`. Returns the detections (also in
    /// original-image coordinates); their number is the number of records appended.
    pub fn process(
        &mut self,
        raw_le_bytes: &[u8],
        anchors: usize,
        letterboxed: (usize, usize),
        original: (usize, usize),
        qsl_idx: u64,
        out: &mut Vec<u8>,
    ) -> Result<&[Detection], Error> {
        let channels = BOX_CHANNELS + self.classes;
        let expected = channels * anchors * 4;
        if raw_le_bytes.len() != expected {
            return Err(Error::BadLength {
                got: raw_le_bytes.len(),
                expected,
                channels,
                anchors,
            });
        }
        for (h, w) in [letterboxed, original] {
            if h == 0 || w == 0 {
                return Err(Error::EmptyShape(h, w));
            }
        }
        self.raw.clear();
        self.raw.extend(
            raw_le_bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        non_max_suppression_into(
            &self.raw,
            self.classes,
            anchors,
            &self.params,
            &mut self.scratch,
            &mut self.dets,
        )?;
        scale_boxes(&mut self.dets, letterboxed, original);
        mlperf_records(qsl_idx, &self.dets, original, out);
        Ok(&self.dets)
    }
}

/// One-shot convenience: the harness payload for one sample with the default parameters and 80
/// classes (see [`Postprocessor::process`]; use a [`Postprocessor`] to reuse buffers).
pub fn postprocess(
    raw_le_bytes: &[u8],
    anchors: usize,
    letterboxed: (usize, usize),
    original: (usize, usize),
    qsl_idx: u64,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    Postprocessor::default().process(
        raw_le_bytes,
        anchors,
        letterboxed,
        original,
        qsl_idx,
        &mut out,
    )?;
    Ok(out)
}
