//! The DICE scorer of `accuracy_kits.py`, native.
//!
//! The reference turns each log entry back into a volume, writes it as
//! `prediction.nii.gz`, reloads it, one-hot encodes prediction and ground
//! truth in float64 and sums. All of that reduces to integer voxel counts per
//! class, so this module counts directly; only the final divisions, the mean
//! over cases (numpy's pairwise summation) and the text formatting need care
//! to land on the same bits and characters.

mod dice;
mod error;
mod log;
mod pyfmt;
mod pysum;
mod score;
mod summary;

pub use dice::{count_classes, dice, ClassCounts, SMOOTH_DR, SMOOTH_NR};
pub use error::AccuracyError;
pub use log::{assign_entries, decode_hex, parse_accuracy_log, read_accuracy_log, LogEntry};
pub use pyfmt::python_repr;
pub use pysum::numpy_sum;
pub use score::{score_log, CaseSet};
pub use summary::{CaseScore, Summary};
