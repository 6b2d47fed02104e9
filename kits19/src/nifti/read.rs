//! Reading a whole `.nii` / `.nii.gz` into memory. Files are small enough
//! (a preprocessed KiTS19 case is at most a few hundred MiB unpacked) that
//! streaming would buy nothing.

use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::error::NiftiError;
use super::header::{NiftiHeader, HEADER_SIZE};
use super::voxels::Voxels;

#[derive(Clone, Debug, PartialEq)]
pub struct NiftiImage {
    pub header: NiftiHeader,
    /// Stored elements, C order over [`NiftiImage::shape`].
    pub voxels: Voxels,
    /// The scaling `get_fdata()` would apply (`None`: values as stored).
    pub scaling: Option<(f64, f64)>,
}

impl NiftiImage {
    pub fn shape(&self) -> Vec<usize> {
        self.header.shape()
    }

    /// Same values as nibabel's `img.get_fdata()` (float64), in C order.
    pub fn fdata(&self) -> Vec<f64> {
        self.voxels.to_f64(self.scaling)
    }
}

/// Reads a NIfTI-1 file; gzip is recognised by its magic bytes, so a
/// misnamed file still reads.
pub fn read_nifti(path: impl AsRef<Path>) -> Result<NiftiImage, NiftiError> {
    let path = path.as_ref();
    let raw = std::fs::read(path).map_err(|source| NiftiError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|source| NiftiError::Gzip {
                path: path.to_path_buf(),
                source,
            })?;
        out
    } else {
        raw
    };
    parse_nifti(&bytes, path)
}

/// Reads only the header (for a `.nii.gz`, only as much of the stream as the
/// header needs), e.g. to learn a case's shape without unpacking it.
pub fn read_nifti_header(path: impl AsRef<Path>) -> Result<NiftiHeader, NiftiError> {
    let path = path.as_ref();
    let io = |source| NiftiError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut magic = [0u8; 2];
    let got = file.read(&mut magic).map_err(io)?;
    let head = magic[..got].to_vec();
    let rest = std::io::Cursor::new(head).chain(file);
    let mut buf = Vec::with_capacity(HEADER_SIZE);
    if got == 2 && magic == [0x1f, 0x8b] {
        MultiGzDecoder::new(rest)
            .take(HEADER_SIZE as u64)
            .read_to_end(&mut buf)
            .map_err(|source| NiftiError::Gzip {
                path: path.to_path_buf(),
                source,
            })?;
    } else {
        rest.take(HEADER_SIZE as u64)
            .read_to_end(&mut buf)
            .map_err(io)?;
    }
    NiftiHeader::parse(&buf, path)
}

/// Parses an uncompressed NIfTI-1 byte image; `path` is for messages only.
pub fn parse_nifti(bytes: &[u8], path: &Path) -> Result<NiftiImage, NiftiError> {
    let header = NiftiHeader::parse(bytes, path)?;
    let shape = header.shape();
    let size = header.datatype.size();
    let offset = header.vox_offset as usize;
    let need = shape.iter().product::<usize>() * size;
    let have = bytes.len().saturating_sub(offset);
    if have < need {
        return Err(NiftiError::Truncated {
            path: path.to_path_buf(),
            shape,
            bytes_per_voxel: size,
            need,
            offset,
            have,
        });
    }
    let scaling = header.scaling(path)?;
    let voxels = Voxels::decode(
        &bytes[offset..offset + need],
        header.datatype,
        header.byte_order,
        &shape,
    );
    Ok(NiftiImage {
        header,
        voxels,
        scaling,
    })
}
