//! Payload bytes against the ones recorded from ultralytics 8.4.190 + torch/torchvision CPU and
//! the harness's packing (`tests/gen_reference.py`, `tests/data/README.md`).

use mlperf_yolo_postprocess::{Postprocessor, COCO_80_TO_91};
use std::path::PathBuf;

const CHANNELS: usize = 84;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

/// Rebuilds the dense (1, 84, N) little-endian float32 output from a `.in` file.
fn dense_input(name: &str) -> (usize, Vec<u8>) {
    let b = std::fs::read(data_dir().join(format!("{name}.in"))).unwrap();
    let n = u32_at(&b, 0) as usize;
    let sparse = u32_at(&b, 4) as usize;
    let mut raw = vec![0u8; CHANNELS * n * 4];
    let boxes = &b[8..8 + 16 * n];
    raw[..16 * n].copy_from_slice(boxes);
    let mut o = 8 + 16 * n;
    for _ in 0..sparse {
        let (a, c) = (u32_at(&b, o) as usize, u32_at(&b, o + 4) as usize);
        let at = ((4 + c) * n + a) * 4;
        raw[at..at + 4].copy_from_slice(&b[o + 8..o + 12]);
        o += 12;
    }
    assert_eq!(o, b.len(), "{name}.in has trailing bytes");
    (n, raw)
}

struct Case {
    name: String,
    n: usize,
    letterboxed: (usize, usize),
    original: (usize, usize),
    qsl: u64,
    ndet: usize,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(data_dir().join("cases.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let num = |i: usize| f[i].parse::<u64>().unwrap();
            Case {
                name: f[0].to_string(),
                n: num(1) as usize,
                letterboxed: (num(2) as usize, num(3) as usize),
                original: (num(4) as usize, num(5) as usize),
                qsl: num(6),
                ndet: num(7) as usize,
            }
        })
        .collect()
}

#[test]
fn every_recorded_case_matches_bit_for_bit() {
    let all = cases();
    assert_eq!(all.len(), 15);
    // One processor for all cases: buffer reuse must not leak state between samples.
    let mut pp = Postprocessor::default();
    let mut failures = Vec::new();
    for case in &all {
        let (n, raw) = dense_input(&case.name);
        assert_eq!(n, case.n);
        let want = std::fs::read(data_dir().join(format!("{}.out", case.name))).unwrap();
        assert_eq!(want.len(), case.ndet * 28);
        let mut out = vec![0xAA]; // records are appended
        let dets = pp
            .process(&raw, n, case.letterboxed, case.original, case.qsl, &mut out)
            .unwrap();
        assert_eq!(dets.len(), case.ndet, "{}: detection count", case.name);
        if out[1..] != want[..] {
            let first = out[1..]
                .chunks(4)
                .zip(want.chunks(4))
                .position(|(a, b)| a != b);
            failures.push(format!("{}: first differing f32 at {first:?}", case.name));
        }
        assert_eq!(out[0], 0xAA);
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn one_shot_postprocess_matches_too() {
    for case in cases().iter().filter(|c| c.n < 3000) {
        let (n, raw) = dense_input(&case.name);
        let want = std::fs::read(data_dir().join(format!("{}.out", case.name))).unwrap();
        let got = mlperf_yolo_postprocess::postprocess(
            &raw,
            n,
            case.letterboxed,
            case.original,
            case.qsl,
        )
        .unwrap();
        assert_eq!(got, want, "{}", case.name);
    }
}

#[test]
fn recorded_categories_are_coco_ids() {
    let want = std::fs::read(data_dir().join("dense_8400_landscape.out")).unwrap();
    for rec in want.chunks(28) {
        let cat = f32::from_le_bytes(rec[24..28].try_into().unwrap()) as u32;
        assert!(COCO_80_TO_91.contains(&cat));
    }
}
