//! [`Sample`]: a safe view of one `mlperf_sample` of a query.

use std::marker::PhantomData;
use std::slice;

use crate::ffi::mlperf_sample;

/// One sample of a query, borrowing the host's memory for the duration of `issue_query`.
/// Laid out exactly like `mlperf_sample`, so the host's array is viewed without copying.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Sample<'a> {
    raw: mlperf_sample,
    _host_memory: PhantomData<&'a [u8]>,
}

// SAFETY: a Sample is a shared borrow of host memory the host does not change while the sample
// is outstanding, like `&'a [u8]`, which is Send and Sync.
unsafe impl Send for Sample<'_> {}
// SAFETY: as above.
unsafe impl Sync for Sample<'_> {}

impl<'a> Sample<'a> {
    /// # Safety
    /// `data` (`length` bytes) and `shape` (`rank` entries) are NULL or valid for `'a`.
    pub unsafe fn from_raw(raw: mlperf_sample) -> Self {
        Sample {
            raw,
            _host_memory: PhantomData,
        }
    }

    /// The opaque id to report back in the [`Response`](super::Response).
    #[inline]
    pub fn id(&self) -> u64 {
        self.raw.id
    }

    /// The sample's index in the data set.
    #[inline]
    pub fn index(&self) -> u64 {
        self.raw.index
    }

    /// The sample's bytes; empty when the host passed none.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        if self.raw.data.is_null() || self.raw.length == 0 {
            return &[];
        }
        let length = usize::try_from(self.raw.length).expect("sample length fits in memory");
        // SAFETY: from_raw's contract: `length` bytes at `data` live for 'a.
        unsafe { slice::from_raw_parts(self.raw.data.cast::<u8>(), length) }
    }

    #[inline]
    pub fn dtype(&self) -> DType {
        DType::from_raw(self.raw.dtype)
    }

    #[inline]
    pub fn shape(&self) -> &'a [i64] {
        if self.raw.shape.is_null() || self.raw.rank == 0 {
            return &[];
        }
        // SAFETY: from_raw's contract: `rank` entries at `shape` live for 'a.
        unsafe { slice::from_raw_parts(self.raw.shape, self.raw.rank as usize) }
    }

    #[inline]
    pub fn as_raw(&self) -> &mlperf_sample {
        &self.raw
    }
}

impl std::fmt::Debug for Sample<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sample")
            .field("id", &self.id())
            .field("index", &self.index())
            .field("length", &self.raw.length)
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .finish()
    }
}

/// The element type of a sample's data (`mlperf_dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    Unknown,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    BF16,
    F32,
    F64,
    Bool,
    Bytes,
    /// A code this SDK does not know (from a later minor).
    Other(i32),
}

impl DType {
    #[inline]
    pub fn from_raw(code: i32) -> Self {
        use DType::*;
        match code {
            0 => Unknown,
            1 => U8,
            2 => I8,
            3 => U16,
            4 => I16,
            5 => U32,
            6 => I32,
            7 => U64,
            8 => I64,
            9 => F16,
            10 => BF16,
            11 => F32,
            12 => F64,
            13 => Bool,
            14 => Bytes,
            other => Other(other),
        }
    }

    /// The `mlperf_dtype` code.
    #[inline]
    pub fn to_raw(self) -> i32 {
        use DType::*;
        match self {
            Unknown => 0,
            U8 => 1,
            I8 => 2,
            U16 => 3,
            I16 => 4,
            U32 => 5,
            I32 => 6,
            U64 => 7,
            I64 => 8,
            F16 => 9,
            BF16 => 10,
            F32 => 11,
            F64 => 12,
            Bool => 13,
            Bytes => 14,
            Other(code) => code,
        }
    }

    /// Bytes per element (1 for `Bytes`; 0 when unknown).
    #[inline]
    pub fn size(self) -> usize {
        use DType::*;
        match self {
            U8 | I8 | Bool | Bytes => 1,
            U16 | I16 | F16 | BF16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
            Unknown | Other(_) => 0,
        }
    }
}
