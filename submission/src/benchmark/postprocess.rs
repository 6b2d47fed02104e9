//! A benchmark's post-processing of responses (`[postprocess]`), as its reference harness
//! does it after the model ran: the host applies it to each response, so that a plugin only
//! runs the model and the accuracy log records what the reference's SUT logs (ResNet-50: the
//! ArgMax class minus one, as float32; YOLO: its detections, 7 float32 each). Plain data, so
//! that it travels to an isolated plugin's process with the run description.

use std::cell::RefCell;

use mlperf_yolo_postprocess::Postprocessor;
use serde::{Deserialize, Serialize};

use super::accuracy::ClassDtype;

/// How a response's bytes become the bytes the accuracy log records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ResponseTransform {
    /// A class index, as a model's ArgMax output gives it (one little-endian integer of
    /// `input`), plus `offset`, written as one `logged` value: the reference's
    /// `PostProcessCommon(offset)` and `np.array([class], dtype).tobytes()`.
    Class {
        #[serde(default)]
        input: ClassInput,
        #[serde(default)]
        offset: i64,
        /// The element type logged (the accuracy script's `--dtype`).
        logged: ClassDtype,
    },
    /// YOLO11's raw output, float32 `(1, 84, anchors)`, as the reference harness gets it from
    /// ultralytics 8.4.190's `predict(conf=0.001)` on the CPU (`mlperf-yolo-postprocess`):
    /// class-aware NMS at IoU 0.7, at most 300, boxes scaled back to the original image and
    /// clipped; logged as the harness packs them, 7 float32 per detection (`qsl_idx`,
    /// ymin/h, xmin/w, ymax/h, xmax/w, score, COCO-91 id), nothing for none.
    Detections {
        /// The model's input `[height, width]`, which the boxes are relative to.
        #[serde(default = "yolo_input")]
        input: [u32; 2],
        /// Each sample's original `[height, width]`, by sample index: the host fills them
        /// from the data set's list (a definition gives none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        originals: Vec<[u32; 2]>,
    },
    /// 3D-UNet's sliding window over a KiTS19 volume, as the reference's SUT does it
    /// (`mlperf-kits19`): the host hands the plugin each 128³ window of the float32
    /// `(1, D, H, W)` sample (stride 64, in the reference's order) as a `(1, 128, 128, 128)`
    /// sample of its own, weights each `(3, 128, 128, 128)` answer by the Gaussian importance
    /// map, adds them up in window order, divides by the summed weights and logs the argmax
    /// per voxel, `D·H·W` uint8 in C order. Unlike the other kinds it changes what is issued,
    /// not only what is logged.
    #[serde(rename = "sliding-window")]
    SlidingWindow {},
}

fn yolo_input() -> [u32; 2] {
    [640, 640]
}

thread_local! {
    /// One per completing thread: NMS's working memory, kept from sample to sample.
    static YOLO: RefCell<Postprocessor> = RefCell::new(Postprocessor::default());
}

/// The integer type of a model's class output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassInput {
    /// ONNX ArgMax's type.
    #[default]
    Int64,
    Int32,
}

impl ClassInput {
    fn size(self) -> usize {
        match self {
            ClassInput::Int64 => 8,
            ClassInput::Int32 => 4,
        }
    }
}

impl ResponseTransform {
    /// The longest output of one response, so that a caller can keep it on the stack.
    pub const MAX_OUTPUT: usize = 8;

    /// Whether a response's bytes depend on its sample (its index and size), which the host
    /// then remembers for each issued sample by its response id.
    pub fn needs_sample(&self) -> bool {
        matches!(self, ResponseTransform::Detections { .. })
    }

    /// Whether the host issues each sample as windows of it (3D-UNet), answering the sample
    /// itself once every window is answered.
    pub fn is_sliding_window(&self) -> bool {
        matches!(self, ResponseTransform::SlidingWindow {})
    }

    /// Appends the logged bytes of the response `bytes` of sample `sample` to `out`:
    /// [`ResponseTransform::apply`] for a class, the detections' records for
    /// [`ResponseTransform::Detections`].
    pub fn apply_to_sample(
        &self,
        bytes: &[u8],
        sample: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let ResponseTransform::Detections { input, originals } = self else {
            let mut logged = [0u8; Self::MAX_OUTPUT];
            let length = self.apply(bytes, &mut logged)?;
            out.extend_from_slice(&logged[..length]);
            return Ok(());
        };
        let original = originals.get(sample).ok_or_else(|| {
            format!(
                "sample {sample}: no original size for it (the data set's list has {})",
                originals.len()
            )
        })?;
        let channels =
            mlperf_yolo_postprocess::BOX_CHANNELS + mlperf_yolo_postprocess::COCO_80_TO_91.len();
        let anchors = bytes.len() / (4 * channels);
        let size = |[height, width]: [u32; 2]| (height as usize, width as usize);
        YOLO.with_borrow_mut(|yolo| {
            yolo.process(bytes, anchors, size(*input), size(*original), sample as u64, out)
                .map(|_| ())
                .map_err(|e| {
                    format!("{e} (the model's raw output, float32 (1, {channels}, anchors), is what the benchmark's post-processing takes)")
                })
        })
    }

