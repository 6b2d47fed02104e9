//! [`Engine`]: one ONNX Runtime session and what running a batch on it needs. Each worker (or
//! the inline path) owns one, as ort's `Session::run` takes `&mut self`.

use std::ffi::{CStr, CString};

use mlperf_plugin_api::sdk::{
    Completer, NamedResponse, Output, PluginError, Response, SampleTiming,
};
use ort::ep::{self, ExecutionProviderDispatch};
use ort::memory::{Allocator, MemoryInfo};
use ort::session::{HasSelectedOutputs, OutputSelector, RunOptions, Session, SessionInputValue};

use super::model::{InputSpec, Io};
use super::tensor::{element_size, output_bytes, InputTensor};
use crate::batching::item::{Item, SampleShape, MAX_RANK};
use crate::config::{Config, Provider};
use crate::runtime::Runtime;

/// A session of the configured model on the configured provider.
pub(crate) fn open_session(runtime: &Runtime, config: &Config) -> Result<Session, PluginError> {
    let model = config.model_path();
    let builder_error = |what: &str, e: &dyn std::fmt::Display| {
        PluginError::internal(format!("onnxruntime plugin: cannot {what}: {e}"))
    };
    let mut builder = Session::builder(&runtime.environment)
        .map_err(|e| builder_error("create session options", &e))?
        .with_intra_threads(config.intra_op_threads)
        .map_err(|e| builder_error("set intra_op_threads", &e))?
        .with_inter_threads(config.inter_op_threads)
        .map_err(|e| builder_error("set inter_op_threads", &e))?;
    if config.inter_op_threads > 1 {
        // Inter-op threads serve only ONNX Runtime's parallel execution mode.
        builder = builder
            .with_parallel_execution(true)
            .map_err(|e| builder_error("enable parallel execution", &e))?;
    }
    if config.provider != Provider::Cpu {
        builder = builder
            .with_execution_providers(execution_providers(runtime, config)?)
            .map_err(|e| {
                PluginError::device(format!(
                    "onnxruntime plugin: cannot enable the {} execution provider on {} (ONNX \
                     Runtime {} at \"{}\"): {e}",
                    config.provider.display_name(),
                    config.device(),
                    runtime.version,
                    runtime.path.display()
                ))
            })?;
    }
    builder.commit_from_file(model).map_err(|e| {
        PluginError::unsupported(format!(
            "onnxruntime plugin: ONNX Runtime {} cannot load model = \"{}\": {e}",
            runtime.version,
            model.display()
        ))
    })
}

/// The configured provider, required (error_on_failure); TensorRT with CUDA behind it, when
/// the library has CUDA, for the nodes TensorRT does not take.
fn execution_providers(
    runtime: &Runtime,
    config: &Config,
) -> Result<Vec<ExecutionProviderDispatch>, PluginError> {
    let provider = config.provider;
    let has = |p: Provider| runtime.providers.iter().any(|name| name == p.ort_name());
    if !has(provider) {
        return Err(PluginError::unsupported(format!(
            "onnxruntime plugin: the ONNX Runtime library at \"{}\" (version {}) has no {} \
             execution provider (available: {}); provider = \"{provider}\" needs a build with it, \
             e.g. {}",
            runtime.path.display(),
            runtime.version,
            provider.display_name(),
            runtime.providers.join(", "),
            match provider {
                Provider::Openvino => "pip's onnxruntime-openvino",
                _ => "pip's onnxruntime-gpu",
            }
        )));
    }
    let device_id = config.device_id as i32;
    let cuda = || ep::CUDA::default().with_device_id(device_id).build();
    Ok(match provider {
        Provider::Cpu => Vec::new(),
        Provider::Cuda => vec![cuda().error_on_failure()],
        Provider::Tensorrt => {
            let tensorrt = ep::TensorRT::default()
                .with_device_id(device_id)
                .build()
                .error_on_failure();
            if has(Provider::Cuda) {
                vec![tensorrt, cuda().fail_silently()]
            } else {
                vec![tensorrt]
            }
        }
        Provider::Openvino => {
            let mut openvino = ep::OpenVINO::default();
            if let Some(device_type) = &config.device_type {
                openvino = openvino.with_device_type(device_type);
            }
            vec![openvino.build().error_on_failure()]
        }
    })
}

