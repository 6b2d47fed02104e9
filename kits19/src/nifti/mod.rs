//! NIfTI-1 single-file reader (`.nii` and `.nii.gz`).
//!
//! Scope is what the KiTS19 files (raw and preprocessed) and nibabel-written
//! files need: the `n+1` magic, either byte order, the plain integer and
//! float datatypes, `vox_offset`, and `scl_slope`/`scl_inter` applied the way
//! nibabel's `get_fdata()` applies them.
//!
//! Voxels are returned in C order over the numpy shape `(dim[1], dim[2], …)`,
//! i.e. the same bytes as `np.ascontiguousarray(img.get_fdata())` would give,
//! which is the order the reference pickles, the SUT's response and the
//! accuracy log all use. The file itself stores them the other way round
//! (first axis fastest), so the reader transposes.

mod datatype;
mod error;
mod header;
mod order;
mod read;
mod voxels;

pub use datatype::Datatype;
pub use error::NiftiError;
pub use header::{ByteOrder, NiftiHeader, HEADER_SIZE};
pub use order::fortran_to_c;
pub use read::{parse_nifti, read_nifti, read_nifti_header, NiftiImage};
pub use voxels::Voxels;
