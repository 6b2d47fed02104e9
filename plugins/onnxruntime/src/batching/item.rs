//! Issued samples checked against the model input: [`check_all`] splits a query into runs of
//! one [`SampleShape`] (a fixed-shape model gives one run), and each sample becomes a small
//! [`Item`] that can wait in a queue.

use mlperf_plugin_api::sdk::Sample;

use crate::session::model::InputSpec;
use crate::session::tensor::element_type;

/// The most dimensions a sample may have (the model input's rank less its batch axis).
pub(crate) const MAX_RANK: usize = 8;

/// One sample's dimensions and byte length, held inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SampleShape {
    dims: [i64; MAX_RANK],
    rank: u8,
    /// Bytes of one sample of this shape.
    pub bytes: usize,
}

impl SampleShape {
    /// The shape `dims` of elements of `element_size` bytes; None if a dimension is dynamic
    /// (negative) or there are more than MAX_RANK.
    pub(crate) fn fixed(dims: &[i64], element_size: usize) -> Option<SampleShape> {
        if dims.len() > MAX_RANK || dims.iter().any(|&d| d < 0) {
            return None;
        }
        let count = usize::try_from(dims.iter().product::<i64>()).ok()?;
        let mut shape = SampleShape {
            dims: [0; MAX_RANK],
            rank: dims.len() as u8,
            bytes: count.checked_mul(element_size)?,
        };
        shape.dims[..dims.len()].copy_from_slice(dims);
        Some(shape)
    }

    pub(crate) fn dims(&self) -> &[i64] {
        &self.dims[..usize::from(self.rank)]
    }
}

/// A sample to run: its id, data-set index and where its bytes are (their length is its
/// run's `SampleShape::bytes`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub id: u64,
    pub index: u64,
    data: *const u8,
}

// SAFETY: `data` points at host memory that stays unchanged and valid until the sample is
// completed (the ABI's contract), so another thread may read it until then.
unsafe impl Send for Item {}

impl Item {
    /// The item of a sample `check` accepted.
    pub(crate) fn of(sample: &Sample<'_>) -> Item {
        Item {
            id: sample.id(),
            index: sample.index(),
            data: sample.data().as_ptr(),
        }
    }

    /// Bytes of the plugin's own (a warm-up run's), id 0.
    pub(crate) fn at(data: *const u8) -> Item {
        Item {
            id: 0,
            index: 0,
            data,
        }
    }

    /// The same sample under another id (another occurrence of it in the query).
    pub(crate) fn with_id(self, id: u64) -> Item {
        Item { id, ..self }
    }

    /// Where the sample's bytes start.
    pub(crate) fn data(&self) -> *const u8 {
        self.data
    }

    /// The sample's bytes (`shape` is its run's). Call only before the sample's completion,
    /// after which the host may reuse them: the plugin reads them in `Engine::infer`, before
    /// completing.
    pub(crate) fn bytes<'a>(&self, shape: &SampleShape) -> &'a [u8] {
        // SAFETY: see above; `check` made sure `shape.bytes` > 0 bytes are there.
        unsafe { std::slice::from_raw_parts(self.data, shape.bytes) }
    }
}

/// A run of samples of one shape within a query, from `start` to the next run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub start: usize,
    pub shape: SampleShape,
}

/// Checks every sample of a query; its runs of equal shape, in order.
pub(crate) fn check_all(samples: &[Sample<'_>], input: &InputSpec) -> Result<Vec<Run>, String> {
    let mut runs: Vec<Run> = Vec::new();
    let mut previous: Option<&Sample<'_>> = None;
    for (i, sample) in samples.iter().enumerate() {
        // A sample laid out as the one before passes as it did (most queries hold one form).
        if previous.is_some_and(|p| same_form(p, sample)) {
            continue;
        }
        previous = Some(sample);
        let shape = check(sample, input)?;
        if runs.last().is_none_or(|run| run.shape != shape) {
            runs.push(Run { start: i, shape });
        }
    }
    Ok(runs)
}

/// Same element type, shape and byte length, and data present.
fn same_form(a: &Sample<'_>, b: &Sample<'_>) -> bool {
    a.dtype() == b.dtype()
        && a.data().len() == b.data().len()
        && !b.data().is_empty()
        && a.shape() == b.shape()
}

/// Checks `sample` against the model input: data present, element type, shape (a leading 1
/// may be left on; a sample without a shape takes the model's, if fixed) and length.
pub(crate) fn check(sample: &Sample<'_>, input: &InputSpec) -> Result<SampleShape, String> {
    let index = sample.index();
    let data = sample.data();
    if data.is_empty() {
        return Err(format!(
            "sample {index} has no data: the onnxruntime plugin runs the model on the samples' \
             data (give the host a data set, e.g. --dataset FILE.npy)"
        ));
    }
    if element_type(sample.dtype()) != Some(input.ty) {
        return Err(format!(
            "sample {index} holds {:?} elements but {} takes {}",
            sample.dtype(),
            input.label(),
            input.ty
        ));
    }
    let given = sample.shape();
    let model = input.sample_dims.as_slice();
    let dims = if given.is_empty() && !model.is_empty() && model.iter().all(|&d| d >= 0) {
        model
    } else if given.len() == model.len() + 1 && given[0] == 1 {
        &given[1..]
    } else {
        given
    };
    let fits = dims.len() == model.len()
        && dims.len() <= MAX_RANK
        && dims
            .iter()
            .zip(model)
            .all(|(&d, &m)| d >= 0 && (m < 0 || d == m));
    if !fits {
        return Err(format!(
            "sample {index} has shape {given:?} but {} takes samples of shape {model:?} (-1: \
             any size)",
            input.label()
        ));
    }
    let needed = dims.iter().product::<i64>() as u128 * input.element_size as u128;
    if data.len() as u128 != needed {
        return Err(format!(
            "sample {index} has {} bytes but its shape {dims:?} of {} needs {needed}",
            data.len(),
            input.ty
        ));
    }
    SampleShape::fixed(dims, input.element_size)
        .ok_or_else(|| format!("sample {index} has shape {given:?}, too large"))
}

/// Each run's samples (as a range of the query) with their shape.
pub(crate) fn ranges(
    runs: &[Run],
    total: usize,
) -> impl Iterator<Item = (std::ops::Range<usize>, &SampleShape)> {
    runs.iter().enumerate().map(move |(i, run)| {
        let end = runs.get(i + 1).map_or(total, |next| next.start);
        (run.start..end, &run.shape)
    })
}
