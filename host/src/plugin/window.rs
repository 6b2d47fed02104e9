//! 3D-UNet's sliding window, done by the host so that a plugin only runs the model on a
//! window (`[postprocess] kind = "sliding-window"`). Each issued sample, a float32
//! `(1, D, H, W)` volume, goes to the thread `mlperf-window`, which copies its 128³ windows
//! (stride 64, in the reference's order) into buffers of its own and hands each to the
//! plugin as a `(1, 128, 128, 128)` sample with an id of the host's. Each answer,
//! `(3, 128, 128, 128)` float32, is weighted by the Gaussian importance map and added to the
//! volume's sums in window order (`mlperf-kits19`'s combiner: the reference's float32
//! arithmetic, bit for bit); the answer that completes a volume also divides and takes the
//! argmax, and completes the sample with its `D·H·W` uint8 labels. Windows are timed as the
//! reference's SUT times them: from the sample's issue to its labels.
//!
//! A few buffers are in flight at once ([`BUFFERS`]), so at most a few volumes' sums are
//! held, whatever the query's size (Offline issues every case at once).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use mlperf_kits19::window::{importance_map, patch_origins, Combiner, CLASSES, ROI};
use mlperf_plugin_api::ffi;
use mlperf_plugin_api::sdk::DType;

use super::batching::IssueFn;
use super::host_api::take_error;
use crate::loadgen::{Completer, QuerySampleResponse, ResponseId};

/// Window buffers (8 MiB each) with the plugin or being filled, at most.
pub(crate) const BUFFERS: usize = 8;
/// Windows per issue_query call when the run sets no batch.
const DEFAULT_CALL: usize = BUFFERS / 2;
const WINDOW_VOXELS: usize = ROI * ROI * ROI;
/// The shape each window is handed over with.
static WINDOW_SHAPE: [i64; 4] = [1, ROI as i64, ROI as i64, ROI as i64];
/// Window ids have the top bit set: they never look like a sample's.
const WINDOW_ID: u64 = 1 << 63;

/// What the issuing side, the window thread and the plugin's completions share.
pub(crate) struct WindowState {
    plugin: String,
    weights: Arc<[f32]>,
    queue: Mutex<Queue>,
    queued: Condvar,
    free: Mutex<Vec<Box<[f32]>>>,
    freed: Condvar,
    /// The windows with the plugin, by id.
    handed: Mutex<HashMap<u64, Handed>>,
    next_id: AtomicU64,
    stopping: AtomicBool,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    stop: bool,
}

/// An issued sample: its volume in the loaded set (valid until it completes).
struct Job {
    id: ResponseId,
    index: u64,
    volume: *const f32,
    shape: [usize; 3],
    completer: Completer,
}

// SAFETY: the volume points into the loaded set, read-only and valid until the sample
// completes, whichever thread reads it.
unsafe impl Send for Job {}

/// A window with the plugin.
struct Handed {
    volume: Arc<Volume>,
    ordinal: usize,
    buffer: Box<[f32]>,
}

/// A volume whose windows are out.
struct Volume {
    id: ResponseId,
    /// Each window's origin, in the reference's order.
    origins: Vec<[usize; 3]>,
    completer: Completer,
    sums: Mutex<Sums>,
}

struct Sums {
    /// The next window to add: answers are added in window order, as float32 sums depend
    /// on it; earlier answers wait here.
    next: usize,
    early: BTreeMap<usize, Vec<f32>>,
    combiner: Option<Combiner>,
}

impl WindowState {
    pub(crate) fn new(plugin: String) -> Arc<WindowState> {
        Arc::new(WindowState {
            plugin,
            weights: importance_map(ROI).into(),
            queue: Mutex::new(Queue::default()),
            queued: Condvar::new(),
            free: Mutex::new(Vec::new()),
            freed: Condvar::new(),
            handed: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
        })
    }

