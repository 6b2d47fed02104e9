//! One thread's instance of a module, kept for every sample it preprocesses: one copy in, the
//! call, the output read in place from the module's memory.

use std::sync::Arc;

use wasmtime::Trap;

use crate::instance::{arm, Live, Shared, StoreState};
use crate::{PreprocessError, SampleFailure};

/// Dimensions the guest's shape block holds.
pub const MAX_RANK: usize = 8;

/// A sample's or an output's shape as the guest ABI carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    rank: usize,
    dims: [u32; MAX_RANK],
}

impl Shape {
    /// `None` when `dims` has more than [`MAX_RANK`] dimensions or one above `u32::MAX`.
    pub fn new(dims: &[u64]) -> Option<Shape> {
        let mut shape = Shape {
            rank: dims.len(),
            dims: [0; MAX_RANK],
        };
        if dims.len() > MAX_RANK {
            return None;
        }
        for (slot, &dim) in shape.dims.iter_mut().zip(dims) {
            *slot = u32::try_from(dim).ok()?;
        }
        Some(shape)
    }

    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.rank]
    }

    pub fn element_count(&self) -> u64 {
        self.dims().iter().map(|&d| d as u64).product()
    }
}

/// A sample's preprocessed bytes, in the module's memory until the worker's next call.
#[derive(Debug)]
pub struct Preprocessed<'a> {
    pub data: &'a [u8],
    pub shape: Shape,
}

/// A thread's preprocessor: one instance reused for every sample, rebuilt only after a trap
/// (which may leave the guest's state half-written).
pub struct Worker {
    shared: Arc<Shared>,
    live: Option<Live>,
}

impl Worker {
    pub(crate) fn new(shared: Arc<Shared>) -> Result<Worker, PreprocessError> {
        let live = Live::new(&shared).map_err(|message| PreprocessError::Abi {
            module: shared.identity.label(),
            sha256: shared.identity.sha256.clone(),
            message,
        })?;
        Ok(Worker {
            shared,
            live: Some(live),
        })
    }

    /// Preprocesses sample `index` (for messages) of `shape`.
    pub fn run(
        &mut self,
        index: usize,
        input: &[u8],
        shape: &[u64],
    ) -> Result<Preprocessed<'_>, PreprocessError> {
        let shared = &*self.shared;
        let fail = |failure: SampleFailure| PreprocessError::Sample {
            module: shared.identity.label(),
            sha256: shared.identity.sha256.clone(),
            index,
            failure,
        };
        let shape = Shape::new(shape).ok_or_else(|| {
            fail(SampleFailure::BadOutput(format!(
                "its input shape {shape:?} does not fit the guest ABI (at most {MAX_RANK} \
                 dimensions of at most {})",
                u32::MAX
            )))
        })?;
        if self.live.is_none() {
            let live = Live::new(shared).map_err(|m| fail(SampleFailure::Trap(m)))?;
            self.live = Some(live);
        }
        let live = self.live.as_mut().expect("instantiated above");
        arm(&mut live.store, shared);
        let element_size = shared.identity.metadata.output.dtype.size();
        let outcome = call(live, input, shape, element_size);
        match outcome {
            Ok(Ok((at, len, shape))) => {
                let live = self.live.as_ref().expect("still live");
                let data = live.bytes(at, len).expect("checked by call");
                Ok(Preprocessed { data, shape })
            }
            Ok(Err(failure)) => Err(fail(failure)),
            Err(error) => {
                let failure = classify(shared, live.store.data(), error);
                self.live = None;
                Err(fail(failure))
            }
        }
    }
}

