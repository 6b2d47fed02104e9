//! The sandbox and the ABI checks, on small guests written in WebAssembly text: a module that
//! loops, exhausts its fuel, grows its memory without end or recurses without end is stopped
//! with a message naming the module, its sha256 and the sample; modules that import, are not
//! WebAssembly or do not speak the ABI are refused at load.

use std::path::Path;
use std::time::{Duration, Instant};

use wasm_preprocess::{ElementType, PreprocessError, PreprocessModule, SampleFailure, Sandbox};

const METADATA: &str = "name=plus-one\nversion=1.2.3\ninput_dtype=uint8\ninput_shape=*\n\
                        output_dtype=uint8\noutput_shape=*\n";

/// A guest that adds one to every byte, unless `body` replaces its `mlperf_preprocess`. Input
/// sits at 4096, output at 36864, the shape block at 0 (left as the input's shape).
fn guest(body: Option<&str>, extra: &str) -> String {
    let plus_one = r#"
        (local $i i32)
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
            (i32.store8 (i32.add (i32.const 36864) (local.get $i))
              (i32.add (i32.load8_u (i32.add (i32.const 4096) (local.get $i))) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next)))
        (local.get $len)"#;
    let escaped = METADATA.replace('\n', "\\n");
    format!(
        r#"(module
          {extra}
          (memory (export "memory") 1)
          (data (i32.const 1024) "{escaped}")
          (func (export "mlperf_preprocess_abi") (result i32) i32.const 1)
          (func (export "mlperf_preprocess_metadata") (result i32) i32.const 1024)
          (func (export "mlperf_preprocess_metadata_len") (result i32) i32.const {len})
          (func (export "mlperf_preprocess_shape") (result i32) i32.const 0)
          (func (export "mlperf_preprocess_input") (param i32) (result i32)
            (select (i32.const 4096) (i32.const 0) (i32.le_u (local.get 0) (i32.const 28672))))
          (func (export "mlperf_preprocess") (param $len i32) (result i32) {body})
          (func (export "mlperf_preprocess_output") (result i32) i32.const 36864))"#,
        len = METADATA.len(),
        body = body.unwrap_or(plus_one),
    )
}

fn sandbox() -> Sandbox {
    Sandbox {
        time_limit: Duration::from_millis(200),
        memory_limit: 8 << 20,
        cache_dir: None,
        ..Sandbox::default()
    }
}

fn load(text: &str, sandbox: Sandbox) -> Result<PreprocessModule, PreprocessError> {
    PreprocessModule::from_bytes(Path::new("guest.wat"), text.as_bytes(), sandbox)
}

fn sample_failure(error: PreprocessError) -> (usize, SampleFailure, String) {
    let message = error.to_string();
    match error {
        PreprocessError::Sample { index, failure, .. } => (index, failure, message),
        other => panic!("expected a sample failure, got {other}"),
    }
}

#[test]
fn a_guest_preprocesses_many_samples_on_one_instance() {
    let module = load(&guest(None, ""), sandbox()).unwrap();
    let identity = module.identity();
    assert_eq!(identity.metadata.name, "plus-one");
    assert_eq!(identity.metadata.version, "1.2.3");
    assert_eq!(identity.sha256.len(), 64);
    module.check_input(ElementType::UInt8, &[3, 4]).unwrap_err();
    module.check_input(ElementType::UInt8, &[12]).unwrap();
    let error = module
        .check_input(ElementType::Float32, &[12])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("cannot take samples of float32 [12]"),
        "{error}"
    );
    assert!(error.contains("it takes uint8 [*]"), "{error}");

    let mut worker = module.worker().unwrap();
    for index in 0..1000usize {
        let input: Vec<u8> = (0..(index % 50) as u8 + 1)
            .map(|b| b.wrapping_mul(3))
            .collect();
        let output = worker.run(index, &input, &[input.len() as u64]).unwrap();
        let expected: Vec<u8> = input.iter().map(|b| b.wrapping_add(1)).collect();
        assert_eq!(output.data, expected.as_slice());
        assert_eq!(output.shape.dims(), &[input.len() as u32]);
    }
}