    /// Queues each issued sample's windows; a sample that is not a float32 `(1, D, H, W)`
    /// volume is answered empty and fails the run.
    pub(crate) fn issue(&self, samples: &[ffi::mlperf_sample], completer: &Completer) {
        let mut queue = lock(&self.queue);
        for sample in samples {
            match volume_shape(sample) {
                Ok(shape) => queue.jobs.push_back(Job {
                    id: ResponseId(sample.id),
                    index: sample.index,
                    volume: sample.data as *const f32,
                    shape,
                    completer: completer.clone(),
                }),
                Err(why) => {
                    completer.fail(format!(
                        "plugin {}: sample {} cannot go through the sliding window: {why}",
                        self.plugin, sample.index
                    ));
                    completer.query_samples_complete(&[QuerySampleResponse::new(
                        ResponseId(sample.id),
                        &[],
                    )]);
                }
            }
        }
        drop(queue);
        self.queued.notify_one();
    }

    /// Takes the plugin's answers to windows (every response of a windowed run is one).
    pub(crate) fn take(&self, responses: &[QuerySampleResponse<'_>]) {
        for response in responses {
            let handed = lock(&self.handed).remove(&response.id.0);
            let Some(Handed {
                volume,
                ordinal,
                buffer,
            }) = handed
            else {
                tracing::warn!(plugin = %self.plugin, id = response.id.0, "an answer to no window the host handed out (ignored)");
                continue;
            };
            // The plugin has its answer: it reads the window no more.
            self.give_back(buffer);
            self.add(&volume, ordinal, response.data);
        }
    }

    fn give_back(&self, buffer: Box<[f32]>) {
        lock(&self.free).push(buffer);
        self.freed.notify_one();
    }

    /// Adds window `ordinal`'s answer to its volume's sums (or keeps it until the windows
    /// before it are in); the last one completes the sample.
    fn add(&self, volume: &Volume, ordinal: usize, data: &[u8]) {
        let expected = 4 * CLASSES * WINDOW_VOXELS;
        let mut guard = lock(&volume.sums);
        let sums = &mut *guard;
        let Some(combiner) = sums.combiner.as_mut() else {
            return; // failed already
        };
        if data.len() != expected {
            let message = format!(
                "plugin {}: window {ordinal} of sample id {} answered {} bytes, where a window's answer is the model's float32 (3, 128, 128, 128) output, {expected} bytes",
                self.plugin,
                volume.id.0,
                data.len()
            );
            sums.combiner = None;
            drop(guard);
            return fail_volume(volume, message);
        }
        if ordinal != sums.next {
            sums.early.insert(ordinal, floats(data).into_owned());
            return;
        }
        combiner.add_patch(volume.origins[ordinal], &floats(data));
        sums.next += 1;
        while let Some(answer) = sums.early.remove(&sums.next) {
            combiner.add_patch(volume.origins[sums.next], &answer);
            sums.next += 1;
        }
        if sums.next == volume.origins.len() {
            let labels = combiner.finalize();
            sums.combiner = None;
            drop(guard);
            volume
                .completer
                .query_samples_complete(&[QuerySampleResponse::new(volume.id, &labels)]);
        }
    }

    /// The window thread: each queued sample's windows to the plugin, in calls of `call`.
    fn serve(&self, plugin: Plugin, call: usize) {
        let mut samples: Vec<ffi::mlperf_sample> = Vec::with_capacity(call);
        loop {
            let job = {
                let mut queue = lock(&self.queue);
                loop {
                    if queue.stop {
                        return;
                    }
                    if let Some(job) = queue.jobs.pop_front() {
                        break job;
                    }
                    queue = self.queued.wait(queue).unwrap_or_else(|p| p.into_inner());
                }
            };
            let origins = patch_origins(job.shape);
            let voxels: usize = job.shape.iter().product();
            if origins.is_empty() {
                // No window fits (an axis under 128): the reference's sums stay 0, 0/0 is
                // NaN, and every label 0.
                let labels = vec![0u8; voxels];
                job.completer
                    .query_samples_complete(&[QuerySampleResponse::new(job.id, &labels)]);
                continue;
            }
            let volume = Arc::new(Volume {
                id: job.id,
                origins,
                completer: job.completer.clone(),
                sums: Mutex::new(Sums {
                    next: 0,
                    early: BTreeMap::new(),
                    combiner: Some(Combiner::with_weights(job.shape, Arc::clone(&self.weights))),
                }),
            });
            // SAFETY: the loaded sample, D·H·W float32, valid until it completes, which it
            // cannot before its last window is answered.
            let source = unsafe { std::slice::from_raw_parts(job.volume, voxels) };
            let windows = volume.origins.len();
            for (ordinal, &origin) in volume.origins.iter().enumerate() {
                let Some(mut buffer) = self.take_buffer() else {
                    return; // stopping
                };
                copy_window(source, job.shape, origin, &mut buffer);
                let id = WINDOW_ID | self.next_id.fetch_add(1, Ordering::Relaxed);
                samples.push(ffi::mlperf_sample {
                    struct_size: std::mem::size_of::<ffi::mlperf_sample>(),
                    id,
                    index: job.index,
                    data: buffer.as_ptr() as *const c_void,
                    length: (4 * WINDOW_VOXELS) as u64,
                    dtype: DType::F32.to_raw(),
                    rank: WINDOW_SHAPE.len() as u32,
                    shape: WINDOW_SHAPE.as_ptr(),
                });
                lock(&self.handed).insert(
                    id,
                    Handed {
                        volume: Arc::clone(&volume),
                        ordinal,
                        buffer,
                    },
                );
                if samples.len() == call || ordinal + 1 == windows {
                    if let Err(message) = plugin.issue(&samples) {
                        self.withdraw(&samples);
                        samples.clear();
                        fail_volume(&volume, format!("plugin {}: {message}", self.plugin));
                        break;
                    }
                    samples.clear();
                }
            }
        }
    }

    /// A free window buffer, waiting for the plugin to answer one when all are out; None
    /// when the instance is going (a plugin that stalled never answers).
    fn take_buffer(&self) -> Option<Box<[f32]>> {
        let mut free = lock(&self.free);
        loop {
            if let Some(buffer) = free.pop() {
                return Some(buffer);
            }
            if lock(&self.handed).len() < BUFFERS {
                return Some(vec![0f32; WINDOW_VOXELS].into_boxed_slice());
            }
            if self.stopping.load(Ordering::Acquire) {
                return None;
            }
            free = self
                .freed
                .wait_timeout(free, std::time::Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The windows of a refused call go back: the plugin never took them.
    fn withdraw(&self, samples: &[ffi::mlperf_sample]) {
        for sample in samples {
            let handed = lock(&self.handed).remove(&sample.id);
            if let Some(handed) = handed {
                lock(&handed.volume.sums).combiner = None;
                self.give_back(handed.buffer);
            }
        }
    }

    fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        lock(&self.queue).stop = true;
        self.queued.notify_all();
    }
}

fn fail_volume(volume: &Volume, message: String) {
    volume.completer.fail(message);
    volume
        .completer
        .query_samples_complete(&[QuerySampleResponse::new(volume.id, &[])]);
}

/// The float32 values of an answer, in place when aligned.
fn floats(data: &[u8]) -> std::borrow::Cow<'_, [f32]> {
    // SAFETY: any bit pattern is an f32; align_to only splits off what is misaligned.
    let (head, body, tail) = unsafe { data.align_to::<f32>() };
    if head.is_empty() && tail.is_empty() {
        return std::borrow::Cow::Borrowed(body);
    }
    std::borrow::Cow::Owned(
        data.chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect(),
    )
}

/// The `(D, H, W)` of a float32 `(1, D, H, W)` sample with its data.
fn volume_shape(sample: &ffi::mlperf_sample) -> Result<[usize; 3], String> {
    if sample.data.is_null() {
        return Err("it carries no data (the run loads no data set)".into());
    }
    if sample.dtype != DType::F32.to_raw() || sample.rank != 4 || sample.shape.is_null() {
        return Err(format!(
            "dtype {} rank {}, where the windows are cut from a float32 (1, D, H, W) volume",
            sample.dtype, sample.rank
        ));
    }
    // SAFETY: `rank` dims at `shape`, as the host's own loaded sample describes them.
    let dims = unsafe { std::slice::from_raw_parts(sample.shape, 4) };
    let [one, d, h, w] = [dims[0], dims[1], dims[2], dims[3]];
    if one != 1 || d <= 0 || h <= 0 || w <= 0 {
        return Err(format!(
            "shape {dims:?}, where the windows are cut from a float32 (1, D, H, W) volume"
        ));
    }
    let shape = [d as usize, h as usize, w as usize];
    if sample.length != 4 * shape.iter().product::<usize>() as u64 {
        return Err(format!("{} bytes for shape {dims:?}", sample.length));
    }
    Ok(shape)
}

/// Copies the 128³ window at `origin` of the C-order `shape` volume into `out`.
fn copy_window(volume: &[f32], shape: [usize; 3], origin: [usize; 3], out: &mut [f32]) {
    let [_, h, w] = shape;
    let [z0, y0, x0] = origin;
    for z in 0..ROI {
        for y in 0..ROI {
            let from = ((z0 + z) * h + (y0 + y)) * w + x0;
            let to = (z * ROI + y) * ROI;
            out[to..to + ROI].copy_from_slice(&volume[from..from + ROI]);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The plugin instance the window thread hands windows to.
struct Plugin {
    instance: *mut c_void,
    issue: IssueFn,
}

// SAFETY: the instance is only used through the ABI's issue_query, from this thread alone
// (the windowed run's only issuer), until the thread is joined before destroy.
unsafe impl Send for Plugin {}

impl Plugin {
    fn issue(&self, samples: &[ffi::mlperf_sample]) -> Result<(), String> {
        // SAFETY: per the ABI; each window's buffer stays with the host's map until answered.
        let error =
            unsafe { take_error((self.issue)(self.instance, samples.as_ptr(), samples.len())) };
        match error {
            None => Ok(()),
            Some((code, message)) => Err(format!("issue_query failed (error {code}): {message}")),
        }
    }
}

/// The window thread of one plugin instance; dropping it stops and joins the thread.
pub(crate) struct WindowIssuer {
    state: Arc<WindowState>,
    thread: Option<JoinHandle<()>>,
}

impl WindowIssuer {
    /// Starts the thread handing `state`'s windows to `instance`, `call` per issue_query
    /// (0: a few).
    pub(crate) fn start(
        state: Arc<WindowState>,
        instance: *mut c_void,
        issue: IssueFn,
        call: usize,
    ) -> std::io::Result<WindowIssuer> {
        let plugin = Plugin { instance, issue };
        let call = if call == 0 {
            DEFAULT_CALL
        } else {
            call.min(BUFFERS)
        };
        let serving = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("mlperf-window".into())
            .spawn(move || serving.serve(plugin, call))?;
        Ok(WindowIssuer {
            state,
            thread: Some(thread),
        })
    }

    pub(crate) fn issue(&self, samples: &[ffi::mlperf_sample], completer: &Completer) {
        self.state.issue(samples, completer);
    }
}

impl Drop for WindowIssuer {
    fn drop(&mut self) {
        self.state.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_copied_row_by_row_from_its_origin() {
        let shape = [130, 129, 131];
        let volume: Vec<f32> = (0..shape.iter().product::<usize>())
            .map(|i| i as f32)
            .collect();
        let mut out = vec![0f32; WINDOW_VOXELS];
        copy_window(&volume, shape, [2, 1, 3], &mut out);
        let at = |z: usize, y: usize, x: usize| volume[(z * 129 + y) * 131 + x];
        assert_eq!(out[0], at(2, 1, 3));
        assert_eq!(out[WINDOW_VOXELS - 1], at(129, 128, 130));
        assert_eq!(out[ROI], at(2, 2, 3));
    }

    #[test]
    fn only_float32_volumes_with_their_data_slide() {
        let dims = [1i64, 128, 192, 128];
        let data = [0f32; 4];
        let mut sample = ffi::mlperf_sample {
            struct_size: std::mem::size_of::<ffi::mlperf_sample>(),
            id: 1,
            index: 0,
            data: data.as_ptr() as *const c_void,
            length: 4 * 128 * 192 * 128,
            dtype: DType::F32.to_raw(),
            rank: 4,
            shape: dims.as_ptr(),
        };
        assert_eq!(volume_shape(&sample), Ok([128, 192, 128]));
        sample.length = 12;
        assert!(volume_shape(&sample).unwrap_err().contains("12 bytes"));
        sample.dtype = DType::U8.to_raw();
        assert!(volume_shape(&sample)
            .unwrap_err()
            .contains("float32 (1, D, H, W)"));
        sample.data = std::ptr::null();
        assert!(volume_shape(&sample).unwrap_err().contains("no data"));
    }
}
