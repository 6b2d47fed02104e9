//! The run's sample library: a data set file read into the sample arena at load time, or a
//! library of samples that carry no data.

use std::path::Path;
use std::sync::Arc;

use mlperf_loadgen::testing::NullQsl;
use mlperf_loadgen::QuerySampleLibrary;

use super::plan::{PreprocessPlan, SamplePlan};
use super::SessionError;
use crate::benchmark::DatasetFormat;
use crate::plugin::Instance;
use crate::samples::{
    digest, split_first_axis, CnnDmFolder, CocoFolder, DatasetLibrary, ImagenetFolder,
    Kits19Folder, LibriSpeechFolder, NamedFiles, NamedInput, NpySource, Preprocessing,
    SampleSource, SquadFolder,
};
use mlperf_submission::datasets::{cnndm, coco, imagenet, kits19, librispeech, openorca, squad};

pub enum SampleLibrary {
    /// Indices only.
    Null(NullQsl),
    Dataset {
        library: DatasetLibrary,
        preprocessing: Option<Arc<Preprocessing>>,
        /// The inputs of a data set of one file per input.
        parts: Vec<NamedInput>,
        /// The data set's file(s) sha256, for the logs.
        sha256: String,
    },
}

impl SampleLibrary {
    /// Opens the plan's library; a data set's header is checked and its module loaded here.
    pub fn open(plan: &SamplePlan) -> Result<SampleLibrary, SessionError> {
        let (path, asked, preprocess, input_files, expected_sha256, format, count) = match plan {
            SamplePlan::Indices { total, performance } => {
                return Ok(SampleLibrary::Null(NullQsl {
                    total: *total,
                    performance: *performance,
                }))
            }
            SamplePlan::Dataset {
                path,
                performance,
                preprocess,
                input_files,
                expected_sha256,
                format,
                count,
                ..
            } => (
                path,
                *performance,
                preprocess,
                input_files,
                expected_sha256,
                *format,
                *count,
            ),
        };
        let mut preprocess = preprocess.as_ref();
        // Opened first: the source refuses what is not a regular file (a FIFO would block
        // the hash forever).
        let (source, parts): (Box<dyn SampleSource>, _) = if format == DatasetFormat::Imagenet {
            let folder = ImagenetFolder::open(path, count).map_err(SessionError::Dataset)?;
            if folder.layout() == imagenet::Layout::Preprocessed {
                // The reference's cache is its preprocessing's output already.
                preprocess = None;
            }
            (Box::new(folder), Vec::new())
        } else if format == DatasetFormat::Coco {
            let folder = CocoFolder::open(path, count).map_err(SessionError::Dataset)?;
            (Box::new(folder), Vec::new())
        } else if format == DatasetFormat::Kits19 {
            let folder = Kits19Folder::open(path, count).map_err(SessionError::Dataset)?;
            (Box::new(folder), Vec::new())
        } else if format == DatasetFormat::Squad {
            let folder = SquadFolder::open(path, count).map_err(SessionError::Dataset)?;
            (Box::new(folder), Vec::new())
        } else if format == DatasetFormat::LibriSpeech {
            let folder = LibriSpeechFolder::open(path, count).map_err(SessionError::Dataset)?;
            (Box::new(folder), Vec::new())
        } else if format.is_token_prompts() {
            let folder = CnnDmFolder::open(format, path, count).map_err(SessionError::Dataset)?;
            (Box::new(folder), Vec::new())
        } else if input_files.is_empty() {
            (open_source(path)?, Vec::new())
        } else {
            let files = NamedFiles::open(input_files).map_err(SessionError::Dataset)?;
            let parts = files.parts().to_vec();
            (Box::new(files), parts)
        };
        // A folder's list stands for it: hashing 50,000 images at every start would take
        // minutes.
        let hashed = match format {
            DatasetFormat::Npy => path.clone(),
            DatasetFormat::Imagenet => path.join(imagenet::VAL_MAP),
            DatasetFormat::Coco => path.join(coco::ANNOTATIONS),
            DatasetFormat::Kits19 => path.join(kits19::CASE_LIST),
            DatasetFormat::Squad => path.join(squad::DEV_SET),
            DatasetFormat::Cnndm => cnndm::evaluation_file(path),
            DatasetFormat::OpenOrca => openorca::evaluation_file(path),
            DatasetFormat::LibriSpeech => librispeech::manifest_file(path),
        };
        let sha256 = dataset_sha256(&hashed, input_files, expected_sha256.as_deref())?;
        let total = source.len();
        if total == 0 {
            return Err(SessionError::EmptyDataset(path.clone()));
        }
        let performance = asked.unwrap_or(total);
        if performance == 0 || performance > total {
            return Err(SessionError::PerformanceSamples {
                asked: performance,
                total,
            });
        }
        let mut library = DatasetLibrary::new(source, performance);
        let preprocessing = match preprocess {
            None => None,
            Some(PreprocessPlan {
                module,
                timed,
                limits,
            }) => {
                let preprocessing =
                    Preprocessing::load_in(module, *timed, crate::samples::sandbox_with(*limits))
                        .map_err(|source| SessionError::PreprocessModule {
                        module: module.clone(),
                        source: Box::new(source),
                    })?;
                let preprocessing = Arc::new(preprocessing);
                library
                    .preprocess_with(Arc::clone(&preprocessing))
                    .map_err(|source| SessionError::PreprocessDataset {
                        dataset: path.clone(),
                        source: Box::new(source),
                    })?;
                Some(preprocessing)
            }
        };
        Ok(SampleLibrary::Dataset {
            library,
            preprocessing,
            parts,
            sha256,
        })
    }

