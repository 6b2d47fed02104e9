//! NIfTI-1 `datatype` codes. Only the plain numeric ones are supported;
//! complex, RGB and 128-bit floats never occur in KiTS19 and have no
//! `get_fdata()` equivalent worth reproducing.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datatype {
    U8,
    I8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Datatype {
    /// Maps a header code to a supported type, or returns a name for the error.
    pub fn from_code(code: i16) -> Result<Self, &'static str> {
        Ok(match code {
            2 => Self::U8,
            256 => Self::I8,
            4 => Self::I16,
            512 => Self::U16,
            8 => Self::I32,
            768 => Self::U32,
            1024 => Self::I64,
            1280 => Self::U64,
            16 => Self::F32,
            64 => Self::F64,
            0 => return Err("DT_UNKNOWN"),
            1 => return Err("DT_BINARY"),
            32 => return Err("DT_COMPLEX64"),
            128 => return Err("DT_RGB24"),
            1536 => return Err("DT_FLOAT128"),
            1792 => return Err("DT_COMPLEX128"),
            2048 => return Err("DT_COMPLEX256"),
            2304 => return Err("DT_RGBA32"),
            _ => return Err("not a NIfTI-1 datatype code"),
        })
    }

    pub fn code(self) -> i16 {
        match self {
            Self::U8 => 2,
            Self::I8 => 256,
            Self::I16 => 4,
            Self::U16 => 512,
            Self::I32 => 8,
            Self::U32 => 768,
            Self::I64 => 1024,
            Self::U64 => 1280,
            Self::F32 => 16,
            Self::F64 => 64,
        }
    }

    pub fn size(self) -> usize {
        match self {
            Self::U8 | Self::I8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::I64 | Self::U64 | Self::F64 => 8,
        }
    }
}
