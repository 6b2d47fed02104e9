//! `mlperf-host dataset preprocess`: what the host hands the plugin for every sample of a
//! benchmark's data set, written in the reference's cache layout, to diff against the
//! submitter's own; `dataset convert`: a data set the host cannot read as it is (llama2-70b's
//! pandas pickle) into one it reads.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use mlperf_host::benchmark::DatasetFormat;
use mlperf_host::samples::{
    write_cnndm_token_ids, write_coco_tensors, write_each_sample, write_imagenet_cache,
    write_squad_features, CnnDmFolder, CocoFolder, ImagenetFolder, LibriSpeechFolder,
    Preprocessing, SampleSource, SquadFolder,
};
use mlperf_submission::datasets::imagenet::Layout;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum DatasetCommand {
    /// Write every sample of a benchmark's data set as the host hands it to a plugin, in
    /// the reference's cache layout (ImageNet: <image>.JPEG.npy, float32 [3, 224, 224], and
    /// val_map.txt; COCO: <image>.jpg.npy, float32 [3, 640, 640]; SQuAD: input_ids.npy,
    /// input_mask.npy and segment_ids.npy, int64 [features, 384]), to compare with the
    /// tensors the reference made.
    Preprocess(PreprocessArgs),
    /// Convert llama2-70b's OpenOrca pickle (open_orca_gpt4_tokenized_llama.sampled_24576.pkl,
    /// a pandas DataFrame) once into the JSON file the host reads, beside a link to the
    /// pickle (which the reference's accuracy script reads): run with --dataset-dir OUT
    /// afterwards. Needs a Python with pandas.
    Convert(ConvertArgs),
}

#[derive(clap::Args, Debug)]
pub(crate) struct ConvertArgs {
    /// The benchmark whose data set is converted (llama2-70b-99.9).
    #[arg(long, value_name = "NAME|FILE")]
    benchmark: String,
    /// The folder holding the pickle, or the pickle itself.
    #[arg(long, value_name = "DIR|FILE")]
    dataset_dir: PathBuf,
    /// The folder to write into (created).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The Python that reads the pickle; it must have pandas.
    #[arg(long, value_name = "PYTHON", default_value = "python3")]
    python: PathBuf,
}

#[derive(clap::Args, Debug)]
pub(crate) struct PreprocessArgs {
    /// The benchmark (a name in configs/benchmarks/, or a .toml path).
    #[arg(long, value_name = "NAME|FILE")]
    benchmark: String,
    /// The data set folder [default: the definition's].
    #[arg(long, value_name = "DIR")]
    dataset_dir: Option<PathBuf>,
    /// Only the list's first N samples.
    #[arg(long, value_name = "N")]
    total_samples: Option<usize>,
    /// The folder to write into (created).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub(crate) fn main(command: &DatasetCommand) -> ExitCode {
    super::init_logging(0, false);
    match command {
        DatasetCommand::Preprocess(args) => super::exit_with(preprocess(args)),
        DatasetCommand::Convert(args) => super::exit_with(convert(args)),
    }
}

fn convert(args: &ConvertArgs) -> anyhow::Result<()> {
    let benchmark = super::benchmark::open_with(&args.benchmark, None, None)?;
    if benchmark.format != DatasetFormat::OpenOrca {
        bail!(
            "benchmark {}: its data set is read as it is; `dataset convert` converts llama2-70b's OpenOrca pickle",
            benchmark.name
        );
    }
    let (file, records) =
        mlperf_submission::datasets::openorca::convert(&args.python, &args.dataset_dir, &args.out)?;
    println!(
        "{records} records of {} written to {}: run with --dataset-dir {}",
        args.dataset_dir.display(),
        file.display(),
        args.out.display()
    );
    Ok(())
}

