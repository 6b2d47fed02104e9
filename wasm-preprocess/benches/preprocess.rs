//! The image-classification module in the sandbox against native code doing the same
//! preprocessing: the module's own kernel compiled for this machine (the like-for-like
//! figure) and the plain reference implementation. Time per image on one thread, then the load
//! phase of a 1024-image set on every core (one long-lived instance per thread, output copied
//! out as the host copies it into the sample arena).
//!
//! `cargo bench -p mlperf-wasm-preprocess [-- --images N --height H --width W --passes P]`

use std::path::Path;
use std::time::{Duration, Instant};

use wasm_preprocess::{reference, PreprocessModule, Sandbox};

/// The module's kernel, built natively from the same source.
// Its `pub` items are the module's own, unreachable from here; it follows its own
// workspace's lints.
#[allow(dead_code, unreachable_pub, unsafe_op_in_unsafe_fn)]
#[path = "../modules/image-classification/src/resize.rs"]
mod kernel;

struct Options {
    images: usize,
    height: usize,
    width: usize,
    passes: usize,
}

fn options() -> Options {
    let mut options = Options {
        images: 1024,
        height: 375,
        width: 500,
        passes: 5,
    };
    let args: Vec<String> = std::env::args().collect();
    let mut at = 1;
    while at < args.len() {
        let value = || args.get(at + 1).and_then(|v| v.parse().ok());
        match args[at].as_str() {
            "--images" => options.images = value().expect("--images N"),
            "--height" => options.height = value().expect("--height H"),
            "--width" => options.width = value().expect("--width W"),
            "--passes" => options.passes = value().expect("--passes P"),
            _ => {} // cargo bench passes --bench
        }
        at += 1;
    }
    options
}

/// A textured image, different per seed.
fn image(height: usize, width: usize, seed: usize) -> Vec<u8> {
    (0..height * width * 3)
        .map(|i| (((i * 2_654_435_761usize) ^ (seed * 40_503)) >> 7) as u8)
        .collect()
}

/// Best time of `passes` runs of `run` over all images, per image.
fn per_image(passes: usize, images: usize, mut run: impl FnMut()) -> Duration {
    (0..passes)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .min()
        .unwrap()
        / images as u32
}

fn main() {
    let options = options();
    let (h, w) = (options.height, options.width);
    let images: Vec<Vec<u8>> = (0..options.images).map(|s| image(h, w, s)).collect();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("modules/image-classification/image-classification.wasm");
    let sandbox = Sandbox {
        cache_dir: None,
        ..Sandbox::default()
    };
    let started = Instant::now();
    let module = PreprocessModule::load(&path, sandbox).expect("load the module");
    println!(
        "module {} sha256 {}: compiled in {:.1} ms",
        module.metadata().name,
        &module.identity().sha256[..16],
        started.elapsed().as_secs_f64() * 1e3
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{} images of {h}x{w}x3 -> float32 [3,224,224]; best of {} passes; {threads} cores",
        options.images, options.passes
    );

    let mut out = vec![0f32; reference::IMAGE_OUTPUT_LEN];
    let plain = per_image(options.passes, images.len(), || {
        for input in &images {
            reference::image_classification(input, h, w, &mut out);
        }
    });
    let native = per_image(options.passes, images.len(), || {
        for input in &images {
            kernel::resize_crop_normalize(input, h as u32, w as u32, &mut out);
        }
    });
    let mut worker = module.worker().unwrap();
    let mut arena = vec![0u8; reference::IMAGE_OUTPUT_LEN * 4];
    let shape = [h as u64, w as u64, 3];
    let wasm = per_image(options.passes, images.len(), || {
        for (index, input) in images.iter().enumerate() {
            let output = worker.run(index, input, &shape).unwrap();
            arena.copy_from_slice(output.data);
        }
    });
    println!(
        "one thread:  native kernel {:>7.1} us/image   wasm {:>7.1} us/image   wasm/native {:.2}x   \
         (plain reference {:.1} us/image)",
        native.as_secs_f64() * 1e6,
        wasm.as_secs_f64() * 1e6,
        wasm.as_secs_f64() / native.as_secs_f64(),
        plain.as_secs_f64() * 1e6,
    );

    // The load phase: the set split over the cores, each thread with its own instance.
    let chunk = images.len().div_ceil(threads);
    let native_all = per_image(options.passes, images.len(), || {
        std::thread::scope(|scope| {
            for part in images.chunks(chunk) {
                scope.spawn(move || {
                    let mut out = vec![0f32; reference::IMAGE_OUTPUT_LEN];
                    for input in part {
                        kernel::resize_crop_normalize(input, h as u32, w as u32, &mut out);
                    }
                });
            }
        })
    });
    let mut workers: Vec<_> = (0..threads).map(|_| module.worker().unwrap()).collect();
    let wasm_all = per_image(options.passes, images.len(), || {
        std::thread::scope(|scope| {
            for (part, worker) in images.chunks(chunk).zip(workers.iter_mut()) {
                scope.spawn(move || {
                    let mut arena = vec![0u8; reference::IMAGE_OUTPUT_LEN * 4];
                    for (index, input) in part.iter().enumerate() {
                        let output = worker.run(index, input, &shape).unwrap();
                        arena.copy_from_slice(output.data);
                    }
                });
            }
        })
    });
    let rate = |d: Duration| 1.0 / d.as_secs_f64();
    println!(
        "{threads} threads:   native kernel {:>7.0} images/s   wasm {:>7.0} images/s   wasm/native {:.2}x (time)",
        rate(native_all),
        rate(wasm_all),
        wasm_all.as_secs_f64() / native_all.as_secs_f64()
    );
}
