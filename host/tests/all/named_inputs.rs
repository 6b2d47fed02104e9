//! Named inputs (ABI 1.3): a data set whose samples stack one row per input along their first
//! axis (or keep each input in a file of its own) reaches the plugin with its inputs listed by
//! name in the run description, each at its place in every sample; a plugin answering with one
//! named input logs exactly those bytes, in-process and isolated. Names that do not fit the data
//! set, and preprocessing of named inputs, are refused before the run; a plugin of ABI 1.2
//! (no run description, plain responses) still runs.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mlperf_host::samples::write_npy;
use support::{accuracy_records, describe, null_plugin, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");
const SAMPLES: usize = 12;

/// int64 [SAMPLES, 3, 4]: value 100 * sample + 10 * row + column.
fn stacked_dataset(dir: &TempDir) -> PathBuf {
    let path = dir.path().join("stacked.npy");
    let data: Vec<u8> = (0..SAMPLES as i64)
        .flat_map(|s| (0..3i64).flat_map(move |r| (0..4i64).map(move |c| 100 * s + 10 * r + c)))
        .flat_map(i64::to_le_bytes)
        .collect();
    write_npy(&path, "<i8", SAMPLES, &[3, 4], &data).unwrap();
    path
}

fn run(dir: &Path, dataset: &Path, extra: &[&str]) -> Output {
    run_plugin(&null_plugin(), dir, dataset, extra)
}

/// An Offline accuracy run of `plugin` over `dataset`.
fn run_plugin(plugin: &Path, dir: &Path, dataset: &Path, extra: &[&str]) -> Output {
    Command::new(EXE)
        .arg("run")
        .arg("--plugin")
        .arg(plugin)
        .arg("--dataset")
        .arg(dataset)
        .args(["--scenario", "Offline", "--mode", "AccuracyOnly"])
        .args(extra)
        .arg("--out")
        .arg(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

/// The accuracy log's records as (sample index, int64 values).
fn logged_values(dir: &Path) -> Vec<(i64, Vec<i64>)> {
    accuracy_records(dir)
        .into_iter()
        .map(|(index, bytes)| {
            let values = bytes
                .chunks(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            (index as i64, values)
        })
        .collect()
}

#[test]
fn a_plugin_reads_each_named_input_at_its_row_in_process_and_isolated() {
    let dir = TempDir::new();
    let dataset = stacked_dataset(&dir);
    for (input, row) in [
        ("input_ids", 0),
        ("attention_mask", 1),
        ("token_type_ids", 2),
    ] {
        for isolate in ["none", "process"] {
            let out = dir.path().join(format!("{input}-{isolate}"));
            let output = run(
                &out,
                &dataset,
                &[
                    "--input-names",
                    "input_ids,attention_mask,token_type_ids",
                    "--plugin-set",
                    "response=\"data\"",
                    "--plugin-set",
                    &format!("answer_input=\"{input}\""),
                    "--isolate",
                    isolate,
                ],
            );
            assert!(output.status.success(), "{}", describe(&output));
            let logged = logged_values(&out);
            assert_eq!(logged.len(), SAMPLES, "{input} {isolate}");
            for (index, values) in logged {
                let expected: Vec<i64> = (0..4).map(|c| 100 * index + 10 * row + c).collect();
                assert_eq!(values, expected, "{input} {isolate}: sample {index}");
            }
        }
    }
}

#[test]
fn without_input_names_a_sample_has_no_named_inputs() {
    let dir = TempDir::new();
    let dataset = stacked_dataset(&dir);
    let out = dir.path().join("out");
    let output = run(
        &out,
        &dataset,
        &[
            "--plugin-set",
            "response=\"data\"",
            "--plugin-set",
            "answer_input=\"input_ids\"",
        ],
    );
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("answer_input = \"input_ids\", but the run's samples have no input of that name (named inputs: [])"),
        "{all}"
    );
}

#[test]
fn input_names_that_do_not_fit_the_data_set_are_refused_before_the_run() {
    let dir = TempDir::new();
    let dataset = stacked_dataset(&dir);
    let out = dir.path().join("out");
    let output = run(&out, &dataset, &["--input-names", "a,b"]);
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(all.contains("input names for"), "{all}");
    assert!(
        all.contains("2 input names (a, b) for samples of shape [3, 4]"),
        "{all}"
    );
    assert!(!out.join("mlperf_log_detail.txt").exists());

    let output = run(&out, &dataset, &["--input-names", "a,b,a"]);
    let all = describe(&output);
    assert!(all.contains("input name \"a\" is given twice"), "{all}");

    let module = dir.write("m.wasm", "not a module");
    let output = Command::new(EXE)
        .args(["run", "--dataset"])
        .arg(&dataset)
        .args(["--input-names", "a,b,c", "--preprocess"])
        .arg(&module)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains(
            "named inputs are handed over as the data set holds them, and cannot be preprocessed"
        ),
        "{all}"
    );
}

/// A plugin built for ABI 1.2 (its own copy of 1.2's response, its table of 1.2's size): it
/// answers each sample with its index as 4 bytes, inline.
const PLUGIN_OF_1_2: &str = r#"#include <string.h>
#include "mlperf_plugin.h"
typedef struct { size_t struct_size; uint64_t id; const void *data; uint64_t length; int64_t n_tokens; } response_1_2;
static mlperf_host_api host;
static mlperf_error *create(const mlperf_host_api *h, const char *c, size_t n, void **i) {
    (void)c; (void)n; memcpy(&host, h, sizeof host < h->struct_size ? sizeof host : h->struct_size);
    *i = &host; return 0; }
static void destroy(void *i) { (void)i; }
static mlperf_error *issue(void *i, const mlperf_sample *s, size_t n) {
    (void)i;
    for (size_t k = 0; k < n; ++k) {
        const mlperf_sample *one = (const mlperf_sample *)((const char *)s + k * s->struct_size);
        uint32_t index = (uint32_t)one->index;
        response_1_2 r = { sizeof r, one->id, &index, 4, 0 };
        host.complete(host.context, (const mlperf_response *)&r, 1);
    }
    return 0; }
static mlperf_error *flush(void *i) { (void)i; return 0; }
static mlperf_plugin_api api;
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t major, uint32_t minor) {
    (void)minor;
    api.struct_size = offsetof(mlperf_plugin_api, load_samples);
    api.abi_major = 1; api.abi_minor = 2; api.kind = MLPERF_PLUGIN_KIND_SUT;
    api.name = "old"; api.version = "0";
    api.create = create; api.destroy = destroy; api.issue_query = issue; api.flush_queries = flush;
    return major == 1 ? &api : 0;
}
"#;

#[test]
fn a_plugin_of_1_2_runs_with_named_inputs_and_cannot_name_outputs() {
    let dir = TempDir::new();
    let plugin = support::compile_c_plugin(dir.path(), "old", PLUGIN_OF_1_2);
    let dataset = stacked_dataset(&dir);
    let run_old = |out: &Path, extra: &[&str]| run_plugin(&plugin, out, &dataset, extra);
    // Offline hands the whole query over at once: the plugin completes the samples one by
    // one; with named inputs too (samples are 1.2's, the inputs listed where 1.2 never looks).
    for extra in [&[][..], &["--input-names", "a,b,c"][..]] {
        let out = dir.path().join(format!("old-{}", extra.len()));
        let output = run_old(&out, extra);
        assert!(output.status.success(), "{}", describe(&output));
        let records = accuracy_records(&out);
        assert_eq!(records.len(), SAMPLES);
        for (index, bytes) in records {
            assert_eq!(bytes, (index as u32).to_le_bytes());
        }
    }
    // A run that logs a named output cannot get one from it: the run fails and says why.
    let out = dir.path().join("old-named");
    let output = run_old(&out, &["--logged-outputs", "scores"]);
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("without the output 'scores' the run logs: it named none"),
        "{all}"
    );
}

