//! Differential test against `cv2.resize(..., INTER_LINEAR)` of
//! opencv-python-headless 5.0.0.93: `tests/data/linear_cases.tsv` (written by
//! tests/gen_linear_cases.py) holds the sha256 of cv2's output for each case; the sources
//! are re-created here from the same seeded patterns, so nothing but digests
//! is stored.

mod common;

use common::{data_path, make_image, read_rows, sha256_hex};
use mlperf_opencv_resize::linear::{
    linear_path, resize_linear_u8, scratch_requirement, ColumnTap, LinearPath, Scratch,
};

struct Case {
    name: String,
    pattern: String,
    seed: u64,
    channels: usize,
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    kind: String,
    sha256: String,
}

fn read_cases() -> Vec<Case> {
    read_rows(&data_path("LINEAR_CASES", "tests/data/linear_cases.tsv"))
        .into_iter()
        .map(|f| {
            let number = |i: usize| f[i].parse::<usize>().expect("numeric field");
            Case {
                name: f[0].clone(),
                pattern: f[1].clone(),
                seed: f[2].parse().expect("seed"),
                channels: number(3),
                src_w: number(4),
                src_h: number(5),
                dst_w: number(6),
                dst_h: number(7),
                kind: f[8].clone(),
                sha256: f[9].clone(),
            }
        })
        .collect()
}

fn run_port(case: &Case, src: &[u8]) -> Vec<u8> {
    let (sw, sh, dw, dh) = (case.src_w, case.src_h, case.dst_w, case.dst_h);
    let need = scratch_requirement(sw, sh, dw, dh, case.channels).expect("valid sizes");
    let mut columns = vec![ColumnTap::default(); need.columns];
    let mut rows = vec![0u16; need.rows];
    let mut scratch = Scratch {
        columns: &mut columns,
        rows: &mut rows,
    };
    let mut dst = vec![0u8; dw * dh * case.channels];
    let result = match case.channels {
        1 => resize_linear_u8::<1>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        2 => resize_linear_u8::<2>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        3 => resize_linear_u8::<3>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        4 => resize_linear_u8::<4>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        n => panic!("unsupported channel count {n}"),
    };
    result.unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
    dst
}

#[test]
fn every_case_is_byte_identical_to_cv2() {
    let cases = read_cases();
    assert!(!cases.is_empty(), "no cases in the manifest");
    let mut bad = Vec::new();
    let (mut bytes, mut by_path) = (0usize, [0usize; 3]);
    for case in &cases {
        let got = run_port(
            case,
            &make_image(
                &case.pattern,
                case.seed,
                case.src_w,
                case.src_h,
                case.channels,
            ),
        );
        bytes += got.len();
        by_path[match linear_path(case.src_w, case.src_h, case.dst_w, case.dst_h) {
            LinearPath::Copy => 0,
            LinearPath::HalfBlocks => 1,
            LinearPath::Bilinear => 2,
        }] += 1;
        if sha256_hex(&got) != case.sha256 {
            bad.push(format!(
                "{} [{}] ({}x{}x{} -> {}x{}, {})",
                case.name,
                case.kind,
                case.src_w,
                case.src_h,
                case.channels,
                case.dst_w,
                case.dst_h,
                case.pattern
            ));
        }
    }
    println!(
        "compared {} cases ({bytes} output bytes; {} copy, {} 2x2 area, {} bilinear) with cv2: {} differ",
        cases.len(),
        by_path[0],
        by_path[1],
        by_path[2],
        bad.len()
    );
    assert!(
        bad.is_empty(),
        "{} of {} cases differ from cv2.resize:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
}
