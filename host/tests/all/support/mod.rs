//! Shared pieces of the host's integration tests: a recording QSL, the built plugins, temporary
//! directories, C plugins compiled on the fly, the installed ONNX Runtime and data sets.

pub(crate) mod screenshot;
pub(crate) mod servers;
pub(crate) mod short_submission;

pub(crate) use mlperf_host::loadgen::testing::RecordingQsl;

/// A plugin library the workspace build left beside the test binaries
/// (`target/<profile>/` or its `deps/`).
pub(crate) fn plugin_library(file: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    [profile_dir.to_path_buf(), profile_dir.join("deps")]
        .iter()
        .map(|dir| dir.join(file))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{file} is not built in {}: run the tests from the workspace root (cargo test builds every plugin)",
                profile_dir.display()
            )
        })
}

/// The null plugin (plugins/null).
pub(crate) fn null_plugin() -> std::path::PathBuf {
    plugin_library("libmlperf_plugin_null.so")
}

/// The fault-injection plugin (plugins/faulty), its fault chosen by `--plugin-set`.
pub(crate) fn faulty_plugin() -> std::path::PathBuf {
    plugin_library("libmlperf_faulty.so")
}

/// A fresh directory, removed when dropped.
pub(crate) struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub(crate) fn new() -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mlperf-host-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiles the C plugin `source` into `dir/lib<name>.so` against the plugin header, with
/// every warning an error (as a vendor building with -Wall -Wextra -Werror would).
pub(crate) fn compile_c_plugin(
    dir: &std::path::Path,
    name: &str,
    source: &str,
) -> std::path::PathBuf {
    let c = dir.join(format!("{name}.c"));
    let so = dir.join(format!("lib{name}.so"));
    std::fs::write(&c, source).unwrap();
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-api/include");
    let status = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c11", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o",
        ])
        .arg(&so)
        .arg("-I")
        .arg(&include)
        .arg(&c)
        .status()
        .expect("a C compiler");
    assert!(status.success(), "compiling {name}");
    so
}

/// The records of `dir/mlperf_log_accuracy.json`: (qsl_idx, the logged bytes).
pub(crate) fn accuracy_records(dir: &std::path::Path) -> Vec<(u64, Vec<u8>)> {
    let log = std::fs::read_to_string(dir.join("mlperf_log_accuracy.json")).unwrap();
    let records: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    records
        .iter()
        .map(|record| {
            let hex = record["data"].as_str().unwrap();
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (record["qsl_idx"].as_u64().unwrap(), bytes)
        })
        .collect()
}

/// The repository's root.
pub(crate) fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `mlperf-host ARGS` in the repository with ONNX Runtime, for a benchmark whose model
/// `scripts/benchmarks/prepare.sh NAME` makes into data/NAME (`prepared`).
pub(crate) fn onnx_benchmark_host(prepared: &str, args: &[&str]) -> std::process::Output {
    assert!(
        repo().join("data").join(prepared).join("model.onnx").is_file(),
        "data/{prepared} is not prepared: run `bash scripts/benchmarks/prepare.sh {prepared}` (scripts/test.sh does)"
    );
    std::process::Command::new(env!("CARGO_BIN_EXE_mlperf-host"))
        .args(args)
        .current_dir(repo())
        .env("ORT_DYLIB_PATH", ort_library())
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

/// The onnxruntime library of the repository's .venv (or `ORT_DYLIB_PATH`).
pub(crate) fn ort_library() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH") {
        return std::path::PathBuf::from(path);
    }
    let lib = repo().join(".venv/lib");
    std::fs::read_dir(&lib)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| {
            entry
                .path()
                .join("site-packages/onnxruntime/capi/libonnxruntime.so.1.31.1")
        })
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no onnxruntime 1.31.1 in {}: run `bash scripts/setup-onnxruntime.sh` (scripts/test.sh does)",
                lib.display()
            )
        })
}

