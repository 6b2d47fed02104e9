//! Sample data through the plugin ABI: a `.npy` data set is read into the host's sample arena
//! at load time, and every issued sample reaches the plugin pointing at its own bytes, with its
//! dtype and shape, until it completes. The null plugin answers with the data it was handed.

use crate::support;

use mlperf_host::loadgen::{start_test, LogSettings, TestMode, TestScenario, TestSettings};
use mlperf_host::plugin::{Plugin, PluginBackend, PluginSut};
use mlperf_host::samples::{write_npy, DatasetLibrary, NpySource, SampleSource};
use support::{null_plugin, TempDir};

/// Sample `index` of the test data set: 3×5 f32 values unique to the sample.
fn sample_values(index: usize) -> Vec<f32> {
    (0..15)
        .map(|k| index as f32 * 1000.0 + k as f32 + 0.25)
        .collect()
}

fn le_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn write_dataset(dir: &TempDir, count: usize) -> std::path::PathBuf {
    let path = dir.0.join("samples.npy");
    let data: Vec<u8> = (0..count)
        .flat_map(|i| le_bytes(&sample_values(i)))
        .collect();
    write_npy(&path, "<f4", count, &[3, 5], &data).unwrap();
    path
}

#[test]
fn the_npy_source_reads_each_sample_with_its_layout() {
    let dir = TempDir::new();
    let mut source = NpySource::open(&write_dataset(&dir, 40)).unwrap();
    assert_eq!(source.len(), 40);
    let mut bytes = Vec::new();
    for index in [0, 17, 39] {
        let layout = source.read(index, &mut bytes).unwrap();
        assert_eq!(bytes, le_bytes(&sample_values(index)));
        assert_eq!(layout.shape, vec![3, 5]);
        assert_eq!(layout.dtype, mlperf_plugin_api::sdk::DType::F32);
    }
    let error = source.read(40, &mut bytes).unwrap_err().to_string();
    assert!(
        error.contains("sample 40 is out of range (40 samples)"),
        "{error}"
    );
}

#[test]
fn broken_npy_files_are_refused_with_the_path_and_the_reason() {
    let dir = TempDir::new();
    let good = std::fs::read(write_dataset(&dir, 10)).unwrap();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("short.npy", good[..good.len() - 1].to_vec(), "truncated"),
        (
            "text.npy",
            b"index,value\n0,1\n".to_vec(),
            "not a .npy file",
        ),
        ("empty.npy", Vec::new(), "not a .npy file"),
    ];
    for (name, bytes, reason) in cases {
        let path = dir.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        let error = NpySource::open(&path).err().expect(name).to_string();
        assert!(error.contains(name) && error.contains(reason), "{error}");
    }
    let missing = NpySource::open(&dir.0.join("absent.npy")).err().unwrap();
    assert!(missing.to_string().contains("absent.npy"));
}

#[test]
fn every_scenario_hands_the_plugin_each_samples_own_bytes() {
    let dir = TempDir::new();
    let path = write_dataset(&dir, 120);
    let plugin = Plugin::open(&null_plugin()).unwrap();
    for config in [
        "response = 'data'",
        "response = 'data'\nworkers = 2\nlatency_us = 20",
    ] {
        for scenario in TestScenario::ALL {
            let source = Box::new(NpySource::open(&path).unwrap());
            // Fewer performance samples than samples: accuracy mode loads several sets, and
            // each load replaces the arena's memory.
            let mut library = DatasetLibrary::new(source, 50);
            let mut sut = PluginSut::create(&plugin, config, None).unwrap();
            sut.read_samples_from(library.arena());
            let settings = TestSettings {
                scenario,
                mode: TestMode::AccuracyOnly,
                multi_stream_samples_per_query: 4,
                server_target_qps: 20_000.0,
                ..TestSettings::default()
            };
            let result =
                start_test(&sut, &mut library, &settings, &LogSettings::default()).unwrap();
            assert_eq!(result.series.len(), 3, "{scenario} [{config}]");
            let mut seen = [false; 120];
            for record in &result.accuracy_log {
                assert_eq!(
                    record.data,
                    le_bytes(&sample_values(record.qsl_idx)),
                    "{scenario} [{config}]: sample {}",
                    record.qsl_idx
                );
                seen[record.qsl_idx] = true;
            }
            assert!(seen.iter().all(|s| *s), "{scenario}: every sample answered");
        }
    }
}
