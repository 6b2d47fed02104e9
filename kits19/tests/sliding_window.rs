//! The combiner against the reference SUT's sliding window driven with the
//! fake model of make_fixture.py (records/sliding_window.json).

mod common;

use common::sha256::{sha256_f32, sha256_hex};
use common::{fixture_dir, read_json, repr_f64, str_at, usizes};
use mlperf_kits19::nifti::{read_nifti, Voxels};
use mlperf_kits19::window::{extract_patch, importance_map, patch_origins, Combiner, CLASSES, ROI};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// out[c] = ((A[c]*x + B[c]) + C[c]*g[z]) + D[c]*p, every operation in f32.
fn fake_model(rec: &Value, x: &[f32], p: usize) -> Vec<f32> {
    let fm = rec.get("fake_model").unwrap();
    let coef = |k: &str| -> Vec<f32> {
        fm.get(k)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect()
    };
    let (a, b, c, d) = (coef("A"), coef("B"), coef("C"), coef("D"));
    let p = p as f32;
    let plane = ROI * ROI;
    let mut out = Vec::with_capacity(CLASSES * x.len());
    for ch in 0..CLASSES {
        out.extend(x.iter().enumerate().map(|(i, &v)| {
            let g = ((i / plane) as f32 - 63.5) / 64.0;
            ((a[ch] * v + b[ch]) + c[ch] * g) + d[ch] * p
        }));
    }
    out
}

#[test]
fn gaussian_map_is_bit_identical() {
    let rec = read_json("records/sliding_window.json");
    let g = rec.get("gaussian").unwrap();
    let m = importance_map(ROI);
    assert_eq!(sha256_f32(&m), str_at(g, "norm_patch_f32_sha256"));
    assert_eq!(f64::from(m[0]), repr_f64(g.get("map_000").unwrap()));
    assert_eq!(
        m.iter().filter(|&&v| v == 1.0).count() as i64,
        g.get("map_count_eq_1").unwrap().as_i64().unwrap()
    );
}

#[test]
fn sliding_window_matches_reference_golden() {
    let rec = read_json("records/sliding_window.json");
    let Value::Object(cases) = rec.get("cases").unwrap() else {
        panic!("cases")
    };
    for (case, r) in cases {
        let img = read_nifti(
            fixture_dir()
                .join("preprocessed_data/nifti")
                .join(case)
                .join("imaging.nii.gz"),
        )
        .unwrap();
        let Voxels::F32(vol) = &img.voxels else {
            panic!("f32")
        };
        let s = img.shape();
        let shape = [s[0], s[1], s[2]];
        let origins = patch_origins(shape);
        let want: Vec<Vec<usize>> = r
            .get("patches")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(usizes)
            .collect();
        assert_eq!(
            origins.iter().map(|o| o.to_vec()).collect::<Vec<_>>(),
            want,
            "{case} patches"
        );

        let mut comb = Combiner::new(shape);
        for (p, &o) in origins.iter().enumerate() {
            let out = fake_model(&rec, &extract_patch(vol, shape, o), p);
            comb.add_patch(o, &out);
        }
        let (acc, norm) = comb.accumulators();
        assert_eq!(
            sha256_f32(acc),
            str_at(r, "result_acc_f32_sha256"),
            "{case} result accumulator"
        );
        // the reference's norm_map has 3 identical channels
        let mut h = Sha256::new();
        let nb: Vec<u8> = norm.iter().flat_map(|v| v.to_le_bytes()).collect();
        (0..CLASSES).for_each(|_| h.update(&nb));
        assert_eq!(
            format!("{:x}", h.finalize()),
            str_at(r, "norm_map_f32_sha256"),
            "{case} norm_map"
        );

        let labels = comb.finalize();
        assert_eq!(
            labels.len() as i64,
            r.get("output_bytes").unwrap().as_i64().unwrap()
        );
        assert_eq!(
            sha256_hex(&labels),
            str_at(r, "output_sha256"),
            "{case} output"
        );
        let mut counts = [0usize; 3];
        labels.iter().for_each(|&l| counts[l as usize] += 1);
        assert_eq!(
            counts.to_vec(),
            usizes(r.get("label_counts").unwrap()),
            "{case}"
        );

        let n = norm.len();
        let [_, hh, ww] = shape;
        for probe in r.get("probes").unwrap().as_array().unwrap() {
            let zyx = usizes(probe.get("zyx").unwrap());
            let v = (zyx[0] * hh + zyx[1]) * ww + zyx[2];
            let accs = probe.get("acc").unwrap().as_array().unwrap();
            let divs = probe.get("divided").unwrap().as_array().unwrap();
            for c in 0..CLASSES {
                assert_eq!(
                    f64::from(acc[c * n + v]),
                    repr_f64(&accs[c]),
                    "{case} {zyx:?} acc[{c}]"
                );
                assert_eq!(
                    f64::from(acc[c * n + v] / norm[v]),
                    repr_f64(&divs[c]),
                    "{case} {zyx:?}"
                );
            }
            assert_eq!(
                f64::from(norm[v]),
                repr_f64(probe.get("norm").unwrap()),
                "{case} {zyx:?} norm"
            );
            assert_eq!(
                i64::from(labels[v]),
                probe.get("label").unwrap().as_i64().unwrap()
            );
        }
    }
}