    /// The named inputs within each sample of the plan's data set (`input_names`), checked
    /// against its first sample; none when the plan names none.
    pub fn named_inputs(&mut self, plan: &SamplePlan) -> Result<Vec<NamedInput>, SessionError> {
        let (
            SamplePlan::Dataset {
                path, input_names, ..
            },
            SampleLibrary::Dataset { library, parts, .. },
        ) = (plan, self)
        else {
            return Ok(Vec::new());
        };
        if !parts.is_empty() {
            return Ok(parts.clone());
        }
        if input_names.is_empty() {
            return Ok(Vec::new());
        }
        let invalid = |message: String| SessionError::InputNames {
            dataset: path.clone(),
            message,
        };
        let (layout, bytes) = library.first_sample().map_err(|e| invalid(e.to_string()))?;
        split_first_axis(input_names, layout.dtype, &layout.shape, bytes).map_err(invalid)
    }

    /// Hands `sut` the loaded samples' memory, when there is data, and the preprocessing it
    /// runs on issued samples, when that is timed.
    pub fn attach(&self, sut: &mut Instance) {
        if let SampleLibrary::Dataset {
            library,
            preprocessing,
            ..
        } = self
        {
            let arena = library.arena();
            // A fresh instance (the testing run's after the ranging run's) replaces the old.
            arena.clear_mirrors();
            sut.backend_mut().read_samples_from(arena);
            if let Some(timed) = preprocessing.as_ref().filter(|p| p.is_timed()) {
                sut.preprocess_timed(Arc::clone(timed));
            }
        }
    }

    /// The data set's sha256 and what preprocessed the samples, for the logs.
    pub fn provenance(&self) -> Vec<(String, String)> {
        match self {
            SampleLibrary::Dataset {
                preprocessing,
                sha256,
                ..
            } => {
                let mut entries = vec![("dataset_sha256".to_string(), sha256.clone())];
                if let Some(preprocessing) = preprocessing {
                    entries.extend(preprocessing.provenance());
                }
                entries
            }
            SampleLibrary::Null(_) => Vec::new(),
        }
    }

    pub fn as_qsl(&mut self) -> &mut dyn QuerySampleLibrary {
        match self {
            SampleLibrary::Null(qsl) => qsl,
            SampleLibrary::Dataset { library, .. } => library,
        }
    }
}

/// The data set's sha256 (its files', in order), refused when it is not the pinned one.
fn dataset_sha256(
    path: &Path,
    input_files: &[(String, std::path::PathBuf)],
    expected: Option<&str>,
) -> Result<String, SessionError> {
    let files = if input_files.is_empty() {
        vec![("inputs".to_string(), path.to_path_buf())]
    } else {
        input_files.to_vec()
    };
    let found = digest::dataset_sha256(&files).map_err(|e| SessionError::DatasetHash {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    match expected {
        Some(expected) if expected != found => Err(SessionError::DatasetChanged {
            path: path.to_path_buf(),
            expected: expected.to_string(),
            found,
        }),
        _ => Ok(found),
    }
}

fn open_source(path: &Path) -> Result<Box<NpySource>, SessionError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => Ok(Box::new(
            NpySource::open(path).map_err(SessionError::Dataset)?,
        )),
        _ => Err(SessionError::DatasetFormat(path.to_path_buf())),
    }
}
