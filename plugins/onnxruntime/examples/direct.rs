//! ONNX Runtime driven directly, without the host or the plugin: the baseline the plugin's
//! numbers are compared with. Same model, same .npy samples, same session settings.
//!
//! ```sh
//! cargo run --release -p mlperf-plugin-onnxruntime --example direct -- \
//!     --model M.onnx --inputs X.npy --library /path/to/libonnxruntime.so.1.31.1 \
//!     [--batch 64] [--intra 1] [--passes 5] [--workers 1] [--output NAME] [--shuffled] \
//!     --mode offline|single-stream
//! ```
//!
//! offline: every sample in batches of --batch, by --workers threads (one session each, the
//! samples split between them), --passes times; prints samples/s per pass. Batches are
//! slices of the file's array, in order; with --shuffled each batch is gathered (copied) from
//! samples in a random order, as an MLPerf Offline query hands them to any harness.
//! single-stream: one sample at a time, in order (--shuffled: in a random order, as LoadGen
//! issues them, so a sample is less often in cache), --passes times over the data set; prints
//! p50/p90 latency and queries/s.

use std::fmt::Debug;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ort::session::{HasSelectedOutputs, OutputSelector, RunOptions, Session};
use ort::value::{PrimitiveTensorElementType, TensorRef};

struct Args {
    model: PathBuf,
    inputs: PathBuf,
    library: PathBuf,
    batch: usize,
    intra: usize,
    passes: usize,
    workers: usize,
    output: Option<String>,
    offline: bool,
    shuffled: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let (mut model, mut inputs, mut library, mut mode, mut output) = (None, None, None, None, None);
    let (mut batch, mut intra, mut passes, mut workers) = (64, 1, 5, 1);
    let mut shuffled = false;
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |text: String| {
            text.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or(format!("{flag} {text}: not a positive integer"))
        };
        match flag.as_str() {
            "--model" => model = Some(PathBuf::from(value()?)),
            "--inputs" => inputs = Some(PathBuf::from(value()?)),
            "--library" => library = Some(PathBuf::from(value()?)),
            "--mode" => mode = Some(value()?),
            "--output" => output = Some(value()?),
            "--batch" => batch = number(value()?)?,
            "--intra" => intra = number(value()?)?,
            "--passes" => passes = number(value()?)?,
            "--workers" => workers = number(value()?)?,
            "--shuffled" => shuffled = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let library = library
        .or_else(|| std::env::var_os("ORT_DYLIB_PATH").map(PathBuf::from))
        .ok_or("--library (or ORT_DYLIB_PATH) is required")?;
    let offline = match mode.as_deref() {
        Some("offline") => true,
        Some("single-stream") => false,
        other => {
            return Err(format!(
                "--mode must be offline or single-stream, not {other:?}"
            ))
        }
    };
    Ok(Args {
        model: model.ok_or("--model is required")?,
        inputs: inputs.ok_or("--inputs is required")?,
        library,
        batch,
        intra,
        passes,
        workers,
        output,
        offline,
        shuffled,
    })
}

/// A .npy file: its element type (descr), shape and little-endian data (8-byte aligned).
struct Npy {
    descr: String,
    shape: Vec<usize>,
    words: Vec<u64>,
    length: usize,
}

impl Npy {
    fn read(path: &PathBuf) -> Result<Npy, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = |why: &str| format!("{}: not a .npy file I can read: {why}", path.display());
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err(bad("no NUMPY magic"));
        }
        let (header_len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 => (
                u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
                12,
            ),
            v => return Err(bad(&format!("version {v}"))),
        };
        let header = std::str::from_utf8(bytes.get(start..start + header_len).ok_or(bad("short"))?)
            .map_err(|_| bad("header is not text"))?;
        let field = |key: &str| -> Result<&str, String> {
            let at = header.find(&format!("'{key}':")).ok_or(bad(key))? + key.len() + 3;
            Ok(header[at..].trim_start())
        };
        if field("fortran_order")?.starts_with("True") {
            return Err(bad("Fortran order"));
        }
        let descr = field("descr")?;
        let descr = descr[1..descr[1..].find('\'').ok_or(bad("descr"))? + 1].to_owned();
        let shape = field("shape")?;
        let shape: Vec<usize> = shape[1..shape.find(')').ok_or(bad("shape"))?]
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().map_err(|_| bad("shape")))
            .collect::<Result<_, _>>()?;
        let data = &bytes[start + header_len..];
        let mut words = vec![0u64; data.len().div_ceil(8)];
        // SAFETY: the byte view of our own u64 buffer.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), data.len()) }
            .copy_from_slice(data);
        Ok(Npy {
            descr,
            shape,
            words,
            length: data.len(),
        })
    }

    /// The data as `T`s (the caller picked T from descr).
    fn data<T>(&self) -> &[T] {
        // SAFETY: u64-aligned bytes; T is a plain number type no wider than 8 bytes.
        unsafe {
            std::slice::from_raw_parts(
                self.words.as_ptr().cast::<T>(),
                self.length / size_of::<T>(),
            )
        }
    }
}

