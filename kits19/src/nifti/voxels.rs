//! Typed voxel storage, and the float view nibabel's `get_fdata()` gives.

use super::datatype::Datatype;
use super::header::ByteOrder;
use super::order::fortran_to_c;

/// Voxels in their on-disk element type (native endianness, C order).
#[derive(Clone, Debug, PartialEq)]
pub enum Voxels {
    U8(Vec<u8>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! decode {
    ($bytes:expr, $order:expr, $shape:expr, $t:ty) => {{
        const N: usize = std::mem::size_of::<$t>();
        let file_order: Vec<$t> = $bytes
            .chunks_exact(N)
            .map(|c| {
                let a: [u8; N] = c.try_into().expect("chunk of element size");
                match $order {
                    ByteOrder::Little => <$t>::from_le_bytes(a),
                    ByteOrder::Big => <$t>::from_be_bytes(a),
                }
            })
            .collect();
        fortran_to_c(&file_order, $shape)
    }};
}

/// Applies `f` to the element vector whatever its type.
macro_rules! each {
    ($v:expr, $x:ident => $e:expr) => {
        match $v {
            Voxels::U8($x) => $e,
            Voxels::I8($x) => $e,
            Voxels::I16($x) => $e,
            Voxels::U16($x) => $e,
            Voxels::I32($x) => $e,
            Voxels::U32($x) => $e,
            Voxels::I64($x) => $e,
            Voxels::U64($x) => $e,
            Voxels::F32($x) => $e,
            Voxels::F64($x) => $e,
        }
    };
}

impl Voxels {
    /// Decodes exactly `shape.product() * dt.size()` bytes of file-order data.
    pub(crate) fn decode(bytes: &[u8], dt: Datatype, order: ByteOrder, shape: &[usize]) -> Self {
        match dt {
            Datatype::U8 => Self::U8(fortran_to_c(bytes, shape)),
            Datatype::I8 => Self::I8(decode!(bytes, order, shape, i8)),
            Datatype::I16 => Self::I16(decode!(bytes, order, shape, i16)),
            Datatype::U16 => Self::U16(decode!(bytes, order, shape, u16)),
            Datatype::I32 => Self::I32(decode!(bytes, order, shape, i32)),
            Datatype::U32 => Self::U32(decode!(bytes, order, shape, u32)),
            Datatype::I64 => Self::I64(decode!(bytes, order, shape, i64)),
            Datatype::U64 => Self::U64(decode!(bytes, order, shape, u64)),
            Datatype::F32 => Self::F32(decode!(bytes, order, shape, f32)),
            Datatype::F64 => Self::F64(decode!(bytes, order, shape, f64)),
        }
    }

    pub fn len(&self) -> usize {
        each!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Little-endian bytes of the elements in C order: what numpy's
    /// `tobytes()` gives on x86, handy for hashing against the reference.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        each!(self, v => v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// nibabel's `get_fdata()`: every element widened to f64, then
    /// `x * slope` if slope != 1 and `+ inter` if inter != 0, both in f64 (as
    /// nibabel's `apply_read_scaling` does for these types).
    // one body for every element type; for F64 the `as f64` is a no-op
    #[allow(clippy::unnecessary_cast)]
    pub fn to_f64(&self, scaling: Option<(f64, f64)>) -> Vec<f64> {
        let (slope, inter) = scaling.unwrap_or((1.0, 0.0));
        each!(self, v => v
            .iter()
            .map(|&x| {
                let mut y = x as f64;
                if slope != 1.0 {
                    y *= slope;
                }
                if inter != 0.0 {
                    y += inter;
                }
                y
            })
            .collect())
    }
}