#[test]
fn the_c_example_finds_each_named_input_through_the_headers_helpers() {
    let dir = TempDir::new();
    let dataset = stacked_dataset(&dir);
    let example = support::plugin_library("libmlperf_example_c.so");
    let out = dir.path().join("out");
    let output = run_plugin(
        &example,
        &out,
        &dataset,
        &["--input-names", "ids,mask,types", "-v"],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let log = describe(&output);
    // Rows of 4 int64 (dtype 8): 32 bytes each, one after another.
    for (name, offset) in [("ids", 0), ("mask", 32), ("types", 64)] {
        let line = format!("input '{name}': 32 bytes at offset {offset}, dtype 8, rank 1");
        assert!(log.contains(&line), "{line}\n{log}");
    }
}

/// Two inputs of different element types and shapes, a file each: `ids` int64 [SAMPLES, 4]
/// (100 * sample + column) and `scale` float32 [SAMPLES, 3] (sample + column / 4).
fn input_files(dir: &TempDir, scale_samples: usize) -> (PathBuf, PathBuf) {
    let ids = dir.path().join("ids.npy");
    let data: Vec<u8> = (0..SAMPLES as i64)
        .flat_map(|s| (0..4i64).map(move |c| 100 * s + c))
        .flat_map(i64::to_le_bytes)
        .collect();
    write_npy(&ids, "<i8", SAMPLES, &[4], &data).unwrap();
    let scale = dir.path().join("scale.npy");
    let data: Vec<u8> = (0..scale_samples)
        .flat_map(|s| (0..3).map(move |c| s as f32 + c as f32 / 4.0))
        .flat_map(f32::to_le_bytes)
        .collect();
    write_npy(&scale, "<f4", scale_samples, &[3], &data).unwrap();
    (ids, scale)
}

#[test]
fn inputs_of_their_own_files_keep_their_types_and_shapes() {
    let dir = TempDir::new();
    let (ids, scale) = input_files(&dir, SAMPLES);
    let ids_arg = format!("ids={}", ids.display());
    let scale_arg = format!("scale={}", scale.display());
    let run_files = |out: &Path, plugin: &Path, extra: &[&str]| {
        let mut args = vec!["--dataset-input", &ids_arg, "--dataset-input", &scale_arg];
        args.extend_from_slice(extra);
        Command::new(EXE)
            .arg("run")
            .arg("--plugin")
            .arg(plugin)
            .args(["--scenario", "Offline", "--mode", "AccuracyOnly"])
            .args(&args)
            .arg("--out")
            .arg(out)
            .env_remove("MLPERF_HOST_LOG")
            .output()
            .unwrap()
    };
    for isolate in ["none", "process"] {
        let out = dir.path().join(format!("scale-{isolate}"));
        let output = run_files(
            &out,
            &null_plugin(),
            &[
                "--plugin-set",
                "response=\"data\"",
                "--plugin-set",
                "answer_input=\"scale\"",
                "--isolate",
                isolate,
            ],
        );
        assert!(output.status.success(), "{}", describe(&output));
        let records = accuracy_records(&out);
        assert_eq!(records.len(), SAMPLES);
        for (index, bytes) in records {
            let expected: Vec<u8> = (0..3)
                .map(|c| index as f32 + c as f32 / 4.0)
                .flat_map(f32::to_le_bytes)
                .collect();
            assert_eq!(bytes, expected, "{isolate}: sample {index}");
        }
    }
    // Through the C header: int64 rows of 32 bytes first, then the float32 rows 64 bytes in
    // (each input starts aligned to 64 bytes).
    let example = support::plugin_library("libmlperf_example_c.so");
    let output = run_files(&dir.path().join("example"), &example, &["-v"]);
    assert!(output.status.success(), "{}", describe(&output));
    let log = describe(&output);
    for line in [
        "input 'ids': 32 bytes at offset 0, dtype 8, rank 1",
        "input 'scale': 12 bytes at offset 64, dtype 11, rank 1",
    ] {
        assert!(log.contains(line), "{line}\n{log}");
    }

    // Files of different lengths are refused, naming both.
    let short = TempDir::new();
    let (_, short_scale) = input_files(&short, SAMPLES - 2);
    let short_arg = format!("scale={}", short_scale.display());
    let output = Command::new(EXE)
        .args([
            "run",
            "--dataset-input",
            &ids_arg,
            "--dataset-input",
            &short_arg,
        ])
        .arg("--out")
        .arg(dir.path().join("short"))
        .output()
        .unwrap();
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("input 'scale' has 10 samples where input 'ids'"),
        "{all}"
    );
}