pub(crate) struct Engine {
    session: Session,
    /// Computes only the output the plugin returns.
    run_options: RunOptions<HasSelectedOutputs>,
    input: InputSpec,
    output: String,
    /// The outputs each response names (none: responses carry only `output`).
    named_outputs: Vec<CString>,
    /// The outputs a response stacks on a new last axis, and their element size (none:
    /// the response is `output`'s row).
    stacked_outputs: Vec<String>,
    stacked_element_size: usize,
    /// Where the stacked outputs of a batch are interleaved.
    stack_buffer: Vec<u8>,
    memory: MemoryInfo<'static>,
    allocator: Allocator,
    /// Where a batch of several samples is gathered (u64s: aligned for every element type).
    buffer: Vec<u64>,
    stats: BatchStats,
}

/// How the batches of several samples were fed to the model.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BatchStats {
    pub batches: u64,
    /// Read where the host keeps the samples, which lay one after another.
    pub read_in_place: u64,
}

impl BatchStats {
    pub(crate) fn add(&mut self, other: BatchStats) {
        self.batches += other.batches;
        self.read_in_place += other.read_in_place;
    }
}

impl Engine {
    pub(crate) fn new(session: Session, io: &Io) -> Result<Engine, PluginError> {
        let internal = |e: ort::Error| {
            PluginError::internal(format!("onnxruntime plugin: cannot set up a session: {e}"))
        };
        let mut selector = OutputSelector::no_default().with(io.output.name.clone());
        let mut selected = vec![io.output.name.as_str()];
        for extra in io.named_outputs.iter().chain(&io.stacked_outputs) {
            if !selected.contains(&extra.name.as_str()) {
                selected.push(&extra.name);
                selector = selector.with(extra.name.clone());
            }
        }
        let run_options = RunOptions::new().map_err(internal)?.with_outputs(selector);
        let named_outputs = io
            .named_outputs
            .iter()
            .map(|o| CString::new(o.name.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|e| PluginError::invalid_config(format!("onnxruntime plugin: {e}")))?;
        Ok(Engine {
            session,
            run_options,
            input: io.input.clone(),
            output: io.output.name.clone(),
            named_outputs,
            stacked_outputs: io.stacked_outputs.iter().map(|o| o.name.clone()).collect(),
            stacked_element_size: element_size(io.output.ty).unwrap_or(1),
            stack_buffer: Vec::new(),
            memory: MemoryInfo::default(),
            allocator: Allocator::default(),
            buffer: Vec::new(),
            stats: BatchStats::default(),
        })
    }

    pub(crate) fn stats(&self) -> BatchStats {
        self.stats
    }

    /// Runs `batch` (checked samples of `shape`) and completes every sample in one call with
    /// its row of the output; on an error completes none and says what failed.
    /// Runs `batch` (taken from the plugin's queue at `dequeued_ns` of the host's clock) and
    /// completes its samples, telling the host first where their time went: the session's
    /// run is their compute (ABI 1.4; a host without the clock reads 0 and gets no report).
    pub(crate) fn infer(
        &mut self,
        batch: &[Item],
        shape: &SampleShape,
        completer: &Completer,
        dequeued_ns: u64,
    ) -> Result<(), String> {
        let clock = || completer.now_ns();
        self.run(batch, shape, &clock, |answers, (start, end)| {
            if start != 0 {
                report_timing(batch, dequeued_ns, start, end, completer);
            }
            match answers {
                Answers::Plain(responses) => completer.complete(responses),
                Answers::Named(responses) => completer.complete_named(responses),
            }
        })
    }

    /// Runs one batch of `count` samples of zeros and drops the answers, so that ONNX
    /// Runtime's first-run costs (memory planning, buffer growth) fall at create rather than
    /// in the test. A model with dynamic sample dimensions has no one shape to warm up with:
    /// then Ok(false).
    pub(crate) fn warm_up(&mut self, count: usize) -> Result<bool, String> {
        // A stacked sample's dims hold its stacking axis already.
        let dims = &self.input.sample_dims;
        let Some(shape) = SampleShape::fixed(dims, self.input.element_size) else {
            return Ok(false);
        };
        let zeros = vec![0u64; (shape.bytes * count).div_ceil(8)];
        let start = zeros.as_ptr().cast::<u8>();
        let batch: Vec<Item> = (0..count)
            // SAFETY: inside `zeros`, which outlives the run.
            .map(|i| Item::at(unsafe { start.add(i * shape.bytes) }))
            .collect();
        let run = self.run(&batch, &shape, &|| 0, |_, _| {});
        self.stats = BatchStats::default();
        run.map(|()| true)
    }

    /// Runs `batch` and hands every sample's response to `answer` at once, with when the
    /// session's run began and ended on `clock`.
    fn run(
        &mut self,
        batch: &[Item],
        shape: &SampleShape,
        clock: &dyn Fn() -> u64,
        answer: impl FnOnce(Answers<'_>, (u64, u64)),
    ) -> Result<(), String> {
        let n = batch.len();
        if n == 0 {
            return Ok(());
        }
        // A stacked sample [K, d...] feeds K inputs of [n, d...]; a plain one, one of [n, dims].
        let rows = self.input.feeds.len();
        let dims = shape.dims();
        let row_dims = if self.input.is_stacked() {
            &dims[1..]
        } else {
            dims
        };
        let mut input_shape = [0i64; MAX_RANK + 1];
        input_shape[0] = n as i64;
        input_shape[1..=row_dims.len()].copy_from_slice(row_dims);
        let input_shape = &input_shape[..=row_dims.len()];
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            format!(
                "onnxruntime plugin: {what} for a batch of {n} sample(s) (data-set indices {}): {e}",
                indices(batch)
            )
        };

        let (bytes, in_place) = gather(
            batch,
            shape,
            rows,
            &mut self.buffer,
            self.input.element_size,
        );
        if n > 1 {
            self.stats.batches += 1;
            self.stats.read_in_place += u64::from(in_place);
        }
        let block = bytes.len() / rows;
        let tensors = self
            .input
            .feeds
            .iter()
            .map(|feed| {
                let row = feed.row.unwrap_or(0);
                InputTensor::borrow(
                    &bytes[row * block..(row + 1) * block],
                    input_shape,
                    self.input.ty,
                    &self.memory,
                    &self.allocator,
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| failed("cannot make the input tensor", &e))?;
        // In the model's input order, as ONNX Runtime takes a slice of values.
        let values: Vec<SessionInputValue<'_>> =
            tensors.iter().map(|tensor| tensor.value().into()).collect();
        let compute_start = clock();
        let outputs = self
            .session
            .run_with_options(values.as_slice(), &self.run_options)
            .map_err(|e| failed("ONNX Runtime failed", &e))?;
        let span = (compute_start, clock());
        // An output's bytes, one row per sample of the batch.
        let rows_of = |name: &str| -> Result<&[u8], String> {
            let value = outputs
                .get(name)
                .ok_or_else(|| failed("no output", &name))?;
            let (shape, bytes) =
                output_bytes(value, name).map_err(|e| failed("unusable output", &e))?;
            if shape.first() != Some(&(n as i64)) {
                return Err(failed(
                    "the output does not count the samples along its first axis",
                    &format!("output '{name}' has shape {shape:?}"),
                ));
            }
            Ok(bytes)
        };
        let out_bytes = if self.stacked_outputs.is_empty() {
            rows_of(&self.output)?
        } else {
            let parts = self
                .stacked_outputs
                .iter()
                .map(|name| rows_of(name))
                .collect::<Result<Vec<_>, String>>()?;
            if parts.iter().any(|part| part.len() != parts[0].len()) {
                return Err(failed(
                    "the stacked outputs differ in size",
                    &format!("{:?}", self.stacked_outputs),
                ));
            }
            stack_last_axis(&parts, self.stacked_element_size, &mut self.stack_buffer);
            &self.stack_buffer
        };
        if !self.named_outputs.is_empty() {
            let named = self
                .named_outputs
                .iter()
                .map(|name| Ok((name.as_c_str(), rows_of(name.to_str().unwrap_or_default())?)))
                .collect::<Result<Vec<_>, String>>()?;
            answer_with_outputs(batch, out_bytes, &named, |answers| answer(answers, span));
            return Ok(());
        }
        if let [item] = batch {
            answer(Answers::Plain(&[Response::new(item.id, out_bytes)]), span);
            return Ok(());
        }
        let row = out_bytes.len() / n;
        let responses: Vec<Response<'_>> = batch
            .iter()
            .enumerate()
            .map(|(i, item)| Response::new(item.id, &out_bytes[i * row..(i + 1) * row]))
            .collect();
        answer(Answers::Plain(&responses), span);
        Ok(())
    }
}

/// `parts` (equal-sized tensors of `element` bytes per value) interleaved value by value into
/// `out`: numpy's `np.stack(parts, axis=-1)`, so each sample's row stays contiguous.
fn stack_last_axis(parts: &[&[u8]], element: usize, out: &mut Vec<u8>) {
    let values = parts.first().map_or(0, |p| p.len() / element);
    out.clear();
    out.reserve(values * element * parts.len());
    for v in 0..values {
        for part in parts {
            out.extend_from_slice(&part[v * element..(v + 1) * element]);
        }
    }
}

/// Every sample of `batch` left the queue at `dequeued_ns` and was computed from `start` to
/// `end` (the batch's run).
fn report_timing(batch: &[Item], dequeued_ns: u64, start: u64, end: u64, completer: &Completer) {
    let timing = |item: &Item| SampleTiming::new(item.id, start, end).dequeued_at(dequeued_ns);
    if let [item] = batch {
        // One sample (SingleStream, Server unbatched): no allocation.
        return completer.report_timing(&[timing(item)]);
    }
    let timings: Vec<SampleTiming> = batch.iter().map(timing).collect();
    completer.report_timing(&timings);
}

/// A batch's responses, as the plugin hands them to the host.
pub(crate) enum Answers<'a> {
    Plain(&'a [Response<'a>]),
    /// With named outputs (config `outputs`).
    Named(&'a [NamedResponse<'a>]),
}

