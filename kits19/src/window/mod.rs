//! The reference SUT's sliding-window inference (`base_SUT.py`
//! `infer_single_query` with `inference_utils.py`), minus the model call:
//! where the 128³ patches go, how each patch result is weighted, summed and
//! normalised, and how the label volume is picked. See SLIDING-WINDOW.md in
//! the fixture for the reference behaviour this follows.

mod combine;
mod gaussian;
mod patches;

pub use combine::{argmax_first, Combiner, CLASSES};
pub use gaussian::importance_map;
pub use patches::{axis_starts, extract_patch, patch_origins, OVERLAP, ROI};