#[test]
fn an_endless_loop_is_stopped_at_the_time_limit_and_the_worker_recovers() {
    // Loops forever when the first input byte is 255, else adds one like the plain guest.
    let body = r#"
        (if (i32.eq (i32.load8_u (i32.const 4096)) (i32.const 255))
          (then (loop $forever (br $forever))))
        (i32.store8 (i32.const 36864) (i32.add (i32.load8_u (i32.const 4096)) (i32.const 1)))
        (i32.const 1)"#;
    let module = load(&guest(Some(body), ""), sandbox()).unwrap();
    let sha256 = module.identity().sha256.clone();
    let mut worker = module.worker().unwrap();
    let started = Instant::now();
    let (index, failure, message) = sample_failure(worker.run(41, &[255], &[1]).unwrap_err());
    let elapsed = started.elapsed();
    assert_eq!(index, 41);
    assert_eq!(
        failure,
        SampleFailure::TimeLimit(Duration::from_millis(200))
    );
    assert!(
        message.contains("time limit of 200 ms exceeded"),
        "{message}"
    );
    assert!(message.contains(&sha256), "{message}");
    assert!(message.contains("sample 41"), "{message}");
    assert!(message.contains("plus-one (guest.wat)"), "{message}");
    // Stopped, not run to completion: well under the seconds a stuck call would take.
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert_eq!(worker.run(42, &[7], &[1]).unwrap().data, &[8]);
}

#[test]
fn fuel_gives_a_deterministic_limit() {
    let body = "(loop $forever (br $forever)) (i32.const 0)";
    let module = load(
        &guest(Some(body), ""),
        Sandbox {
            fuel: Some(1_000_000),
            ..sandbox()
        },
    )
    .unwrap();
    let (_, failure, message) =
        sample_failure(module.worker().unwrap().run(0, &[1], &[1]).unwrap_err());
    assert_eq!(failure, SampleFailure::FuelLimit(1_000_000));
    assert!(
        message.contains("fuel limit of 1000000 units exhausted"),
        "{message}"
    );
}

#[test]
fn a_memory_bomb_is_stopped_at_the_cap() {
    let body = "(loop $more (drop (memory.grow (i32.const 16))) (br $more)) (i32.const 0)";
    let module = load(&guest(Some(body), ""), sandbox()).unwrap();
    let (index, failure, message) =
        sample_failure(module.worker().unwrap().run(7, &[1], &[1]).unwrap_err());
    assert_eq!(index, 7);
    assert_eq!(failure, SampleFailure::MemoryCap(8 << 20));
    assert!(message.contains("memory cap of 8 MiB reached"), "{message}");
}

#[test]
fn endless_recursion_is_stopped_at_the_stack_limit() {
    let extra = "(func $deeper (param i32) (result i32) \
                 (call $deeper (i32.add (local.get 0) (i32.const 1))))";
    let body = "(call $deeper (i32.const 0))";
    let module = load(&guest(Some(body), extra), sandbox()).unwrap();
    let (_, failure, message) =
        sample_failure(module.worker().unwrap().run(3, &[1], &[1]).unwrap_err());
    assert_eq!(failure, SampleFailure::StackLimit(512 << 10));
    assert!(
        message.contains("stack limit of 512 KiB exceeded"),
        "{message}"
    );
}

#[test]
fn guest_error_codes_and_bad_outputs_fail_the_sample() {
    let module = load(&guest(Some("(i32.const -1)"), ""), sandbox()).unwrap();
    let (_, failure, message) =
        sample_failure(module.worker().unwrap().run(0, &[1], &[1]).unwrap_err());
    assert_eq!(failure, SampleFailure::Code { code: -1 });
    assert!(
        message.contains("error code -1 (input shape not accepted)"),
        "{message}"
    );

    // Claims more output than its memory holds.
    let module = load(&guest(Some("(i32.const 1000000)"), ""), sandbox()).unwrap();
    let (_, failure, _) = sample_failure(module.worker().unwrap().run(0, &[1], &[1]).unwrap_err());
    assert!(
        matches!(failure, SampleFailure::BadOutput(ref m) if m.contains("outside its memory")),
        "{failure:?}"
    );

    // Output length that disagrees with the output shape (one element, two bytes).
    let module = load(&guest(Some("(i32.const 2)"), ""), sandbox()).unwrap();
    let (_, failure, _) = sample_failure(module.worker().unwrap().run(0, &[1], &[1]).unwrap_err());
    assert!(
        matches!(failure, SampleFailure::BadOutput(ref m) if m.contains("returned 2 bytes")),
        "{failure:?}"
    );

    // An input larger than the guest's buffer.
    let module = load(&guest(None, ""), sandbox()).unwrap();
    let big = vec![0u8; 40_000];
    let (_, failure, _) = sample_failure(
        module
            .worker()
            .unwrap()
            .run(0, &big, &[40_000])
            .unwrap_err(),
    );
    assert_eq!(failure, SampleFailure::InputTooLarge(40_000));
}