fn session(args: &Args, environment: &ort::environment::Environment) -> ort::Result<Session> {
    Session::builder(environment)?
        .with_intra_threads(args.intra)?
        .with_inter_threads(1)?
        .commit_from_file(&args.model)
}

/// One session's runs: `batch` samples at a time from `data` (rows of `row` elements).
struct Runner {
    session: Session,
    input: String,
    options: RunOptions<HasSelectedOutputs>,
}

impl Runner {
    fn new(args: &Args, environment: &ort::environment::Environment) -> ort::Result<Runner> {
        let session = session(args, environment)?;
        let input = session.inputs()[0].name().to_owned();
        let output = match &args.output {
            Some(name) => name.clone(),
            None => session.outputs()[0].name().to_owned(),
        };
        let options = RunOptions::new()?.with_outputs(OutputSelector::no_default().with(output));
        Ok(Runner {
            session,
            input,
            options,
        })
    }

    fn run<T: PrimitiveTensorElementType + Debug + Clone + 'static>(
        &mut self,
        sample_shape: &[usize],
        samples: &[T],
        count: usize,
    ) -> ort::Result<()> {
        let mut shape = vec![count];
        shape.extend_from_slice(sample_shape);
        let tensor = TensorRef::from_array_view((shape, samples))?;
        let outputs = self
            .session
            .run_with_options(ort::inputs![self.input.as_str() => tensor], &self.options)?;
        std::hint::black_box(outputs.len());
        Ok(())
    }
}

