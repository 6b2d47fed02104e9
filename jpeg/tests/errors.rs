//! Failures name the stage that failed (the cases `cv2.imread` returns `None` for).

mod common;

use mlperf_jpeg::{decode_bgr, DecodeError};

fn extra(name: &str) -> Vec<u8> {
    std::fs::read(common::fixture_dir().join("decode-extra").join(name)).unwrap()
}

#[test]
fn not_a_jpeg_is_rejected_before_libjpeg() {
    assert!(matches!(
        decode_bgr(&extra("not_a_jpeg.jpg")),
        Err(DecodeError::NotJpeg(_))
    ));
    assert!(matches!(decode_bgr(b""), Err(DecodeError::NotJpeg(_))));
}

#[test]
fn truncated_header_is_a_header_error() {
    assert!(matches!(
        decode_bgr(&extra("soi_only.jpg")),
        Err(DecodeError::Header(_))
    ));
}

#[test]
fn fatal_libjpeg_error_before_any_row_is_reported() {
    match decode_bgr(&extra("prog_bad_second_sos.jpg")) {
        Err(DecodeError::Turbo { stage, message }) => {
            assert_eq!(stage, "tjDecompress2");
            assert!(!message.is_empty());
        }
        other => panic!("expected a TurboJPEG error, got {other:?}"),
    }
}

#[test]
fn over_opencv_limits_is_refused_without_decoding() {
    // SOI, SOF0 65535x65535 (4.3e9 pixels > 2^30), SOS: never reaches libjpeg.
    let mut jpeg = vec![
        0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0xFF, 0xFF, 0xFF, 0xFF, 1, 1, 0x11, 0,
    ];
    jpeg.extend_from_slice(&[0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0]);
    assert!(matches!(
        decode_bgr(&jpeg),
        Err(DecodeError::TooLarge {
            width: 65535,
            height: 65535
        })
    ));
}
