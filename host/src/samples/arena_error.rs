//! Why the sample arena refused samples, and why an image of it could not be read back.

/// Bytes per GiB, for messages.
const GIB: f64 = (1u64 << 30) as f64;

#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// Refused before anything was allocated: an allocation failure would abort the process,
    /// and overcommitted memory would bring the OOM killer.
    #[error("{count} samples of {length} bytes need {:.1} GiB of memory{}", gib(*.count as f64 * *.length as f64), available_text(*.available))]
    TooLarge {
        count: usize,
        length: usize,
        /// `MemAvailable`, where it could be read.
        available: Option<u64>,
    },
    #[error("{count} samples of {length} bytes")]
    Allocation {
        count: usize,
        length: usize,
        source: std::collections::TryReserveError,
    },
    #[error("sample index {index} is outside the data set ({samples} samples)")]
    OutsideDataSet { index: usize, samples: usize },
}

/// A sample image (the loaded set handed to a plugin's process) that does not hold together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("not a sample image")]
    NotAnImage,
    #[error("sample image truncated at word {word}")]
    Truncated { word: usize },
    #[error("sample image table too large")]
    TableTooLarge,
    #[error("sample image of {bytes} bytes is shorter than its table says")]
    Short { bytes: usize },
    #[error("sample image slot {slot} points outside the image")]
    SlotOutside { slot: usize },
}

fn gib(bytes: f64) -> f64 {
    bytes / GIB
}

fn available_text(available: Option<u64>) -> String {
    available.map_or(String::new(), |free| {
        format!(" (this machine has {:.1} GiB available)", gib(free as f64))
    })
}
