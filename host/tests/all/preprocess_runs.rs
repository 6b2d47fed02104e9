//! Sandboxed WebAssembly preprocessing wired into the sample library and the plugin path: the
//! shipped modules give the native reference's bytes on real photographs and Python's bytes on
//! Fashion-MNIST; every scenario hands the plugin preprocessed samples, untimed (at load) and
//! timed (per issued sample); a failing module refuses to start the run when untimed and ends
//! it INVALID with the module's message when timed; the logs name the module and its sha256.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mlperf_host::loadgen::{
    start_test, LogSettings, StopReason, TestMode, TestScenario, TestSettings,
};
use mlperf_host::plugin::{Plugin, PluginBackend, PluginSut};
use mlperf_host::samples::{write_npy, DatasetLibrary, NpySource, Preprocessing, SampleSource};
use support::{null_plugin, TempDir};
use wasm_preprocess::{reference, PreprocessModule, Sandbox};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn module(name: &str) -> PathBuf {
    repo().join(format!("wasm-preprocess/modules/{name}/{name}.wasm"))
}

fn require(path: &Path, prepare: &str) {
    assert!(
        path.is_file(),
        "{} is missing: run `bash scripts/benchmarks/prepare.sh {prepare}` (scripts/test.sh does)",
        path.display()
    );
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Fashion-MNIST-shaped samples (uint8 28x28), distinct per sample.
fn pixels(index: usize) -> Vec<u8> {
    (0..784)
        .map(|k| ((k * 7 + index * 13) % 256) as u8)
        .collect()
}

fn write_pixels(dir: &TempDir, count: usize) -> PathBuf {
    let path = dir.0.join("pixels.npy");
    let data: Vec<u8> = (0..count).flat_map(pixels).collect();
    write_npy(&path, "|u1", count, &[28, 28], &data).unwrap();
    path
}

fn expected_fmnist(index: usize) -> Vec<u8> {
    let mut out = vec![0f32; 784];
    reference::fmnist(&pixels(index), &mut out);
    f32_bytes(&out)
}

#[test]
fn the_image_module_matches_the_native_reference_on_real_photographs() {
    let dir = repo().join("data/images");
    let module =
        PreprocessModule::load(&module("image-classification"), Sandbox::default()).unwrap();
    let mut worker = module.worker().unwrap();
    let mut expected = vec![0f32; reference::IMAGE_OUTPUT_LEN];
    let mut checked = 0;
    for file in ["photos.npy", "photos_portrait.npy", "crops.npy"] {
        let path = dir.join(file);
        require(&path, "images");
        let mut source = NpySource::open(&path).unwrap();
        let mut bytes = Vec::new();
        for index in 0..source.len() {
            let layout = source.read(index, &mut bytes).unwrap();
            let (height, width) = (layout.shape[0] as usize, layout.shape[1] as usize);
            reference::image_classification(&bytes, height, width, &mut expected);
            let shape: Vec<u64> = layout.shape.iter().map(|&d| d as u64).collect();
            let output = worker.run(index, &bytes, &shape).unwrap();
            assert!(
                output.data == f32_bytes(&expected).as_slice(),
                "{file} sample {index}: differs from the native reference"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2 + 2 + 64);
}

#[test]
fn the_fmnist_module_gives_pythons_float_inputs_bit_for_bit() {
    let raw = repo().join("data/fmnist/inputs_u8.npy");
    let floats = repo().join("data/fmnist/inputs.npy");
    require(&raw, "fmnist");
    let (mut raw, mut floats) = (
        NpySource::open(&raw).unwrap(),
        NpySource::open(&floats).unwrap(),
    );
    assert_eq!(raw.len(), floats.len());
    let module = PreprocessModule::load(&module("fmnist"), Sandbox::default()).unwrap();
    let mut worker = module.worker().unwrap();
    let (mut pixels, mut python) = (Vec::new(), Vec::new());
    for index in 0..raw.len() {
        raw.read(index, &mut pixels).unwrap();
        floats.read(index, &mut python).unwrap();
        let output = worker.run(index, &pixels, &[28, 28]).unwrap();
        assert_eq!(output.data, python.as_slice(), "sample {index}");
    }
}

#[test]
fn every_scenario_hands_the_plugin_preprocessed_samples_untimed_and_timed() {
    let dir = TempDir::new();
    let path = write_pixels(&dir, 120);
    let plugin = Plugin::open(&null_plugin()).unwrap();
    for timed in [false, true] {
        let preprocessing = Arc::new(Preprocessing::load(&module("fmnist"), timed).unwrap());
        for config in [
            "response = 'data'",
            "response = 'data'\nworkers = 2\nlatency_us = 20",
        ] {
            for scenario in TestScenario::ALL {
                let source = Box::new(NpySource::open(&path).unwrap());
                let mut library = DatasetLibrary::new(source, 50);
                library.preprocess_with(Arc::clone(&preprocessing)).unwrap();
                let mut sut = PluginSut::create(&plugin, config, None).unwrap();
                sut.read_samples_from(library.arena());
                if timed {
                    sut.preprocess_timed(Arc::clone(&preprocessing));
                }
                let settings = TestSettings {
                    scenario,
                    mode: TestMode::AccuracyOnly,
                    multi_stream_samples_per_query: 4,
                    server_target_qps: 20_000.0,
                    ..TestSettings::default()
                };
                let result =
                    start_test(&sut, &mut library, &settings, &LogSettings::default()).unwrap();
                let what = format!("{scenario} timed={timed} [{config}]");
                let mut seen = [false; 120];
                for record in &result.accuracy_log {
                    seen[record.qsl_idx] = true;
                    assert_eq!(
                        record.data,
                        expected_fmnist(record.qsl_idx),
                        "{what}: sample {}",
                        record.qsl_idx
                    );
                }
                assert!(seen.iter().all(|s| *s), "{what}: every sample answered");
            }
        }
    }
}

/// A module that copies its uint8 input, and fails (code -7) on a sample whose first byte is
/// 255.
fn failing_module(dir: &TempDir) -> PathBuf {
    let metadata = "name=picky\\nversion=0.1.0\\ninput_dtype=uint8\\ninput_shape=28,28\\n\
                    output_dtype=uint8\\noutput_shape=28,28\\n";
    let length = metadata.len() - metadata.matches("\\n").count();
    let text = format!(
        r#"(module
          (memory (export "memory") 1)
          (data (i32.const 1024) "{metadata}")
          (func (export "mlperf_preprocess_abi") (result i32) i32.const 1)
          (func (export "mlperf_preprocess_metadata") (result i32) i32.const 1024)
          (func (export "mlperf_preprocess_metadata_len") (result i32) i32.const {length})
          (func (export "mlperf_preprocess_shape") (result i32) i32.const 0)
          (func (export "mlperf_preprocess_input") (param i32) (result i32) i32.const 4096)
          (func (export "mlperf_preprocess") (param $len i32) (result i32)
            (if (i32.eq (i32.load8_u (i32.const 4096)) (i32.const 255))
              (then (return (i32.const -7))))
            (memory.copy (i32.const 8192) (i32.const 4096) (local.get $len))
            (local.get $len))
          (func (export "mlperf_preprocess_output") (result i32) i32.const 8192))"#
    );
    let path = dir.0.join("picky.wasm");
    std::fs::write(&path, wat::parse_str(text).unwrap()).unwrap();
    path
}

/// 40 samples of 28x28; sample 33 starts with 255.
fn write_poisoned(dir: &TempDir) -> PathBuf {
    let path = dir.0.join("poisoned.npy");
    let mut data: Vec<u8> = (0..40)
        .flat_map(|i| pixels(i).into_iter().map(|p| p.min(254)))
        .collect();
    data[33 * 784] = 255;
    write_npy(&path, "|u1", 40, &[28, 28], &data).unwrap();
    path
}

#[test]
fn timed_preprocessing_that_fails_ends_the_run_invalid_with_the_modules_message() {
    let dir = TempDir::new();
    let preprocessing = Arc::new(Preprocessing::load(&failing_module(&dir), true).unwrap());
    let source = Box::new(NpySource::open(&write_poisoned(&dir)).unwrap());
    let mut library = DatasetLibrary::new(source, 40);
    library.preprocess_with(Arc::clone(&preprocessing)).unwrap();
    let plugin = Plugin::open(&null_plugin()).unwrap();
    let mut sut = PluginSut::create(&plugin, "response = 'data'", None).unwrap();
    sut.read_samples_from(library.arena());
    sut.preprocess_timed(Arc::clone(&preprocessing));
    let settings = TestSettings {
        scenario: TestScenario::SingleStream,
        mode: TestMode::PerformanceOnly,
        min_query_count: 500,
        min_duration_ms: 50,
        ..TestSettings::default()
    };
    let log = LogSettings {
        drain_timeout: Duration::from_millis(500),
        ..LogSettings::default()
    };
    let result = start_test(&sut, &mut library, &settings, &log).unwrap();
    let StopReason::SutFailed(message) = &result.series[0].stop else {
        panic!("stop: {:?}", result.series[0].stop);
    };
    assert!(message.contains("timed preprocessing failed"), "{message}");
    assert!(message.contains("failed on sample 33"), "{message}");
    assert!(
        message.contains("error code -7 (module-specific)"),
        "{message}"
    );
    assert!(message.contains("picky"), "{message}");
    let validity = &result.performance.as_ref().unwrap().validity;
    assert!(!validity.valid);
}

fn mlperf_host(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(EXE)
        .args(args)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

#[test]
fn the_cli_logs_the_module_and_refuses_a_failing_untimed_module_before_the_run() {
    let dir = TempDir::new();
    let data = write_pixels(&dir, 64);
    let out = dir.0.join("run");
    let wasm = module("fmnist");
    let output = mlperf_host(&[
        "run".as_ref(),
        "--dataset".as_ref(),
        data.as_os_str(),
        "--preprocess".as_ref(),
        wasm.as_os_str(),
        "--plugin-set".as_ref(),
        "response=data".as_ref(),
        "--mode".as_ref(),
        "AccuracyOnly".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let sha256 = PreprocessModule::load(&wasm, Sandbox::default())
        .unwrap()
        .identity()
        .sha256
        .clone();
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    assert!(
        detail.contains(&format!(
            "\"key\": \"sut_preprocess_sha256\", \"value\": \"{sha256}\""
        )),
        "{detail}"
    );
    assert!(detail.contains("\"key\": \"sut_preprocess_module\""));
    assert!(detail.contains("\"key\": \"sut_preprocess_timed\", \"value\": \"false\""));
    let result = std::fs::read_to_string(out.join("result.json")).unwrap();
    assert!(result.contains(&sha256), "{result}");
    let accuracy = std::fs::read_to_string(out.join("mlperf_log_accuracy.json")).unwrap();
    let hex: String = expected_fmnist(5)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    assert!(
        accuracy.contains(&format!("\"qsl_idx\" : 5, \"data\" : \"{hex}\""))
            || accuracy.contains(&hex)
    );

    // A module that fails on sample 33 at load: the run does not start; the message names it.
    let poisoned = write_poisoned(&dir);
    let picky = failing_module(&dir);
    let output = mlperf_host(&[
        "run".as_ref(),
        "--dataset".as_ref(),
        poisoned.as_os_str(),
        "--preprocess".as_ref(),
        picky.as_os_str(),
        "--out".as_ref(),
        dir.0.join("refused").as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("failed on sample 33"), "{stderr}");
    assert!(stderr.contains("error code -7"), "{stderr}");

    // Samples the module does not take: refused when the library opens.
    let wrong = dir.0.join("wrong.npy");
    write_npy(&wrong, "|u1", 4, &[28, 27], &[0; 4 * 28 * 27]).unwrap();
    let output = mlperf_host(&[
        "run".as_ref(),
        "--dataset".as_ref(),
        wrong.as_os_str(),
        "--preprocess".as_ref(),
        wasm.as_os_str(),
        "--out".as_ref(),
        dir.0.join("wrong").as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("cannot take samples of uint8 [28,27]"),
        "{stderr}"
    );
    assert!(stderr.contains("it takes uint8 [28,28]"), "{stderr}");
}
