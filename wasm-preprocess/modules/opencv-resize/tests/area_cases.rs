//! Differential test against `cv2.resize(..., INTER_AREA)` of opencv-python-headless
//! 5.0.0.93: `tests/data/area_cases.tsv` holds the sha256 of cv2's output for 631 cases (every path:
//! integer ratios, true area averaging, the linear fallback when an axis grows; 1-4
//! channels; MLPerf's short-side-256 rule). Sources are re-created here with the pattern
//! generator of `tests/gen_area_cases.py`, which wrote the digests, so nothing but digests is stored.

use std::fs;
use std::path::Path;

mod common;

use common::{make_image, sha256_hex};
use mlperf_opencv_resize::area::{
    resize_area_u8, scratch_requirement, short_side_resize_dims, AreaTap, Scratch,
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
    uses_short_side_rule: bool,
    /// Of cv2's output.
    sha256: String,
}

fn read_manifest() -> Vec<Case> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/area_cases.tsv");
    let text =
        fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let number = |i: usize| fields[i].parse::<usize>().expect("numeric field");
            Case {
                name: fields[0].to_string(),
                pattern: fields[1].to_string(),
                seed: fields[2].parse().expect("seed"),
                channels: number(3),
                src_w: number(4),
                src_h: number(5),
                dst_w: number(6),
                dst_h: number(7),
                uses_short_side_rule: number(8) == 1,
                sha256: fields[9].to_string(),
            }
        })
        .collect()
}

fn run_port(case: &Case, src: &[u8]) -> Vec<u8> {
    let need = scratch_requirement(
        case.src_w,
        case.src_h,
        case.dst_w,
        case.dst_h,
        case.channels,
    )
    .expect("valid sizes");
    let mut ints = vec![0i32; need.ints];
    let mut floats = vec![0f32; need.floats];
    let mut taps = vec![AreaTap::default(); need.taps];
    let mut scratch = Scratch {
        ints: &mut ints,
        floats: &mut floats,
        taps: &mut taps,
    };
    let mut dst = vec![0u8; case.dst_w * case.dst_h * case.channels];
    let (sw, sh, dw, dh) = (case.src_w, case.src_h, case.dst_w, case.dst_h);
    let result = match case.channels {
        1 => resize_area_u8::<1>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        2 => resize_area_u8::<2>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        3 => resize_area_u8::<3>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        4 => resize_area_u8::<4>(src, sw, sh, &mut dst, dw, dh, &mut scratch),
        n => panic!("unsupported channel count {n}"),
    };
    result.unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
    dst
}

#[test]
fn every_case_is_byte_identical_to_cv2() {
    let cases = read_manifest();
    assert!(cases.len() > 600, "{} cases", cases.len());
    let mut bad = Vec::new();
    for case in &cases {
        if case.uses_short_side_rule {
            assert_eq!(
                short_side_resize_dims(case.src_w, case.src_h, 256),
                (case.dst_w, case.dst_h),
                "{}: the short-side rule",
                case.name
            );
        }
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
        let digest = sha256_hex(&got);
        if digest != case.sha256 {
            bad.push(format!(
                "{} ({}x{}x{} -> {}x{}, {})",
                case.name,
                case.src_w,
                case.src_h,
                case.channels,
                case.dst_w,
                case.dst_h,
                case.pattern
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} cases differ from cv2.resize (tests/gen_area_cases.py writes their outputs to look into):\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
}