    /// Writes the logged bytes of the response `bytes` into `out`; returns how many. A class
    /// only: [`ResponseTransform::Detections`] needs its sample ([`Self::apply_to_sample`]).
    pub fn apply(&self, bytes: &[u8], out: &mut [u8; Self::MAX_OUTPUT]) -> Result<usize, String> {
        match *self {
            ResponseTransform::Detections { .. } => {
                Err("detections need their sample: the host applies them by sample".into())
            }
            ResponseTransform::SlidingWindow {} => Err(
                "a sliding window's answers are combined per sample, window by window, by the host"
                    .into(),
            ),
            ResponseTransform::Class {
                input,
                offset,
                logged,
            } => {
                if bytes.len() != input.size() {
                    return Err(format!(
                        "{} bytes, where the benchmark's post-processing takes one {:?} class (the model's ArgMax output, {} bytes): is the plugin's `output` the class?",
                        bytes.len(),
                        input,
                        input.size()
                    ));
                }
                let class = match input {
                    ClassInput::Int64 => i64::from_le_bytes(bytes.try_into().expect("8 bytes")),
                    ClassInput::Int32 => {
                        i32::from_le_bytes(bytes.try_into().expect("4 bytes")) as i64
                    }
                };
                let value = class.saturating_add(offset);
                Ok(match logged {
                    ClassDtype::Float32 => {
                        out[..4].copy_from_slice(&(value as f32).to_le_bytes());
                        4
                    }
                    ClassDtype::Int32 => {
                        let narrow = i32::try_from(value)
                            .map_err(|_| format!("class {value} does not fit an int32"))?;
                        out[..4].copy_from_slice(&narrow.to_le_bytes());
                        4
                    }
                    ClassDtype::Int64 => {
                        out.copy_from_slice(&value.to_le_bytes());
                        8
                    }
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnets_argmax_becomes_the_references_float32_class() {
        let transform = ResponseTransform::Class {
            input: ClassInput::Int64,
            offset: -1,
            logged: ClassDtype::Float32,
        };
        let mut out = [0u8; ResponseTransform::MAX_OUTPUT];
        let n = transform.apply(&66i64.to_le_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], &65f32.to_le_bytes());
        // Class 0 is ResNet-50 v1.5's background: -1 after the offset, as the reference logs it.
        let n = transform.apply(&0i64.to_le_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], &(-1f32).to_le_bytes());
        let error = transform.apply(&[0; 4004], &mut out).unwrap_err();
        assert!(error.contains("4004 bytes"), "{error}");
        let int32 = ResponseTransform::Class {
            input: ClassInput::Int32,
            offset: 0,
            logged: ClassDtype::Int64,
        };
        let n = int32.apply(&7i32.to_le_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], &7i64.to_le_bytes());
    }

    #[test]
    fn yolos_raw_output_becomes_the_harness_records_of_its_sample() {
        let transform = ResponseTransform::Detections {
            input: [640, 640],
            originals: vec![[480, 640], [320, 480]],
        };
        // (1, 84, 8400) float32: anchor 5 holds a 100x50 box at (320, 320) of class 2 (COCO
        // id 3) scoring 0.9; every other score is 0 (below conf 0.001).
        let anchors = 8400;
        let mut raw = vec![0f32; 84 * anchors];
        for (channel, value) in [320.0, 320.0, 100.0, 50.0].into_iter().enumerate() {
            raw[channel * anchors + 5] = value;
        }
        raw[(4 + 2) * anchors + 5] = 0.9;
        let bytes: Vec<u8> = raw.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = Vec::new();
        transform.apply_to_sample(&bytes, 1, &mut out).unwrap();
        let record: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(record.len(), 7);
        assert_eq!((record[0], record[5], record[6]), (1.0, 0.9, 3.0));
        // The 480x320 image sat in the middle 640x427 of the square (gain 4/3, 106 rows of
        // padding above): ymin = (295 - 106) / (427 / 320) / 320.
        let ymin = ((295.0f32 - 106.0) / (427.0f32 / 320.0)) / 320.0;
        assert_eq!(record[1], ymin);
        let mut none = Vec::new();
        transform
            .apply_to_sample(&vec![0; 84 * anchors * 4], 0, &mut none)
            .unwrap();
        assert!(none.is_empty(), "no detection: an empty payload");
        let error = transform
            .apply_to_sample(&bytes[..100], 0, &mut none)
            .unwrap_err();
        assert!(error.contains("float32 (1, 84, anchors)"), "{error}");
        let error = transform.apply_to_sample(&bytes, 2, &mut none).unwrap_err();
        assert!(error.contains("sample 2"), "{error}");
    }
}
