//! The native reader against what nibabel/numpy saw in the fixture: the
//! preprocessed NIfTI files (what a native loader reads instead of the
//! pickles) and the raw kits19-layout files.

mod common;

use common::sha256::{sha256_f32, sha256_f64, sha256_hex};
use common::{fixture_dir, read_json, str_at, usizes};
use mlperf_kits19::nifti::{read_nifti, read_nifti_header, ByteOrder, Datatype, Voxels};
use serde_json::Value;

fn check_header(file: &str, h: &mlperf_kits19::nifti::NiftiHeader, facts: &Value) {
    let i = |k: &str| {
        facts
            .get(k)
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("{k}"))
    };
    let f = |v: &Value| v.as_f64().expect("number") as f32;
    assert_eq!(h.byte_order, ByteOrder::Little, "{file}");
    assert_eq!(i64::from(h.datatype.code()), i("datatype"), "{file}");
    assert_eq!(i64::from(h.bitpix), i("bitpix"), "{file}");
    let dim: Vec<i64> = h.dim.iter().map(|&d| d.into()).collect();
    let want: Vec<i64> = facts
        .get("dim")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(dim, want, "{file} dim");
    let pixdim: Vec<f32> = facts
        .get("pixdim")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    assert_eq!(h.pixdim.to_vec(), pixdim, "{file} pixdim");
    assert_eq!(h.vox_offset, f(facts.get("vox_offset").unwrap()), "{file}");
    assert_eq!(
        h.scl_slope,
        str_at(facts, "scl_slope").parse::<f32>().unwrap(),
        "{file}"
    );
    assert_eq!(
        h.scl_inter,
        str_at(facts, "scl_inter").parse::<f32>().unwrap(),
        "{file}"
    );
    assert_eq!(i64::from(h.qform_code), i("qform_code"), "{file}");
    assert_eq!(i64::from(h.sform_code), i("sform_code"), "{file}");
    assert_eq!(i64::from(h.xyzt_units), i("xyzt_units"), "{file}");
    let srow: Vec<Vec<f32>> = facts
        .get("srow")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(f).collect())
        .collect();
    assert_eq!(
        h.srow.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
        srow,
        "{file} srow"
    );
}

#[test]
fn preprocessed_nifti_matches_pickled_arrays() {
    let rec = read_json("records/preprocessed.json");
    let Value::Object(cases) = rec.get("cases").unwrap() else {
        panic!("cases")
    };
    assert_eq!(cases.len(), 3);
    for (case, r) in cases {
        let dir = fixture_dir().join("preprocessed_data/nifti").join(case);
        let shape = usizes(r.get("pkl_image_shape").unwrap())[1..].to_vec();

        let img = read_nifti(dir.join("imaging.nii.gz")).unwrap();
        assert_eq!(img.shape(), shape, "{case}");
        assert_eq!(img.header.datatype, Datatype::F32);
        let Voxels::F32(v) = &img.voxels else {
            panic!("{case}: imaging is not float32")
        };
        assert_eq!(
            sha256_f32(v),
            str_at(r, "image_f32_sha256"),
            "{case} image bytes"
        );
        assert_eq!(
            sha256_f64(&img.fdata()),
            str_at(r, "image_fdata_f64_sha256"),
            "{case}"
        );
        assert_eq!(img.scaling, Some((1.0, 0.0)));
        check_header(case, &img.header, r.get("nifti_imaging").unwrap());
        assert_eq!(img.header.spacing(), [1.6f32, 1.2, 1.2]);

        let seg = read_nifti(dir.join("segmentation.nii.gz")).unwrap();
        let Voxels::U8(l) = &seg.voxels else {
            panic!("{case}: segmentation is not uint8")
        };
        assert_eq!(
            sha256_hex(l),
            str_at(r, "label_u8_sha256"),
            "{case} label bytes"
        );
        let mut counts = [0usize; 3];
        l.iter().for_each(|&x| counts[x as usize] += 1);
        assert_eq!(
            counts.to_vec(),
            usizes(r.get("label_counts").unwrap()),
            "{case}"
        );
        check_header(case, &seg.header, r.get("nifti_segmentation").unwrap());

        // header-only read agrees with the full read
        assert_eq!(
            read_nifti_header(dir.join("imaging.nii.gz")).unwrap(),
            img.header
        );
    }
}

#[test]
fn raw_kits19_layout_reads() {
    let rec = read_json("records/preprocessed.json");
    let Value::Object(cases) = rec.get("cases").unwrap() else {
        panic!("cases")
    };
    for (case, r) in cases {
        let dir = fixture_dir().join("raw").join(case);
        let img = read_nifti(dir.join("imaging.nii.gz")).unwrap();
        assert_eq!(img.header.datatype, Datatype::I16, "{case}");
        assert_eq!(
            sha256_hex(&img.voxels.to_le_bytes()),
            str_at(r, "raw_imaging_elem_sha256"),
            "{case}"
        );
        assert_eq!(
            sha256_f64(&img.fdata()),
            str_at(r, "raw_imaging_fdata_f64_sha256"),
            "{case}"
        );
        check_header(case, &img.header, r.get("raw_imaging").unwrap());
        let seg = read_nifti(dir.join("segmentation.nii.gz")).unwrap();
        assert_eq!(
            sha256_hex(&seg.voxels.to_le_bytes()),
            str_at(r, "raw_segmentation_elem_sha256"),
            "{case}"
        );
        check_header(case, &seg.header, r.get("raw_segmentation").unwrap());
    }
}
