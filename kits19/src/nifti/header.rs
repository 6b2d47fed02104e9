//! The 348-byte NIfTI-1 header: byte-order detection and the fields a reader
//! of KiTS19 data needs. Offsets follow `nifti1.h`.

use std::path::Path;

use super::datatype::Datatype;
use super::error::NiftiError;

/// Header plus the 4 extension-flag bytes that always follow it in a `.nii`.
pub const HEADER_SIZE: usize = 352;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NiftiHeader {
    pub byte_order: ByteOrder,
    pub dim: [i16; 8],
    pub datatype: Datatype,
    /// Kept as written; like nibabel, the reader trusts `datatype`, not this.
    pub bitpix: i16,
    pub pixdim: [f32; 8],
    pub vox_offset: f32,
    pub scl_slope: f32,
    pub scl_inter: f32,
    pub xyzt_units: u8,
    pub qform_code: i16,
    pub sform_code: i16,
    /// quatern_b, quatern_c, quatern_d, qoffset_x, qoffset_y, qoffset_z.
    pub quatern: [f32; 6],
    /// srow_x, srow_y, srow_z.
    pub srow: [[f32; 4]; 3],
    pub descrip: String,
    pub extension_flag: [u8; 4],
}

struct Fields<'a> {
    b: &'a [u8],
    order: ByteOrder,
}

impl Fields<'_> {
    fn bytes<const N: usize>(&self, off: usize) -> [u8; N] {
        self.b[off..off + N]
            .try_into()
            .expect("offset inside header")
    }
    fn i16(&self, off: usize) -> i16 {
        match self.order {
            ByteOrder::Little => i16::from_le_bytes(self.bytes(off)),
            ByteOrder::Big => i16::from_be_bytes(self.bytes(off)),
        }
    }
    fn f32(&self, off: usize) -> f32 {
        match self.order {
            ByteOrder::Little => f32::from_le_bytes(self.bytes(off)),
            ByteOrder::Big => f32::from_be_bytes(self.bytes(off)),
        }
    }
    fn f32s<const N: usize>(&self, off: usize) -> [f32; N] {
        std::array::from_fn(|i| self.f32(off + 4 * i))
    }
}

impl NiftiHeader {
    /// Parses and validates the first [`HEADER_SIZE`] bytes of `b`. `path` is
    /// only used in error messages.
    pub fn parse(b: &[u8], path: &Path) -> Result<Self, NiftiError> {
        let p = || path.to_path_buf();
        if b.len() < HEADER_SIZE {
            return Err(NiftiError::ShortHeader {
                path: p(),
                got: b.len(),
            });
        }
        let first: [u8; 4] = b[0..4].try_into().expect("4 bytes");
        let (little, big) = (i32::from_le_bytes(first), i32::from_be_bytes(first));
        // sizeof_hdr doubles as the byte-order mark, as in nibabel.
        let order = match (little, big) {
            (348, _) => ByteOrder::Little,
            (_, 348) => ByteOrder::Big,
            _ => {
                return Err(NiftiError::SizeofHdr {
                    path: p(),
                    little,
                    big,
                })
            }
        };
        let f = Fields { b, order };
        let magic: [u8; 4] = f.bytes(344);
        if &magic != b"n+1\0" {
            let found = String::from_utf8_lossy(&magic)
                .trim_end_matches('\0')
                .to_string();
            return Err(NiftiError::Magic { path: p(), found });
        }
        let dim: [i16; 8] = std::array::from_fn(|i| f.i16(40 + 2 * i));
        if !(1..=7).contains(&dim[0]) {
            let why = "dim[0] (number of dimensions) must be 1..=7";
            return Err(NiftiError::Dim {
                path: p(),
                dim,
                why,
            });
        }
        if dim[1..=dim[0] as usize].iter().any(|&d| d < 0) {
            let why = "a used dimension is negative";
            return Err(NiftiError::Dim {
                path: p(),
                dim,
                why,
            });
        }
        let code = f.i16(70);
        let datatype =
            Datatype::from_code(code).map_err(|name| NiftiError::UnsupportedDatatype {
                path: p(),
                code,
                name,
            })?;
        let vox_offset = f.f32(108);
        if !vox_offset.is_finite() || vox_offset.fract() != 0.0 {
            let why = "not a whole number of bytes";
            return Err(NiftiError::VoxOffset {
                path: p(),
                vox_offset,
                why,
            });
        }
        if vox_offset < HEADER_SIZE as f32 {
            let why = "a single-file NIfTI-1 keeps its data at or after byte 352";
            return Err(NiftiError::VoxOffset {
                path: p(),
                vox_offset,
                why,
            });
        }
        let descrip = f.bytes::<80>(148);
        let end = descrip.iter().position(|&c| c == 0).unwrap_or(80);
        Ok(Self {
            byte_order: order,
            dim,
            datatype,
            bitpix: f.i16(72),
            pixdim: f.f32s(76),
            vox_offset,
            scl_slope: f.f32(112),
            scl_inter: f.f32(116),
            xyzt_units: b[123],
            qform_code: f.i16(252),
            sform_code: f.i16(254),
            quatern: f.f32s(256),
            srow: [f.f32s(280), f.f32s(296), f.f32s(312)],
            descrip: String::from_utf8_lossy(&descrip[..end]).into_owned(),
            extension_flag: f.bytes(348),
        })
    }

    /// The numpy shape nibabel reports: `dim[1..=dim[0]]`.
    pub fn shape(&self) -> Vec<usize> {
        self.dim[1..=self.dim[0] as usize]
            .iter()
            .map(|&d| d as usize)
            .collect()
    }

    pub fn voxel_count(&self) -> usize {
        self.shape().iter().product()
    }

    /// `pixdim[1..4]`: what preprocess.py takes as the voxel spacing.
    pub fn spacing(&self) -> [f32; 3] {
        [self.pixdim[1], self.pixdim[2], self.pixdim[3]]
    }

    /// The scaling `get_fdata()` applies, as nibabel's `get_slope_inter()`
    /// decides it: a zero or non-finite slope means "no scaling" (the
    /// intercept is then ignored too); a valid slope with a non-finite
    /// intercept is an error. `None` means the data are used as stored.
    pub fn scaling(&self, path: &Path) -> Result<Option<(f64, f64)>, NiftiError> {
        let slope = f64::from(self.scl_slope);
        let inter = f64::from(self.scl_inter);
        if slope == 0.0 || !slope.is_finite() {
            return Ok(None);
        }
        if !inter.is_finite() {
            return Err(NiftiError::Scaling {
                path: path.to_path_buf(),
                slope: self.scl_slope,
                inter: self.scl_inter,
            });
        }
        Ok(Some((slope, inter)))
    }
}
