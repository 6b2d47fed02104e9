//! Small NIfTI variants (scaling, byte orders, dtypes, extensions) and
//! broken files, checked against nibabel's readings in reader_cases.json.

mod common;

use common::sha256::{sha256_f64, sha256_hex};
use common::{fixture_dir, read_json, str_at, usizes};
use mlperf_kits19::nifti::{read_nifti, read_nifti_header, ByteOrder, NiftiError};
use serde_json::Value;

#[test]
fn good_files_match_nibabel() {
    let rec = read_json("reader/reader_cases.json");
    let Value::Object(good) = rec.get("good").unwrap() else {
        panic!("good")
    };
    assert!(good.len() >= 13);
    for (name, r) in good {
        let path = fixture_dir().join("reader").join(name);
        let img = read_nifti(&path).unwrap_or_else(|e| panic!("{e}"));
        // compared as text: a NaN scl_slope is never == itself
        let header_only = read_nifti_header(&path).unwrap();
        assert_eq!(
            format!("{header_only:?}"),
            format!("{:?}", img.header),
            "{name}"
        );
        assert_eq!(img.shape(), usizes(r.get("shape").unwrap()), "{name}");
        assert_eq!(
            sha256_hex(&img.voxels.to_le_bytes()),
            str_at(r, "elem_sha256_native_endian_le"),
            "{name}"
        );
        assert_eq!(
            sha256_f64(&img.fdata()),
            str_at(r, "fdata_f64_sha256"),
            "{name} get_fdata"
        );
        let si = r.get("slope_inter").unwrap().as_array().unwrap();
        let want = match (si[0].as_str(), si[1].as_str()) {
            (Some(s), Some(i)) => Some((s.parse::<f64>().unwrap(), i.parse::<f64>().unwrap())),
            _ => None,
        };
        assert_eq!(img.scaling, want, "{name} scaling");
        let big = str_at(r.get("header").unwrap(), "byte_order") == "big";
        assert_eq!(img.header.byte_order == ByteOrder::Big, big, "{name}");
        let offset = r
            .get("header")
            .unwrap()
            .get("vox_offset")
            .unwrap()
            .as_f64()
            .unwrap();
        assert_eq!(f64::from(img.header.vox_offset), offset, "{name}");
    }
}

#[test]
fn broken_files_say_what_is_wrong() {
    let dir = fixture_dir().join("reader");
    let err = |name: &str| read_nifti(dir.join(name)).expect_err(name);
    let msg = |e: &NiftiError| e.to_string();

    let e = err("bad_sizeof_hdr.nii");
    assert!(
        matches!(e, NiftiError::SizeofHdr { little: 123, .. }),
        "{e}"
    );
    assert!(msg(&e).contains("bad_sizeof_hdr.nii") && msg(&e).contains("sizeof_hdr"));

    let e = err("bad_magic.nii");
    assert!(
        matches!(&e, NiftiError::Magic { found, .. } if found == "abc"),
        "{e}"
    );
    assert!(msg(&e).contains("magic"));

    let e = err("pair_magic.nii");
    assert!(
        matches!(&e, NiftiError::Magic { found, .. } if found == "ni1"),
        "{e}"
    );

    let e = err("unsupported_datatype.nii");
    assert!(
        matches!(
            e,
            NiftiError::UnsupportedDatatype {
                code: 128,
                name: "DT_RGB24",
                ..
            }
        ),
        "{e}"
    );
    assert!(msg(&e).contains("datatype is 128"));

    let e = err("truncated.nii");
    assert!(
        matches!(
            e,
            NiftiError::Truncated {
                need: 120,
                have: 113,
                offset: 352,
                ..
            }
        ),
        "{e}"
    );
    assert!(msg(&e).contains("truncated.nii") && msg(&e).contains("vox_offset"));

    let e = err("truncated_header.nii");
    assert!(matches!(e, NiftiError::ShortHeader { got: 200, .. }), "{e}");

    let e = err("truncated.nii.gz");
    assert!(matches!(e, NiftiError::Gzip { .. }), "{e}");
    assert!(msg(&e).contains("truncated.nii.gz"));

    let e = err("does_not_exist.nii");
    assert!(matches!(e, NiftiError::Io { .. }), "{e}");
}