/// 0..n in a random order (xorshift, fixed seed; Fisher-Yates).
fn shuffled_order(n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn bench<T: PrimitiveTensorElementType + Debug + Clone + Send + Sync + 'static>(
    args: &Args,
    environment: &ort::environment::Environment,
    npy: &Npy,
) -> ort::Result<()> {
    let data = npy.data::<T>();
    let (n, sample_shape) = npy.shape.split_first().expect("checked in main");
    let n = *n;
    let row: usize = sample_shape.iter().product();
    if args.offline {
        let workers = args.workers.min(n);
        let mut runners = (0..workers)
            .map(|_| Runner::new(args, environment))
            .collect::<ort::Result<Vec<_>>>()?;
        let per_worker = n.div_ceil(workers);
        let order = shuffled_order(n);
        // Long-lived workers (as the plugin's are), started together each pass by a barrier:
        // one warm-up pass, then --passes timed ones.
        let start = std::sync::Barrier::new(workers + 1);
        let done = std::sync::Barrier::new(workers + 1);
        // Each worker's start and end of the pass: timed on the workers, as on 2 cores the
        // main thread may not run again until they finish.
        let spans = std::sync::Mutex::new(Vec::new());
        let mut rates = Vec::new();
        std::thread::scope(|scope| -> ort::Result<()> {
            let handles: Vec<_> = runners
                .iter_mut()
                .enumerate()
                .map(|(w, runner)| {
                    let first = w * per_worker;
                    let last = ((w + 1) * per_worker).min(n);
                    let (start, done, spans, order) = (&start, &done, &spans, &order);
                    scope.spawn(move || -> ort::Result<()> {
                        let mut gathered: Vec<T> = Vec::with_capacity(args.batch * row);
                        for _ in 0..=args.passes {
                            start.wait();
                            let began = Instant::now();
                            for at in (first..last).step_by(args.batch) {
                                let count = args.batch.min(last - at);
                                if args.shuffled {
                                    gathered.clear();
                                    for &index in &order[at..at + count] {
                                        gathered.extend_from_slice(
                                            &data[index * row..(index + 1) * row],
                                        );
                                    }
                                    runner.run(sample_shape, &gathered, count)?;
                                } else {
                                    let samples = &data[at * row..(at + count) * row];
                                    runner.run(sample_shape, samples, count)?;
                                }
                            }
                            spans.lock().unwrap().push((began, Instant::now()));
                            done.wait();
                        }
                        Ok(())
                    })
                })
                .collect();
            for p in 0..=args.passes {
                start.wait();
                done.wait();
                let spans = std::mem::take(&mut *spans.lock().unwrap());
                let began = spans.iter().map(|s| s.0).min().expect("a span per worker");
                let ended = spans.iter().map(|s| s.1).max().expect("a span per worker");
                let elapsed = ended - began;
                if p == 0 {
                    continue; // warm-up
                }
                let rate = n as f64 / elapsed.as_secs_f64();
                println!("pass {p}: {n} samples in {elapsed:?}: {rate:.0} samples/s");
                rates.push(rate);
            }
            handles
                .into_iter()
                .try_for_each(|h| h.join().expect("worker panicked"))
        })?;
        rates.sort_by(f64::total_cmp);
        println!(
            "offline: batch {}, {} worker(s), intra {}: median {:.0} samples/s (best {:.0})",
            args.batch,
            workers,
            args.intra,
            rates[rates.len() / 2],
            rates[rates.len() - 1]
        );
    } else {
        let mut runner = Runner::new(args, environment)?;
        for i in 0..n.min(100) {
            runner.run(sample_shape, &data[i * row..(i + 1) * row], 1)?; // warm-up
        }
        let mut latencies = Vec::with_capacity(n * args.passes);
        let order: Vec<usize> = match args.shuffled {
            true => shuffled_order(n),
            false => (0..n).collect(),
        };
        let started = Instant::now();
        for _ in 0..args.passes {
            for &i in &order {
                let t = Instant::now();
                runner.run(sample_shape, &data[i * row..(i + 1) * row], 1)?;
                latencies.push(t.elapsed());
            }
        }
        let elapsed = started.elapsed();
        latencies.sort();
        println!(
            "single-stream: {} queries, intra {}: p50 {:?}, p90 {:?}, {:.0} queries/s",
            latencies.len(),
            args.intra,
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.9),
            latencies.len() as f64 / elapsed.as_secs_f64()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let npy = Npy::read(&args.inputs)?;
    if npy.shape.len() < 2 || npy.shape[0] == 0 {
        return Err(format!(
            "{}: shape {:?}: need [samples, ...] with at least one sample",
            args.inputs.display(),
            npy.shape
        ));
    }
    let environment = ort::init_from(&args.library)
        .map_err(|e| e.to_string())?
        .with_name("direct")
        .build()
        .map_err(|e| e.to_string())?;
    println!(
        "{} on {} {:?} ({}), ONNX Runtime from {}",
        args.model.display(),
        args.inputs.display(),
        npy.shape,
        npy.descr,
        args.library.display()
    );
    let outcome = match npy.descr.as_str() {
        "<f4" => bench::<f32>(&args, &environment, &npy),
        "<f8" => bench::<f64>(&args, &environment, &npy),
        "<i8" => bench::<i64>(&args, &environment, &npy),
        "<i4" => bench::<i32>(&args, &environment, &npy),
        "|u1" => bench::<u8>(&args, &environment, &npy),
        "|i1" => bench::<i8>(&args, &environment, &npy),
        other => return Err(format!("element type {other} is not supported here")),
    };
    outcome.map_err(|e| e.to_string())
}
