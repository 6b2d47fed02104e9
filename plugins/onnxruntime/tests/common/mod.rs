//! Shared by the plugin's ABI tests: the built plugin loaded with libloading and driven through
//! the raw ABI (as the host drives it), the ONNX Runtime library, the tiny test models and the
//! answers they must give.

#![allow(dead_code)] // each test binary uses its own part

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ::mlperf_plugin_api::ffi::{self, mlperf_plugin_api, mlperf_plugin_entry_fn, mlperf_sample};
use ::mlperf_plugin_api::sdk::PluginError;
use ::mlperf_plugin_api::testing::{Answer, RawInstance, RecordingHost};
use libloading::Library;

/// The cdylib cargo built for this test, beside the test binary in target/<profile>/deps.
pub(crate) fn plugin_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let name = format!(
        "{}mlperf_plugin_onnxruntime{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = deps.join(name);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

fn library() -> &'static Library {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let path = plugin_path();
        // SAFETY: our own plugin; loading it runs no initialisers beyond Rust's std.
        unsafe { Library::new(&path) }.unwrap_or_else(|e| panic!("load {}: {e}", path.display()))
    })
}

pub(crate) fn table() -> &'static mlperf_plugin_api {
    // SAFETY: the entry symbol has the header's signature and returns NULL or a static table.
    unsafe {
        let entry = library()
            .get::<mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
            .expect("entry symbol");
        entry(ffi::ABI_MAJOR, ffi::ABI_MINOR).as_ref()
    }
    .expect("a table for our major")
}

pub(crate) fn create<'a>(
    host: &'a RecordingHost,
    config: &str,
) -> Result<RawInstance<'a>, PluginError> {
    // SAFETY: the table of a loaded plugin; `host` outlives the instance.
    unsafe { RawInstance::create(table(), host, config) }
}

/// The error of a create that must fail.
pub(crate) fn create_error(config: &str) -> PluginError {
    let host = RecordingHost::new();
    let outcome = create(&host, config).map(|_| ());
    match outcome {
        Ok(()) => panic!("create succeeded with {config:?}"),
        Err(error) => error,
    }
}

pub(crate) fn assert_mentions(error: &PluginError, words: &[&str]) {
    for word in words {
        assert!(
            error.message.contains(word),
            "{word:?} is not in the message: {}",
            error.message
        );
    }
}

pub(crate) fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// tests/data/tiny_<name>.onnx (see make_tiny_model.py).
pub(crate) fn model(name: &str) -> PathBuf {
    data_dir().join(format!("tiny_{name}.onnx"))
}

/// A path for TOML text (TOML literal strings take backslashes as they are).
pub(crate) fn toml_path(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// ONNX Runtime for the real-inference tests: ORT_DYLIB_PATH, else the one pip installed into
/// the workspace's .venv (scripts/ set it up); None when neither exists.
pub(crate) fn ort_library() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    venv_library(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv"))
}

/// <venv>/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so.<newest version>.
pub(crate) fn venv_library(venv: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(venv.join("lib"))
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .filter_map(|e| std::fs::read_dir(e.path().join("site-packages/onnxruntime/capi")).ok())
        .flat_map(|dir| dir.flatten().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so."))
        })
        .collect();
    found.sort();
    found.pop()
}

/// The library, or None after printing why the test is skipped.
pub(crate) fn ort_or_skip(test: &str) -> Option<PathBuf> {
    let found = ort_library();
    if found.is_none() {
        eprintln!(
            "SKIPPED {test}: no ONNX Runtime library (set ORT_DYLIB_PATH, or install onnxruntime \
             into the workspace's .venv)"
        );
    }
    found
}

/// The tiny models' weights: W[k][j] = ((5k + 3j) % 7 - 3) (/ 4 for the float models).
pub(crate) fn weight(k: usize, j: usize) -> i64 {
    ((5 * k + 3 * j) % 7) as i64 - 3
}

/// logits of tiny_<f32|u8|i32|i64> for one sample (exact: dyadic numbers, small integers).
pub(crate) fn logits(x: &[i64; 8]) -> [f32; 4] {
    std::array::from_fn(|j| {
        let dot: f32 = (0..8)
            .map(|k| x[k] as f32 * weight(k, j) as f32 / 4.0)
            .sum();
        dot + (j as f32 - 1.5) / 2.0
    })
}

/// scores of tiny_int8 for one sample.
pub(crate) fn scores(x: &[i64; 8]) -> [i32; 4] {
    std::array::from_fn(|j| (0..8).map(|k| (x[k] * weight(k, j)) as i32).sum())
}

/// ArgMax as ONNX takes it: the first of equal maxima.
pub(crate) fn argmax<T: PartialOrd + Copy>(row: &[T]) -> i64 {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best as i64
}

/// Sample `i` of the tests' data sets: 8 small integers.
pub(crate) fn features(i: u64) -> [i64; 8] {
    std::array::from_fn(|k| ((i as usize * 7 + k * 3 + (i as usize * k) % 5) % 16) as i64)
}

/// Host-like sample memory: every sample on a 64-byte boundary (like the host's arena), with
/// its shape, valid while this lives.
pub(crate) struct Samples {
    words: Vec<u64>,
    /// Where sample 0 starts: a 64-byte boundary, plus `misaligned`'s offset.
    skew: usize,
    stride: usize,
    lengths: Vec<usize>,
    shapes: Vec<Vec<i64>>,
    dtype: i32,
}

