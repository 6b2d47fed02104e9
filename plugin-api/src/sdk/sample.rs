//! [`Sample`]: a safe view of one `mlperf_sample` of a query.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::slice;

use crate::ffi::{mlperf_input, mlperf_sample, SAMPLE_SIZE_1_2};

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
    /// `data` (`length` bytes) and `shape` (`rank` entries) are NULL or valid for `'a`; so
    /// are `inputs` (`n_inputs` entries, strided by their struct_size, with NUL-terminated
    /// names and their shapes) when `struct_size` covers them.
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

    /// The sample's named inputs (since 1.3: a data set with `input_names`); none when the
    /// sample is one tensor ([`Self::data`]) or the host is of 1.2 and earlier.
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = Input<'a>> + '_ {
        let listed =
            self.raw.struct_size >= size_of::<mlperf_sample>() && !self.raw.inputs.is_null();
        let stride = if listed {
            // SAFETY: from_raw's contract covers `inputs` (n_inputs entries strided by their
            // struct_size) when the host's sample has them.
            unsafe { (*self.raw.inputs).struct_size }
        } else {
            0
        };
        let count = if stride >= size_of::<mlperf_input>() {
            self.raw.n_inputs as usize
        } else {
            0
        };
        let data = self.data();
        (0..count).map(move |k| {
            // SAFETY: as above: entry k lies k * stride bytes in, and begins with 1.3's fields.
            let raw = unsafe { self.raw.inputs.byte_add(k * stride).read_unaligned() };
            Input::within(raw, data)
        })
    }

    /// The named input `name`, if the sample has it.
    pub fn input(&self, name: &str) -> Option<Input<'a>> {
        self.inputs().find(|input| input.name() == name)
    }

    #[inline]
    pub fn as_raw(&self) -> &mlperf_sample {
        &self.raw
    }

    /// A sample of a host of an earlier minor (`stride` bytes, at least 1.2's), its later
    /// fields zero.
    ///
    /// # Safety
    /// `raw` points to `stride` readable bytes of a sample, as [`Self::from_raw`] requires.
    pub(crate) unsafe fn from_shorter(raw: *const mlperf_sample, stride: usize) -> Self {
        debug_assert!(stride >= SAMPLE_SIZE_1_2);
        // SAFETY: every field of mlperf_sample is an integer or a pointer: zero is valid.
        let mut copy: mlperf_sample = unsafe { std::mem::zeroed() };
        let known = stride.min(size_of::<mlperf_sample>());
        // SAFETY: the caller's contract; `known` bytes fit in both.
        unsafe {
            std::ptr::copy_nonoverlapping(
                raw.cast::<u8>(),
                std::ptr::from_mut(&mut copy).cast::<u8>(),
                known,
            );
            Sample::from_raw(copy)
        }
    }
}

/// One named input of a sample: a tensor within the sample's data.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    name: &'a str,
    data: &'a [u8],
    dtype: DType,
    shape: &'a [i64],
}

impl<'a> Input<'a> {
    /// The input `raw` describes within `sample` (its data); an input the host placed past the
    /// sample's end, or named with invalid UTF-8, reads as empty.
    fn within(raw: mlperf_input, sample: &'a [u8]) -> Input<'a> {
        let name = if raw.name.is_null() {
            ""
        } else {
            // SAFETY: the host's names are NUL-terminated and live as long as the samples.
            unsafe { CStr::from_ptr(raw.name) }.to_str().unwrap_or("")
        };
        let data = usize::try_from(raw.offset)
            .ok()
            .zip(usize::try_from(raw.length).ok())
            .and_then(|(offset, length)| sample.get(offset..offset.checked_add(length)?))
            .unwrap_or(&[]);
        let shape = if raw.shape.is_null() || raw.rank == 0 {
            &[][..]
        } else {
            // SAFETY: `rank` entries at `shape`, living as long as the samples.
            unsafe { slice::from_raw_parts(raw.shape, raw.rank as usize) }
        };
        Input {
            name,
            data,
            dtype: DType::from_raw(raw.dtype),
            shape,
        }
    }

    #[inline]
    pub fn name(&self) -> &'a str {
        self.name
    }

    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    #[inline]
    pub fn shape(&self) -> &'a [i64] {
        self.shape
    }
}

impl std::fmt::Debug for Input<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("name", &self.name)
            .field("length", &self.data.len())
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .finish()
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
            .field("inputs", &self.inputs().collect::<Vec<_>>())
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
