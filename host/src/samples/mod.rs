//! The host's sample library: data sets read into a sample arena that backends read in place.

mod arena;
mod dataset_library;
mod named_files;
mod npy;
#[cfg(test)]
mod npy_mutations;
mod preprocess;
mod source;

pub use arena::{
    AlignedBuffer, ForeignBytes, LoadedSamples, SampleArena, SampleLayout, SampleView, SAMPLE_ALIGN,
};
pub use dataset_library::DatasetLibrary;
pub use named_files::{InputPart, NamedFiles};
pub use npy::{write_npy, NpySource};
pub use preprocess::Preprocessing;
pub(crate) use preprocess::{check_same, dims};
pub use source::{SampleSource, SourceError};