pub(crate) const U8: i32 = 1;
pub(crate) const I32: i32 = 6;
pub(crate) const I64: i32 = 8;
pub(crate) const F32: i32 = 11;

impl Samples {
    /// `count` samples of `features(i)` as `dtype` (F32, U8, I32, I64), shape [8].
    pub(crate) fn new(count: u64, dtype: i32) -> Samples {
        let encoded = (0..count).map(|i| encode(&features(i), dtype)).collect();
        Samples::from_bytes(encoded, vec![8], dtype)
    }

    /// The same, each sample `offset` bytes past a 64-byte boundary.
    pub(crate) fn misaligned(count: u64, dtype: i32, offset: usize) -> Samples {
        let encoded = (0..count).map(|i| encode(&features(i), dtype)).collect();
        Samples::place(encoded, vec![8], dtype, offset)
    }

    /// `count` samples of `features(i)` as `dtype`, shape [8], one right after another from
    /// a 64-byte boundary (as the host's arena holds samples whose size is a multiple of 64).
    pub(crate) fn packed(count: u64, dtype: i32) -> Samples {
        let encoded: Vec<Vec<u8>> = (0..count).map(|i| encode(&features(i), dtype)).collect();
        let stride = encoded.first().map_or(0, Vec::len);
        Samples::place_at(encoded, vec![8], dtype, 0, stride)
    }

    pub(crate) fn from_bytes(samples: Vec<Vec<u8>>, shape: Vec<i64>, dtype: i32) -> Samples {
        Samples::place(samples, shape, dtype, 0)
    }

    /// Samples of their own shapes.
    pub(crate) fn shaped(samples: Vec<(Vec<u8>, Vec<i64>)>, dtype: i32) -> Samples {
        let (bytes, shapes): (Vec<_>, Vec<_>) = samples.into_iter().unzip();
        let mut made = Samples::place(bytes, Vec::new(), dtype, 0);
        made.shapes = shapes;
        made
    }

    fn place(samples: Vec<Vec<u8>>, shape: Vec<i64>, dtype: i32, offset: usize) -> Samples {
        // 64 spare bytes per sample, for the offset.
        let stride = samples.iter().map(Vec::len).max().unwrap_or(0).div_ceil(64) * 64 + 64;
        Samples::place_at(samples, shape, dtype, offset, stride)
    }

    /// Sample i at `offset + i * stride` past a 64-byte boundary.
    fn place_at(
        samples: Vec<Vec<u8>>,
        shape: Vec<i64>,
        dtype: i32,
        offset: usize,
        stride: usize,
    ) -> Samples {
        assert!(offset < 64);
        let mut words = vec![0u64; (stride * samples.len()).div_ceil(8) + 8];
        let skew = (64 - (words.as_ptr() as usize % 64)) % 64 + offset;
        // SAFETY: the byte view of our own u64 buffer.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8)
        };
        for (i, sample) in samples.iter().enumerate() {
            let at = skew + i * stride;
            bytes[at..at + sample.len()].copy_from_slice(sample);
        }
        Samples {
            words,
            skew,
            stride,
            lengths: samples.iter().map(Vec::len).collect(),
            shapes: vec![shape; samples.len()],
            dtype,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Sample `i`, with id 1000 + i.
    pub(crate) fn sample(&self, i: usize) -> mlperf_sample {
        let base = self.words.as_ptr().cast::<u8>();
        mlperf_sample {
            struct_size: size_of::<mlperf_sample>(),
            id: 1000 + i as u64,
            index: i as u64,
            // SAFETY: inside our buffer.
            data: unsafe { base.add(self.skew + i * self.stride) }.cast(),
            length: self.lengths[i] as u64,
            dtype: self.dtype,
            rank: self.shapes[i].len() as u32,
            shape: self.shapes[i].as_ptr(),
        }
    }

    pub(crate) fn all(&self) -> Vec<mlperf_sample> {
        (0..self.len()).map(|i| self.sample(i)).collect()
    }
}

pub(crate) fn encode(x: &[i64; 8], dtype: i32) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| match dtype {
            F32 => (v as f32).to_le_bytes().to_vec(),
            U8 => vec![v as u8],
            I32 => (v as i32).to_le_bytes().to_vec(),
            I64 => v.to_le_bytes().to_vec(),
            other => panic!("no encoding for dtype {other}"),
        })
        .collect()
}

/// id → data, asserting each id arrived once.
pub(crate) fn by_id(answers: &[Answer]) -> BTreeMap<u64, Vec<u8>> {
    let mut map = BTreeMap::new();
    for answer in answers {
        let previous = map.insert(answer.id, answer.data.clone());
        assert!(previous.is_none(), "id {} completed twice", answer.id);
    }
    map
}

/// The label answer (i64 LE) for sample i of the float models.
pub(crate) fn label_bytes(i: u64) -> Vec<u8> {
    argmax(&logits(&features(i))).to_le_bytes().to_vec()
}

/// The logits answer (f32 LE) for sample i.
pub(crate) fn logits_bytes(i: u64) -> Vec<u8> {
    logits(&features(i))
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}
