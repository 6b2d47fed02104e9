//! ImageNet as submitters have it (`val_map.txt` and its images in one folder), read sample
//! by sample at load time in the list's order, which is the reference's `qsl_idx`:
//!
//! - raw JPEGs are decoded as `cv2.imread` decodes them (libjpeg-turbo, through
//!   `mlperf-jpeg`), BGR uint8 `[H, W, 3]`, for the benchmark's preprocessing module;
//! - the reference's preprocessed cache (`<image>.JPEG.npy`) is read as it is, float32
//!   `[3, 224, 224]`, each file's header checked when the folder is opened.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_jpeg::Decoder;
use mlperf_plugin_api::sdk::DType;
use mlperf_submission::datasets::imagenet::{Layout, ValMap, VAL_MAP};
use mlperf_submission::datasets::DatasetError;
use mlperf_submission::npy::{Element, NpyFile};

use super::arena::SampleLayout;
use super::source::{SampleSource, SourceError};

/// The shape of a preprocessed sample: the reference's NCHW crop without the batch axis.
pub const PREPROCESSED_SHAPE: [i64; 3] = [3, 224, 224];

/// An ImageNet folder opened for reading.
pub struct ImagenetFolder {
    dir: PathBuf,
    list: Arc<ValMap>,
    layout: Layout,
    /// Raw layout only: one per reader, as TurboJPEG handles are not shared.
    decoder: Option<Decoder>,
    file: Vec<u8>,
}

impl ImagenetFolder {
    /// Opens `dir`: its list (the first `count` lines only, when given), the layout its
    /// files are in, and checks that every listed image is there (and, for the cache, of the
    /// reference's type and shape) before any sample is read.
    pub fn open(dir: &Path, count: Option<usize>) -> Result<ImagenetFolder, SourceError> {
        let format = |message: String| SourceError::Format {
            path: dir.to_path_buf(),
            message,
        };
        if !dir.is_dir() {
            return Err(format(format!(
                "not a folder: an ImageNet data set is a folder holding {VAL_MAP} and its images"
            )));
        }
        let mut list = ValMap::read(&dir.join(VAL_MAP)).map_err(from_dataset)?;
        if let Some(count) = count {
            if count == 0 || count > list.len() {
                return Err(format(format!(
                    "{count} samples asked for; {} lists {}",
                    list.path.display(),
                    list.len()
                )));
            }
            list.truncate(count);
        }
        let layout = Layout::detect(dir, &list);
        layout
            .check_files(dir, &list, count.is_some())
            .map_err(from_dataset)?;
        let decoder = match layout {
            Layout::Raw => Some(Decoder::new().map_err(|e| {
                format(format!(
                    "cannot decode its JPEGs: {e} (install libjpeg-turbo's TurboJPEG library: `apt-get install libturbojpeg0` on Debian and Ubuntu)"
                ))
            })?),
            Layout::Preprocessed => {
                for entry in &list.entries {
                    check_preprocessed(&layout.file(dir, entry))?;
                }
                None
            }
        };
        tracing::info!(
            folder = %dir.display(),
            images = list.len(),
            layout = layout.name(),
            "opened an ImageNet folder"
        );
        Ok(ImagenetFolder {
            dir: dir.to_path_buf(),
            list: Arc::new(list),
            layout,
            decoder,
            file: Vec::new(),
        })
    }

    /// The layout the folder's files are in.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Another reader of the same folder (for a thread of its own).
    pub fn fork(&self) -> Result<ImagenetFolder, SourceError> {
        let decoder = match self.layout {
            Layout::Raw => Some(Decoder::new().map_err(|e| SourceError::Format {
                path: self.dir.clone(),
                message: e.to_string(),
            })?),
            Layout::Preprocessed => None,
        };
        Ok(ImagenetFolder {
            dir: self.dir.clone(),
            list: Arc::clone(&self.list),
            layout: self.layout,
            decoder,
            file: Vec::new(),
        })
    }

    /// The file that holds sample `index`.
    pub fn file_of(&self, index: usize) -> Option<PathBuf> {
        let entry = self.list.entries.get(index)?;
        Some(self.layout.file(&self.dir, entry))
    }

    /// The label the list gives sample `index`.
    pub fn label_of(&self, index: usize) -> Option<u32> {
        Some(self.list.entries.get(index)?.label)
    }

    /// The list's file name of sample `index` (`ILSVRC2012_val_00000001.JPEG`).
    pub fn name_of(&self, index: usize) -> Option<&str> {
        Some(self.list.entries.get(index)?.name.as_str())
    }
}

impl SampleSource for ImagenetFolder {
    fn describe(&self) -> String {
        format!("{} (ImageNet, {})", self.dir.display(), self.layout.name())
    }

    fn len(&self) -> usize {
        self.list.len()
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        let Some(path) = self.file_of(index) else {
            return Err(SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.len(),
            });
        };
        match &mut self.decoder {
            None => {
                let mut file = NpyFile::open(&path)?;
                file.read_all(out)?;
                Ok(SampleLayout {
                    dtype: DType::F32,
                    shape: PREPROCESSED_SHAPE.to_vec(),
                })
            }
            Some(decoder) => {
                read_file(&path, &mut self.file)?;
                let image = decoder
                    .decode_bgr(&self.file)
                    .map_err(|e| SourceError::Format {
                        path: path.clone(),
                        message: format!("cannot decode it as cv2.imread does: {e}"),
                    })?;
                out.clear();
                out.extend_from_slice(&image.data);
                Ok(SampleLayout {
                    dtype: DType::U8,
                    shape: vec![image.height as i64, image.width as i64, 3],
                })
            }
        }
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        Some(Box::new(ImagenetFolder::fork(self).ok()?))
    }
}