/// One sample through the guest: `Err` is a trap, `Ok(Err)` a failure the guest reported or
/// an output that breaks the ABI.
#[allow(clippy::type_complexity)]
fn call(
    live: &mut Live,
    input: &[u8],
    shape: Shape,
    element_size: usize,
) -> wasmtime::Result<Result<(i32, usize, Shape), SampleFailure>> {
    let Ok(len) = i32::try_from(input.len()) else {
        return Ok(Err(SampleFailure::InputTooLarge(input.len())));
    };
    let at = live.exports.input.call(&mut live.store, len)?;
    let Some(start) = usize::try_from(at).ok().filter(|&at| at != 0) else {
        return Ok(Err(SampleFailure::InputTooLarge(input.len())));
    };
    let Some(buffer) = live
        .memory
        .data_mut(&mut live.store)
        .get_mut(start..start + input.len())
    else {
        return Ok(Err(SampleFailure::BadOutput(format!(
            "its input buffer at {start} is outside its memory"
        ))));
    };
    buffer.copy_from_slice(input);
    let shape_at = live.exports.shape.call(&mut live.store, ())?;
    if !write_shape(live, shape_at, &shape) {
        return Ok(Err(SampleFailure::BadOutput(format!(
            "its shape block at {shape_at} is outside its memory"
        ))));
    }
    let produced = live.exports.preprocess.call(&mut live.store, len)?;
    if produced < 0 {
        return Ok(Err(SampleFailure::Code { code: produced }));
    }
    let out_at = live.exports.output.call(&mut live.store, ())?;
    let out_len = produced as usize;
    if live.bytes(out_at, out_len).is_none() {
        return Ok(Err(SampleFailure::BadOutput(format!(
            "its output ({out_len} bytes at {out_at}) is outside its memory"
        ))));
    }
    let Some(out_shape) = read_shape(live, shape_at) else {
        return Ok(Err(SampleFailure::BadOutput(
            "its output shape block is not a shape (rank above 8)".into(),
        )));
    };
    let expected = out_shape.element_count() * element_size as u64;
    if out_len as u64 != expected {
        return Ok(Err(SampleFailure::BadOutput(format!(
            "it returned {out_len} bytes for an output of shape {:?} ({expected} bytes)",
            out_shape.dims()
        ))));
    }
    Ok(Ok((out_at, out_len, out_shape)))
}

fn write_shape(live: &mut Live, at: i32, shape: &Shape) -> bool {
    let Ok(start) = usize::try_from(at) else {
        return false;
    };
    let Some(block) = live
        .memory
        .data_mut(&mut live.store)
        .get_mut(start..start + 4 * (MAX_RANK + 1))
    else {
        return false;
    };
    block[..4].copy_from_slice(&(shape.rank as u32).to_le_bytes());
    for (slot, dim) in block[4..].chunks_exact_mut(4).zip(shape.dims) {
        slot.copy_from_slice(&dim.to_le_bytes());
    }
    true
}

fn read_shape(live: &Live, at: i32) -> Option<Shape> {
    let block = live.bytes(at, 4 * (MAX_RANK + 1))?;
    let word = |i: usize| u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().unwrap());
    let rank = word(0) as usize;
    if rank > MAX_RANK {
        return None;
    }
    let mut shape = Shape {
        rank,
        dims: [0; MAX_RANK],
    };
    for (i, dim) in shape.dims.iter_mut().take(rank).enumerate() {
        *dim = word(i + 1);
    }
    Some(shape)
}

fn classify(shared: &Shared, state: &StoreState, error: wasmtime::Error) -> SampleFailure {
    if state.memory_cap_hit {
        return SampleFailure::MemoryCap(shared.sandbox.memory_limit);
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => SampleFailure::TimeLimit(shared.sandbox.time_limit),
        Some(Trap::OutOfFuel) => SampleFailure::FuelLimit(shared.sandbox.fuel.unwrap_or(0)),
        Some(Trap::StackOverflow) => SampleFailure::StackLimit(shared.sandbox.max_stack),
        Some(trap) => SampleFailure::Trap(trap.to_string()),
        None => SampleFailure::Trap(format!("{error:#}")),
    }
}
