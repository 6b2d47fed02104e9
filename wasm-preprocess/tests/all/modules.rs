//! The shipped modules through the sandbox, bit for bit against the native reference
//! implementations, on synthetic images of every orientation and size class (the host's tests
//! repeat this on real photographs); and, where the wasm32 target is installed, the committed
//! `.wasm` files rebuilt from their sources and compared.

use std::path::{Path, PathBuf};

use wasm_preprocess::reference;
use wasm_preprocess::{ElementType, PreprocessModule, Sandbox};

fn module_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("modules/{name}/{name}.wasm"))
}

fn load(name: &str) -> PreprocessModule {
    let sandbox = Sandbox {
        cache_dir: None,
        ..Sandbox::default()
    };
    PreprocessModule::load(&module_path(name), sandbox).unwrap()
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A deterministic, textured image: gradients plus a hash, so every interpolation weight matters.
fn image(height: usize, width: usize, seed: u32) -> Vec<u8> {
    let mut pixels = Vec::with_capacity(height * width * 3);
    for y in 0..height {
        for x in 0..width {
            for c in 0..3 {
                let hash = (y as u32 * 7919 + x as u32 * 104_729 + c * 31 + seed)
                    .wrapping_mul(2_654_435_761);
                pixels.push(((x * 3 + y * 5 + c as usize * 60) as u32 ^ (hash >> 27)) as u8);
            }
        }
    }
    pixels
}

#[test]
fn image_classification_matches_the_native_reference_bit_for_bit() {
    let module = load("image-classification");
    let metadata = module.metadata();
    assert_eq!(metadata.name, "image-classification");
    assert_eq!(metadata.output.to_string(), "float32 [3,224,224]");
    module
        .check_input(ElementType::UInt8, &[480, 640, 3])
        .unwrap();
    module
        .check_input(ElementType::UInt8, &[480, 640, 4])
        .unwrap_err();

    let mut worker = module.worker().unwrap();
    let mut expected = vec![0f32; reference::IMAGE_OUTPUT_LEN];
    let sizes = [
        (427, 640), // landscape
        (640, 427), // portrait
        (256, 256), // identity scale
        (224, 224), // upscale to 256, then crop
        (100, 150), // small: upscaled
        (1, 1),     // one pixel
        (1080, 1920),
        (333, 333),
    ];
    for (seed, (height, width)) in sizes.into_iter().enumerate() {
        let input = image(height, width, seed as u32);
        reference::image_classification(&input, height, width, &mut expected);
        let shape = [height as u64, width as u64, 3];
        let output = worker.run(seed, &input, &shape).unwrap();
        assert_eq!(output.shape.dims(), &[3, 224, 224]);
        assert!(
            output.data == f32_bytes(&expected).as_slice(),
            "{height}x{width}: the module's output differs from the native reference"
        );
    }
}

#[test]
fn image_classification_refuses_inputs_it_cannot_take() {
    let module = load("image-classification");
    let mut worker = module.worker().unwrap();
    let error = worker
        .run(5, &[0; 12], &[2, 2, 3, 1])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("error code -1 (input shape not accepted)"),
        "{error}"
    );
    let error = worker.run(6, &[0; 11], &[2, 2, 3]).unwrap_err().to_string();
    assert!(error.contains("error code -2"), "{error}");
    assert!(error.contains("sample 6"), "{error}");
    // The worker carries on after a refused sample.
    assert!(worker.run(7, &[9; 12], &[2, 2, 3]).is_ok());
}

#[test]
fn fmnist_matches_the_native_reference_for_every_pixel_value() {
    let module = load("fmnist");
    assert_eq!(module.metadata().output.to_string(), "float32 [784]");
    let mut worker = module.worker().unwrap();
    let mut expected = vec![0f32; reference::FMNIST_LEN];
    for offset in 0..4u32 {
        let input: Vec<u8> = (0..784u32)
            .map(|i| ((i + offset * 200) % 256) as u8)
            .collect();
        reference::fmnist(&input, &mut expected);
        let output = worker.run(offset as usize, &input, &[28, 28]).unwrap();
        assert_eq!(output.shape.dims(), &[784]);
        assert_eq!(output.data, f32_bytes(&expected).as_slice());
    }
    assert_eq!(expected[0], 200.0 * 3.0 % 256.0 / 255.0);
}

#[test]
fn committed_modules_are_what_their_sources_build() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("modules/build.sh");
    let output = std::process::Command::new("bash")
        .arg(&script)
        .arg("--check")
        .output()
        .expect("run modules/build.sh --check");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "modules/build.sh --check failed:\n{stdout}\n{stderr}"
    );
    println!("{stdout}{stderr}");
}
