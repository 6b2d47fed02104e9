//! Timed preprocessing: the module runs on each issued sample, on the issue thread, inside the
//! timed path, before the plugin sees the sample.
//!
//! Outputs go to per-query buffers that stay put until every sample of their query has
//! completed (the plugin reads them in place); finished buffers are reused, so a steady run
//! allocates nothing. A failure fails the run (INVALID, with the module's message).

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use mlperf_plugin_api::ffi;
use wasm_preprocess::{PreprocessError, Worker};

use crate::loadgen::{Completer, QuerySample, ResponseId};
use crate::samples::{AlignedBuffer, Preprocessing, SampleArena, SampleLayout, SAMPLE_ALIGN};

/// One issued query's outputs, each `stride` bytes apart.
#[derive(Default)]
struct Outputs {
    data: AlignedBuffer,
    layout: Option<SampleLayout>,
    length: usize,
    stride: usize,
    ids: Vec<ResponseId>,
    /// Samples of `ids` known to be released (completed, responses no longer read), from the
    /// front.
    completed: usize,
}

impl Outputs {
    fn all_completed(&mut self, completer: &Completer) -> bool {
        while self.completed < self.ids.len() && completer.is_released(self.ids[self.completed]) {
            self.completed += 1;
        }
        self.completed == self.ids.len()
    }
}

#[derive(Default)]
struct State {
    worker: Option<Worker>,
    in_flight: VecDeque<Outputs>,
    spare: Vec<Outputs>,
    handover: Vec<ffi::mlperf_sample>,
}

pub(crate) struct TimedPreprocess {
    preprocessing: Arc<Preprocessing>,
    state: Mutex<State>,
}

impl TimedPreprocess {
    pub(crate) fn new(preprocessing: Arc<Preprocessing>) -> TimedPreprocess {
        TimedPreprocess {
            preprocessing,
            state: Mutex::new(State::default()),
        }
    }

    /// Preprocesses `samples` and hands them to `issue`. On failure the plugin sees none of
    /// them and the error is returned.
    pub(crate) fn issue(
        &self,
        samples: &[QuerySample],
        arena: Option<&SampleArena>,
        completer: &Completer,
        issue: impl FnOnce(&[ffi::mlperf_sample]),
    ) -> Result<(), PreprocessError> {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *guard;
        while let Some(front) = state.in_flight.front_mut() {
            if !front.all_completed(completer) {
                break;
            }
            let done = state.in_flight.pop_front().expect("front exists");
            state.spare.push(done);
        }
        let mut worker = match state.worker.take() {
            Some(worker) => worker,
            None => self.preprocessing.take_worker()?,
        };
        let mut outputs = state.spare.pop().unwrap_or_default();
        let result = self.preprocess(&mut worker, samples, arena, &mut outputs);
        state.worker = Some(worker);
        if let Err(error) = result {
            state.spare.push(outputs);
            return Err(error);
        }
        let layout = outputs.layout.as_ref().expect("set by preprocess");
        let base = outputs.data.bytes_mut().as_ptr();
        state.handover.clear();
        state
            .handover
            .extend(samples.iter().enumerate().map(|(position, sample)| {
                ffi::mlperf_sample {
                    struct_size: std::mem::size_of::<ffi::mlperf_sample>(),
                    id: sample.id.0,
                    index: sample.index as u64,
                    // The buffer is not written again until every sample of this query has
                    // completed, so the plugin may read it until then.
                    data: base.wrapping_add(position * outputs.stride) as *const c_void,
                    length: outputs.length as u64,
                    dtype: layout.dtype.to_raw(),
                    rank: layout.shape.len() as u32,
                    shape: layout.shape.as_ptr(),
                }
            }));
        outputs.ids.clear();
        outputs.ids.extend(samples.iter().map(|s| s.id));
        outputs.completed = 0;
        // Moving `outputs` moves no heap memory: the pointers above stay valid.
        state.in_flight.push_back(outputs);
        issue(&state.handover);
        Ok(())
    }

    fn preprocess(
        &self,
        worker: &mut Worker,
        samples: &[QuerySample],
        arena: Option<&SampleArena>,
        outputs: &mut Outputs,
    ) -> Result<(), PreprocessError> {
        let loaded = arena.and_then(SampleArena::read);
        for (position, sample) in samples.iter().enumerate() {
            let view = loaded
                .as_deref()
                .and_then(|l| l.get(sample.index))
                .ok_or_else(|| {
                    PreprocessError::Runtime(format!(
                        "timed preprocessing: sample {} has no loaded data",
                        sample.index
                    ))
                })?;
            let out = worker.run(sample.index, view.data, &crate::samples::dims(view.shape))?;
            if position == 0 {
                // A recycled buffer usually has this layout already: no allocation per query.
                let same = outputs.layout.as_ref().is_some_and(|layout| {
                    layout.shape.len() == out.shape.dims().len()
                        && layout
                            .shape
                            .iter()
                            .zip(out.shape.dims())
                            .all(|(&a, &b)| a == b as i64)
                });
                if !same {
                    outputs.layout = Some(self.preprocessing.output_layout(out.shape.dims())?);
                }
                outputs.length = out.data.len();
                outputs.stride = out.data.len().next_multiple_of(SAMPLE_ALIGN);
                outputs.data.resize(outputs.stride * samples.len());
            } else {
                crate::samples::check_same(
                    self.preprocessing.module(),
                    sample.index,
                    out.shape.dims(),
                    out.data.len(),
                    outputs.layout.as_ref().expect("set at position 0"),
                    outputs.length,
                )?;
            }
            let at = position * outputs.stride;
            outputs.data.bytes_mut()[at..at + out.data.len()].copy_from_slice(out.data);
        }
        Ok(())
    }
}
