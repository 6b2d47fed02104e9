//! The host's integration tests, one binary: the CLI, plugins, data sets, preprocessing, power,
//! audit and submission flows, the network and ONNX Runtime backends, the official engine, and
//! the differential test against the official wheel.
//!
//! A test whose verdict rests on timings lives in its file's `mod timed`: `scripts/test.sh` runs
//! those one at a time after the rest (`-- --skip timed::`, then `-- timed::
//! --test-threads=1`), with nothing beside them to take the CPU they measure.

mod audit_runs;
mod bert_runs;
mod campaign_runs;
mod cli_benchmark;
mod cli_plugins;
mod cli_progress;
mod cli_run;
mod dataset_runs;
mod device_spread;
mod differential_official;
mod faulty_plugins;
mod host_batching;
mod interactive_runs;
mod isolated_meters;
mod isolated_plugins;
mod llama2_runs;
mod llama_runs;
mod llm_runs;
mod llm_token_prompts;
mod named_inputs;
mod network_runs;
mod official_engine;
mod onnxruntime_runs;
mod plugin_layout_skew;
mod plugin_refusals;
mod plugin_runs;
mod power_dev_sessions;
mod power_plugin;
mod power_runs;
mod preprocess_runs;
mod report_runs;
mod resnet_runs;
mod round_rules;
mod sample_memory;
mod sample_sets;
mod sample_timing;
mod session;
mod signals;
mod stalled_plugins;
mod submission_flow;
mod support;
mod sweep_runs;
mod sysinfo;
mod tune_runs;
mod unet3d_runs;
mod whisper_runs;
mod yolo_runs;