fn preprocess(args: &PreprocessArgs) -> anyhow::Result<()> {
    let benchmark =
        super::benchmark::open_with(&args.benchmark, args.dataset_dir.as_deref(), None)?;
    let module = benchmark
        .preprocess
        .as_ref()
        .map(|section| {
            Preprocessing::load_in(
                &section.module,
                false,
                mlperf_host::samples::sandbox_with(section.limits),
            )
            .with_context(|| format!("preprocessing module {}", section.module.display()))
        })
        .transpose()?;
    let bar = |samples: usize| -> anyhow::Result<ProgressBar> {
        Ok(
            ProgressBar::new(samples as u64).with_style(ProgressStyle::with_template(
                "{bar:40} {pos}/{len} samples {elapsed}",
            )?),
        )
    };
    let (written, layout) = match benchmark.format {
        DatasetFormat::Imagenet => {
            let folder = ImagenetFolder::open(&benchmark.inputs, args.total_samples)?;
            // The reference's cache is its preprocessing's output already.
            let preprocessing = module.as_ref().filter(|_| folder.layout() == Layout::Raw);
            let bar = bar(SampleSource::len(&folder))?;
            let written = write_imagenet_cache(folder, preprocessing, &args.out, |n| {
                bar.set_position(n as u64)
            })
            .with_context(|| format!("cannot write {}", args.out.display()))?;
            bar.finish_and_clear();
            (written, "as the reference's cache lays them out")
        }
        DatasetFormat::Coco => {
            let folder = CocoFolder::open(&benchmark.inputs, args.total_samples)?;
            let bar = bar(SampleSource::len(&folder))?;
            let written = write_coco_tensors(folder, module.as_ref(), &args.out, |n| {
                bar.set_position(n as u64)
            })
            .with_context(|| format!("cannot write {}", args.out.display()))?;
            bar.finish_and_clear();
            (written, "one <image>.npy each, as the model gets them")
        }
        DatasetFormat::Squad => {
            let folder = SquadFolder::open(&benchmark.inputs, args.total_samples)?;
            let bar = bar(SampleSource::len(&folder))?;
            let written = write_squad_features(folder, &args.out, |n| bar.set_position(n as u64))
                .with_context(|| format!("cannot write {}", args.out.display()))?;
            bar.finish_and_clear();
            (
                written,
                "as input_ids.npy, input_mask.npy and segment_ids.npy (int64, a row per feature)",
            )
        }
        DatasetFormat::Cnndm | DatasetFormat::OpenOrca => {
            let folder =
                CnnDmFolder::open(benchmark.format, &benchmark.inputs, args.total_samples)?;
            let bar = bar(SampleSource::len(&folder))?;
            let written = write_cnndm_token_ids(folder, &args.out, |n| bar.set_position(n as u64))
                .with_context(|| format!("cannot write {}", args.out.display()))?;
            bar.finish_and_clear();
            (written, "as <qsl_idx>.npy, each record's tok_input (int32)")
        }
        DatasetFormat::LibriSpeech => {
            let folder = LibriSpeechFolder::open(&benchmark.inputs, args.total_samples)?;
            let bar = bar(SampleSource::len(&folder))?;
            let written = write_each_sample(folder, "<f4", &args.out, |n| bar.set_position(n as u64))
                .with_context(|| format!("cannot write {}", args.out.display()))?;
            bar.finish_and_clear();
            (written, "as <qsl_idx>.npy, each clip's float32 audio (librosa.load(sr=16000))")
        }
        DatasetFormat::Kits19 => bail!(
            "benchmark {}: its data set is preprocess.py's output already ({} holds the float32 volumes the plugin's windows are cut from); nothing is left to preprocess",
            benchmark.name,
            benchmark.inputs.display()
        ),
        DatasetFormat::Npy => bail!(
            "benchmark {}: its data set is one .npy file, which is what the plugin gets already (`dataset preprocess` writes the samples of a data set folder)",
            benchmark.name
        ),
    };
    println!(
        "{written} samples of {} written to {} {layout}",
        benchmark.inputs.display(),
        args.out.display()
    );
    Ok(())
}