#[test]
fn a_module_that_imports_is_refused_at_load() {
    let extra = r#"(import "env" "log" (func $log (param i32)))"#;
    let error = load(&guest(None, extra), sandbox()).err().unwrap();
    assert!(matches!(error, PreprocessError::Imports { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("imports env.log (function)"), "{message}");
    assert!(message.contains("may import nothing"), "{message}");
}

#[test]
fn malformed_files_are_refused_at_load() {
    for bytes in [
        &b"not a module"[..],
        &b"\0asm\x01\0\0\0\x01\x05"[..],
        &[][..],
    ] {
        let error = PreprocessModule::from_bytes(Path::new("broken.wasm"), bytes, sandbox())
            .err()
            .unwrap();
        assert!(
            matches!(error, PreprocessError::Malformed { .. }),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("preprocessing module broken.wasm is not a valid WebAssembly module"),
            "{error}"
        );
    }
    let error = PreprocessModule::load(Path::new("/nonexistent/x.wasm"), sandbox())
        .err()
        .unwrap();
    assert!(error
        .to_string()
        .contains("cannot read preprocessing module /nonexistent/x.wasm"));
}

#[test]
fn modules_off_the_abi_are_refused_at_load() {
    let cases = [
        (
            guest(None, "").replace(
                r#"(func (export "mlperf_preprocess_output") (result i32) i32.const 36864)"#,
                "",
            ),
            "no `mlperf_preprocess_output` export",
        ),
        (
            guest(None, "").replace(
                r#"(func (export "mlperf_preprocess_abi") (result i32) i32.const 1)"#,
                r#"(func (export "mlperf_preprocess_abi") (result i32) i32.const 2)"#,
            ),
            "it speaks guest ABI version 2; this host speaks version 1",
        ),
        (
            guest(None, "").replace(
                r#"(func (export "mlperf_preprocess_shape") (result i32) i32.const 0)"#,
                r#"(func (export "mlperf_preprocess_shape") (param i32) (result i32) i32.const 0)"#,
            ),
            "`mlperf_preprocess_shape` is not `() -> i32`",
        ),
        (
            guest(None, "").replace(r#"(memory (export "memory") 1)"#, "(memory 1)"),
            "no `memory` export",
        ),
        (
            guest(None, "").replace("name=plus-one", "nome=plus-one"),
            "metadata lacks `name`",
        ),
    ];
    for (text, expected) in cases {
        let error = load(&text, sandbox()).err().unwrap();
        assert!(matches!(error, PreprocessError::Abi { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains(expected), "{message}");
        assert!(
            message.contains("does not follow the guest ABI"),
            "{message}"
        );
    }
}

#[test]
fn compiled_modules_are_cached_by_hash() {
    let dir = std::env::temp_dir().join(format!("wasm-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let with_cache = || Sandbox {
        cache_dir: Some(dir.clone()),
        ..sandbox()
    };
    let module = load(&guest(None, ""), with_cache()).unwrap();
    let sha256 = module.identity().sha256.clone();
    let cached: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    let name = cached[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with(&sha256) && name.ends_with(".cwasm"),
        "{name}"
    );
    // A second load maps the artifact; a damaged artifact is recompiled, not trusted.
    let again = load(&guest(None, ""), with_cache()).unwrap();
    assert_eq!(
        again.worker().unwrap().run(0, &[1], &[1]).unwrap().data,
        &[2]
    );
    std::fs::write(&cached[0], b"garbage").unwrap();
    let repaired = load(&guest(None, ""), with_cache()).unwrap();
    assert_eq!(
        repaired.worker().unwrap().run(0, &[9], &[1]).unwrap().data,
        &[10]
    );
    assert!(std::fs::read(&cached[0]).unwrap().len() > 100);
    let _ = std::fs::remove_dir_all(&dir);
}