/// Every sample's response: its row of `main` as data, and its row of each named output.
fn answer_with_outputs(
    batch: &[Item],
    main: &[u8],
    named: &[(&CStr, &[u8])],
    answer: impl FnOnce(Answers<'_>),
) {
    let n = batch.len();
    let row = |bytes: &[u8]| bytes.len() / n;
    let outputs: Vec<Output<'_>> = (0..n)
        .flat_map(|i| {
            named.iter().map(move |(name, bytes)| {
                let at = i * row(bytes);
                Output::new(name, &bytes[at..at + row(bytes)])
            })
        })
        .collect();
    let k = named.len();
    let responses: Vec<NamedResponse<'_>> = batch
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Response::new(item.id, &main[i * row(main)..(i + 1) * row(main)])
                .with_outputs(&outputs[i * k..(i + 1) * k])
        })
        .collect();
    answer(Answers::Named(&responses));
}

/// The batch's input bytes as `rows` blocks, block k holding row k of every sample in turn
/// (samples [K, d...] become K tensors [n, d...]; one row: the samples one after another). A
/// single sample, or one-row samples lying back to back, are already so laid out and are used
/// in place when aligned (the host aligns samples to 64 bytes): then the flag is true.
/// Otherwise the rows are copied into `buffer`.
fn gather<'a>(
    batch: &[Item],
    shape: &SampleShape,
    rows: usize,
    buffer: &'a mut Vec<u64>,
    align: usize,
) -> (&'a [u8], bool) {
    // One sample, or samples of one row each, back to back: already laid out so.
    if batch.len() == 1 || rows == 1 {
        if let Some(bytes) = in_place(batch, shape) {
            if (bytes.as_ptr() as usize).is_multiple_of(align) {
                return (bytes, true);
            }
        }
    }
    let total = shape.bytes * batch.len();
    let words = total.div_ceil(8);
    if buffer.len() < words {
        buffer.resize(words, 0);
    }
    // SAFETY: `words` u64s are `total` bytes or more; u8 has no alignment or validity needs.
    let out = unsafe { std::slice::from_raw_parts_mut(buffer.as_mut_ptr().cast::<u8>(), total) };
    let row = shape.bytes / rows;
    let block = row * batch.len();
    for (i, item) in batch.iter().enumerate() {
        // The samples lie at random places in the host's arena: fetching one a little ahead
        // overlaps its cache misses with this copy (small samples gather about 1.5x faster).
        if let Some(ahead) = batch.get(i + PREFETCH_DISTANCE) {
            prefetch(&ahead.bytes(shape)[..shape.bytes.min(PREFETCH_BYTES)]);
        }
        for (k, bytes) in item.bytes(shape).chunks_exact(row).enumerate() {
            let at = k * block + i * row;
            out[at..at + row].copy_from_slice(bytes);
        }
    }
    (out, false)
}

