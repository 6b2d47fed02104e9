//! Native pieces of the MLPerf 3d-unet (KiTS19) benchmark, written so that
//! their results can be checked bit-for-bit against the Python reference
//! (mlcommons/inference `vision/medical_imaging/3d-unet-kits19`).
//!
//! * [`nifti`]: NIfTI-1 reader for the preprocessed `nifti/<case>/*.nii.gz`
//!   files, which avoids having to unpickle `preprocessed_data/<case>.pkl`.
//! * [`accuracy`]: the DICE scorer of `accuracy_kits.py`, including its
//!   summary CSV and its printed `Accuracy:` line.
//! * [`window`]: the sliding-window combiner (patch positions, Gaussian
//!   importance map, accumulation, argmax) of `base_SUT.py`.
//! * [`preprocessed_list`]: the sample order and image shapes from
//!   `preprocessed_files.pkl`, through [`pickle`], a small unpickler that
//!   never runs code.

pub mod accuracy;
pub mod nifti;
pub mod pickle;
pub mod preprocessed_list;
pub mod window;
