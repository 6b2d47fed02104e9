//! The host's sample library: data sets read into a sample arena that backends read in place.

mod arena;
mod arena_error;
mod cnndm;
mod coco;
mod dataset_library;
mod export;
mod imagenet;
mod kits19;
mod librispeech;
mod named_files;
mod named_inputs;
mod npy;
mod preprocess;
mod source;
mod squad;

pub use arena::{
    AlignedBuffer, ArenaError, ForeignBytes, HandedSample, ImageError, LoadedSamples, SampleArena,
    SampleLayout, SampleView, SAMPLE_ALIGN,
};
pub use cnndm::CnnDmFolder;
pub use coco::CocoFolder;
pub use dataset_library::DatasetLibrary;
pub use export::{
    write_cnndm_token_ids, write_coco_tensors, write_each_sample, write_imagenet_cache,
    write_squad_features, ExportError,
};
pub use imagenet::{ImagenetFolder, PREPROCESSED_SHAPE};
pub use kits19::Kits19Folder;
pub use librispeech::LibriSpeechFolder;
pub use mlperf_submission::digest;
pub use named_files::NamedFiles;
pub use named_inputs::{split_first_axis, NamedInput};
pub use npy::{write_npy, NpySource};
pub(crate) use preprocess::{check_same, dims};
pub use preprocess::{sandbox_with, LoadError, Preprocessing};
pub use source::{SampleSource, SourceError};
pub use squad::SquadFolder;