/// The batch's bytes where its samples lie one after another in memory, as they do in the
/// host's arena when a batch is a run of neighbouring samples (see `arena_order`).
fn in_place<'a>(batch: &[Item], shape: &SampleShape) -> Option<&'a [u8]> {
    let first = batch.first()?.data();
    let adjacent = batch
        .iter()
        .enumerate()
        .all(|(i, item)| item.data() == first.wrapping_add(i * shape.bytes));
    // SAFETY: each sample's `shape.bytes` bytes are readable until it is completed (see
    // `Item::bytes`), and they follow each other without a gap, so the whole span is.
    adjacent.then(|| unsafe { std::slice::from_raw_parts(first, shape.bytes * batch.len()) })
}

/// How many samples ahead of the copy `gather` prefetches, and how much of each: enough lines
/// for small samples; the hardware prefetcher follows a large one's stream by itself.
const PREFETCH_DISTANCE: usize = 2;
const PREFETCH_BYTES: usize = 4096;

/// Asks the CPU to bring `bytes` into its caches (a hint: no effect on what is read).
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: prefetching is a hint that never faults; the address is inside `bytes`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// "3, 17, 99" or "3, 17, 99, … (64 in all)".
fn indices(batch: &[Item]) -> String {
    let shown: Vec<String> = batch.iter().take(3).map(|i| i.index.to_string()).collect();
    if batch.len() > 3 {
        format!("{}, … ({} in all)", shown.join(", "), batch.len())
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod stacking_tests {
    use super::stack_last_axis;

    /// Two [2, 3] float32 outputs become [2, 3, 2]: numpy's np.stack(.., -1), start and end
    /// logits side by side per position, each sample's row contiguous.
    #[test]
    fn outputs_are_interleaved_value_by_value() {
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let start = f(&[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
        let end = f(&[-0.0, -1.0, -2.0, -10.0, -11.0, -12.0]);
        let mut out = vec![7u8; 3];
        stack_last_axis(&[&start, &end], 4, &mut out);
        let values: Vec<f32> = out
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            values,
            [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 10.0, -10.0, 11.0, -11.0, 12.0, -12.0]
        );
    }
}