/// A cache file is the reference's: float32, `[3, 224, 224]`, C order.
fn check_preprocessed(path: &Path) -> Result<(), SourceError> {
    let file = NpyFile::open(path)?;
    let shape = file.array_shape();
    if file.layout().element != Element::F32 || shape != PREPROCESSED_SHAPE {
        return Err(SourceError::Format {
            path: path.to_path_buf(),
            message: format!(
                "{:?} {shape:?}: not a preprocessed image of the reference's cache (float32 {PREPROCESSED_SHAPE:?}, NCHW); make the cache again with its NCHW layout",
                file.layout().element
            ),
        });
    }
    Ok(())
}

pub(super) fn read_file(path: &Path, into: &mut Vec<u8>) -> Result<(), SourceError> {
    use std::io::Read;
    into.clear();
    let mut file = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    file.read_to_end(into)
        .map_err(|e| SourceError::io(path, e))?;
    Ok(())
}

pub(super) fn from_dataset(error: DatasetError) -> SourceError {
    match error {
        DatasetError::File { path, message } => SourceError::Format { path, message },
        DatasetError::Line {
            path,
            line,
            message,
        } => SourceError::Format {
            message: format!("line {line}: {message}"),
            path,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/imagenet")
    }

    #[test]
    fn the_cache_layout_reads_the_references_tensors_in_list_order() {
        let mut folder = ImagenetFolder::open(&fixture().join("preprocessed"), None).unwrap();
        assert_eq!(folder.layout(), Layout::Preprocessed);
        assert_eq!(folder.len(), 13);
        let mut out = Vec::new();
        let layout = folder.read(12, &mut out).unwrap();
        assert_eq!(
            (layout.dtype, layout.shape),
            (DType::F32, vec![3, 224, 224])
        );
        assert_eq!(out.len(), 3 * 224 * 224 * 4);
        assert_eq!(folder.name_of(12), Some("ILSVRC2012_val_00000013.JPEG"));
    }

    #[test]
    fn raw_images_decode_to_bgr_of_their_own_size() {
        let mut folder = ImagenetFolder::open(&fixture().join("raw"), Some(2)).unwrap();
        assert_eq!(folder.layout(), Layout::Raw);
        let mut out = Vec::new();
        let layout = folder.read(1, &mut out).unwrap();
        assert_eq!((layout.dtype, layout.shape), (DType::U8, vec![517, 333, 3]));
        assert_eq!(out.len(), 517 * 333 * 3);
        let error = ImagenetFolder::open(&fixture().join("raw"), Some(99))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("99 samples asked for"), "{error}");
    }

    /// The whole raw path, decode (libjpeg-turbo in the host) and `pre_process_vgg` (the WASM
    /// module, in the sandbox), against the tensors the reference's own imagenet.py and
    /// dataset.py wrote for the same JPEGs with opencv-python-headless 5.0.0.93: bit for bit,
    /// on every image of the fixture (every resize path, grayscale, CMYK, progressive, EXIF).
    #[test]
    fn raw_images_preprocess_to_the_references_tensors_bit_for_bit() {
        let module = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../wasm-preprocess/modules/imagenet-vgg/imagenet-vgg.wasm");
        let preprocessing = super::super::Preprocessing::load(&module, false).unwrap();
        let mut worker = preprocessing.take_worker().unwrap();
        let mut raw = ImagenetFolder::open(&fixture().join("raw"), None).unwrap();
        let mut cache = ImagenetFolder::open(&fixture().join("preprocessed"), None).unwrap();
        let (mut image, mut expected) = (Vec::new(), Vec::new());
        let mut differ = Vec::new();
        for index in 0..raw.len() {
            let layout = raw.read(index, &mut image).unwrap();
            cache.read(index, &mut expected).unwrap();
            let out = worker
                .run(index, &image, &super::super::dims(&layout.shape))
                .unwrap();
            assert_eq!(out.shape.dims(), [3, 224, 224]);
            if out.data != expected.as_slice() {
                let first = out
                    .data
                    .chunks_exact(4)
                    .zip(expected.chunks_exact(4))
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                differ.push(format!(
                    "{}: first difference at float {first}",
                    raw.name_of(index).unwrap()
                ));
            }
        }
        assert!(differ.is_empty(), "differ from the reference: {differ:?}");
    }

    #[test]
    fn a_cache_file_of_another_shape_is_named_before_a_run() {
        let dir = std::env::temp_dir().join(format!("imagenet-shape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(VAL_MAP), "a.JPEG 3\n").unwrap();
        super::super::write_npy(
            &dir.join("a.JPEG.npy"),
            "<f4",
            1,
            &[224, 224, 3],
            &vec![0; 224 * 224 * 12],
        )
        .unwrap();
        let error = ImagenetFolder::open(&dir, None).err().unwrap().to_string();
        assert!(
            error.contains("a.JPEG.npy") && error.contains("NCHW"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