/// Fails with the command that prepares `benchmark`'s model and data when they are missing.
pub(crate) fn require_data(benchmark: &str) {
    let dir = repo().join("data").join(benchmark);
    let inputs = if benchmark == "minilm" {
        "tokens.npy"
    } else {
        "inputs.npy"
    };
    assert!(
        dir.join("model.onnx").is_file() && dir.join(inputs).is_file(),
        "{} is not prepared: run `bash scripts/benchmarks/prepare.sh {benchmark}` (scripts/test.sh does)",
        dir.display()
    );
}

/// Fails with the status and both streams unless the process succeeded; returns its stdout.
pub(crate) fn assert_success(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// A process's output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished command's status, stdout and stderr, for assertion messages.
pub(crate) fn describe(output: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    )
}

/// Fails with the command's status, stdout and stderr unless it succeeded.
pub(crate) fn assert_ok(output: &std::process::Output) {
    assert!(output.status.success(), "{}", describe(output));
}

/// Held by the tests whose verdict compares timings (TEST01's and TEST04's performance checks)
/// and by the tests that start an LLM server, which takes both cores while it answers: on a
/// 2-core machine one beside the other fails the timings. (Under `scripts/test.sh` the timed
/// tests, each file's `mod timed`, also run apart from every other test.)
pub(crate) fn timings_or_llm() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `mlperf-host ARGS` in `dir`, without the caller's MLPERF_HOST_LOG.
pub(crate) fn mlperf_host<S: AsRef<std::ffi::OsStr>>(
    dir: &std::path::Path,
    args: &[S],
) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mlperf-host"))
        .args(args)
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

/// Copies the directory tree `from` to `to` (created when missing).
pub(crate) fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Replaces each "FILL IN…" value of the JSON object in `path` (a draft system description or
/// measurements.json) as a submitter would.
pub(crate) fn fill_in(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    for value in json.as_object_mut().unwrap().values_mut() {
        if value.as_str().is_some_and(|v| v.starts_with("FILL IN")) {
            *value = serde_json::Value::String("filled in by the test".into());
        }
    }
    std::fs::write(path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
}

/// `dir/systems/<system>.json` from `sysinfo` (a closed edge system with a power meter), with
/// what the draft cannot know filled in as a submitter would.
pub(crate) fn system_description(
    dir: &std::path::Path,
    system: &str,
    submitter: &str,
) -> std::path::PathBuf {
    typed_system_description(dir, system, submitter, "edge")
}

/// [`system_description`] of a `system_type` system (`edge` or `datacenter`).
pub(crate) fn typed_system_description(
    dir: &std::path::Path,
    system: &str,
    submitter: &str,
    system_type: &str,
) -> std::path::PathBuf {
    let system_json = dir.join("systems").join(format!("{system}.json"));
    let path = system_json.to_str().unwrap();
    assert_ok(&mlperf_host(
        &repo(),
        &[
            "sysinfo",
            "--system",
            system,
            "--submitter",
            submitter,
            "--division",
            "closed",
            "--system-type",
            system_type,
            "--status",
            "available",
            "--power",
            "--out",
            path,
        ],
    ));
    fill_in(&system_json);
    system_json
}

/// `mlperf-host check --json TREE` (with `--allow-short` if asked): its exit code and findings.
pub(crate) fn check_json(
    tree: &std::path::Path,
    allow_short: bool,
) -> (Option<i32>, Vec<serde_json::Value>) {
    let mut args = vec!["check", "--json", tree.to_str().unwrap()];
    if allow_short {
        args.push("--allow-short");
    }
    let output = mlperf_host(&repo(), &args);
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    (output.status.code(), findings)
}

/// A version 1.0 .npy file.
pub(crate) fn write_npy(path: &std::path::Path, descr: &str, shape: &str, data: &[u8]) {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
}

/// The gzipped logs of the fixture, unpacked by the system's gzip (the test binary links no
/// inflater).
pub(crate) fn gunzip(gz: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("gzip")
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run gzip");
    child.stdin.take().unwrap().write_all(gz).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    output.stdout
}
