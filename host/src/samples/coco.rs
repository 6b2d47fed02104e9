//! COCO's "safe" subset as submitters have it (`coco_safe/`: the annotation file and
//! `val2017_safe/`), read sample by sample at load time in the annotation file's order, which
//! is the reference's `qsl_idx`. Each JPEG is decoded as `cv2.imread` decodes it
//! (libjpeg-turbo, through `mlperf-jpeg`), BGR uint8 `[H, W, 3]`, for the benchmark's
//! preprocessing module; its size must be the one the annotation file gives, which the
//! accuracy script scales the boxes back with.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_jpeg::Decoder;
use mlperf_plugin_api::sdk::DType;
use mlperf_submission::datasets::coco::{CocoList, ANNOTATIONS};

use super::arena::SampleLayout;
use super::imagenet::{from_dataset, read_file};
use super::source::{SampleSource, SourceError};

/// A COCO folder opened for reading.
pub struct CocoFolder {
    dir: PathBuf,
    list: Arc<CocoList>,
    count: usize,
    /// One per reader, as TurboJPEG handles are not shared.
    decoder: Decoder,
    file: Vec<u8>,
}

impl CocoFolder {
    /// Opens `dir`: its annotation file (the first `count` images only, when given) and a
    /// check that every one of those images is there, before any sample is read.
    pub fn open(dir: &Path, count: Option<usize>) -> Result<CocoFolder, SourceError> {
        let format = |message: String| SourceError::Format {
            path: dir.to_path_buf(),
            message,
        };
        if !dir.is_dir() {
            return Err(format(format!(
                "not a folder: a COCO data set is a folder holding {ANNOTATIONS} and its images"
            )));
        }
        let list = CocoList::read(dir).map_err(from_dataset)?;
        if let Some(count) = count {
            if count == 0 || count > list.len() {
                return Err(format(format!(
                    "{count} samples asked for; {} lists {}",
                    list.path.display(),
                    list.len()
                )));
            }
        }
        list.check_files(dir, count).map_err(from_dataset)?;
        let decoder = new_decoder(dir)?;
        let count = count.unwrap_or(list.len());
        tracing::info!(folder = %dir.display(), images = count, "opened a COCO folder");
        Ok(CocoFolder {
            dir: dir.to_path_buf(),
            list: Arc::new(list),
            count,
            decoder,
            file: Vec::new(),
        })
    }

    /// The annotation file's list.
    pub fn list(&self) -> &CocoList {
        &self.list
    }

    /// The file of sample `index`.
    pub fn file_of(&self, index: usize) -> Option<PathBuf> {
        let image = self.list.images[..self.count].get(index)?;
        Some(CocoList::file(&self.dir, image))
    }

    /// The list's file name of sample `index` (`000000000139.jpg`).
    pub fn name_of(&self, index: usize) -> Option<&str> {
        Some(
            self.list.images[..self.count]
                .get(index)?
                .file_name
                .as_str(),
        )
    }
}

fn new_decoder(dir: &Path) -> Result<Decoder, SourceError> {
    Decoder::new().map_err(|e| SourceError::Format {
        path: dir.to_path_buf(),
        message: format!(
            "cannot decode its JPEGs: {e} (install libjpeg-turbo's TurboJPEG library: `apt-get install libturbojpeg0` on Debian and Ubuntu)"
        ),
    })
}

impl SampleSource for CocoFolder {
    fn describe(&self) -> String {
        format!("{} (COCO)", self.dir.display())
    }

    fn len(&self) -> usize {
        self.count
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        let Some(path) = self.file_of(index) else {
            return Err(SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.len(),
            });
        };
        read_file(&path, &mut self.file)?;
        let image = self
            .decoder
            .decode_bgr(&self.file)
            .map_err(|e| SourceError::Format {
                path: path.clone(),
                message: format!("cannot decode it as cv2.imread does: {e}"),
            })?;
        let listed = &self.list.images[index];
        if (image.width as u32, image.height as u32) != (listed.width, listed.height) {
            return Err(SourceError::Format {
                path,
                message: format!(
                    "{}x{} pixels, where {ANNOTATIONS} gives image id {} as {}x{}: the accuracy script would scale its boxes to the wrong size",
                    image.width, image.height, listed.id, listed.width, listed.height
                ),
            });
        }
        out.clear();
        out.extend_from_slice(&image.data);
        Ok(SampleLayout {
            dtype: DType::U8,
            shape: vec![image.height as i64, image.width as i64, 3],
        })
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        Some(Box::new(CocoFolder {
            dir: self.dir.clone(),
            list: Arc::clone(&self.list),
            count: self.count,
            decoder: new_decoder(&self.dir).ok()?,
            file: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/coco/coco_safe")
    }

    #[test]
    fn images_decode_in_the_annotation_files_order_at_their_listed_size() {
        let mut folder = CocoFolder::open(&fixture(), None).unwrap();
        assert_eq!(folder.len(), 6);
        let mut out = Vec::new();
        let layout = folder.read(2, &mut out).unwrap();
        assert_eq!(folder.name_of(2), Some("000000900012.jpg"));
        assert_eq!((layout.dtype, layout.shape), (DType::U8, vec![400, 592, 3]));
        assert_eq!(out.len(), 400 * 592 * 3);
        let mut fork = SampleSource::fork(&folder).unwrap();
        let mut again = Vec::new();
        fork.read(2, &mut again).unwrap();
        assert_eq!(out, again);
        let two = CocoFolder::open(&fixture(), Some(2)).unwrap();
        assert_eq!(two.len(), 2);
        assert!(two.file_of(2).is_none());
        let error = CocoFolder::open(&fixture(), Some(7))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("7 samples asked for"), "{error}");
    }

    /// The whole path, decode (libjpeg-turbo in the host) and the letterbox (the WASM module,
    /// in the sandbox), against the tensors ultralytics 8.4.190's own predictor made from the
    /// same JPEGs for a static 640x640 ONNX export (letterbox_reference.py, with
    /// opencv-python 5.0.0.93 and torch 2.15.0 on the CPU): bit for bit, every image.
    #[test]
    fn images_letterbox_to_ultralytics_tensors_bit_for_bit() {
        use sha2::{Digest, Sha256};
        let module = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../wasm-preprocess/modules/yolo-letterbox/yolo-letterbox.wasm");
        let preprocessing = super::super::Preprocessing::load(&module, false).unwrap();
        let mut worker = preprocessing.take_worker().unwrap();
        let recorded = std::fs::read_to_string(fixture().join("../letterbox.sha256")).unwrap();
        let mut folder = CocoFolder::open(&fixture(), None).unwrap();
        let mut image = Vec::new();
        let mut differ = Vec::new();
        for index in 0..folder.len() {
            let name = folder.name_of(index).unwrap().to_string();
            let expected = recorded
                .lines()
                .find(|line| line.contains(&format!("  onnx-static/{name}  ")))
                .unwrap_or_else(|| panic!("{name} is not in letterbox.sha256"));
            let layout = folder.read(index, &mut image).unwrap();
            let out = worker
                .run(index, &image, &super::super::dims(&layout.shape))
                .unwrap();
            assert_eq!(out.shape.dims(), [3, 640, 640]);
            let digest: String = Sha256::digest(out.data)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            if !expected.starts_with(&digest) {
                differ.push(name);
            }
        }
        assert!(differ.is_empty(), "differ from ultralytics': {differ:?}");
    }
}
