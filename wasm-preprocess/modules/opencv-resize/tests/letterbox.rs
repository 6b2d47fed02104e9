//! The YOLO letterbox against letterbox_ref.py: a numpy/cv2 re-implementation
//! of ultralytics 8.4.190's LetterBox + predictor.preprocess (itself checked
//! against the wheel's own LetterBox and scale_boxes code when generated).
//! `tests/data/letterbox.tsv` holds sha256s of the padded u8 image and of both
//! float32 tensors; `tests/data/letterbox_geometry.tsv` the exact parameters.

mod common;

use common::{data_path, f32_bytes, make_image, read_rows, sha256_hex};
use mlperf_opencv_resize::linear::letterbox::{
    letterbox_geometry, letterbox_image, letterbox_tensor, LetterboxParams, LetterboxScratch,
    Normalization,
};
use mlperf_opencv_resize::linear::{ColumnTap, Scratch};

#[test]
fn tensors_and_images_match_the_reference_pipeline() {
    let rows = read_rows(&data_path("LETTERBOX_CASES", "tests/data/letterbox.tsv"));
    assert!(rows.len() >= 20, "{} cases", rows.len());
    let mut bad = Vec::new();
    for f in &rows {
        let number = |i: usize| f[i].parse::<usize>().expect("numeric field");
        let (name, pattern, seed) = (&f[0], &f[1], f[2].parse::<u64>().expect("seed"));
        let (w, h, auto) = (number(3), number(4), number(5) == 1);
        let geometry = letterbox_geometry(w, h, &LetterboxParams::yolo640(auto)).expect("geometry");
        let expected_geometry: Vec<usize> = (6..14).map(number).collect();
        let got_geometry = vec![
            geometry.resized_w,
            geometry.resized_h,
            geometry.top,
            geometry.bottom,
            geometry.left,
            geometry.right,
            geometry.out_w,
            geometry.out_h,
        ];
        assert_eq!(got_geometry, expected_geometry, "{name}: geometry");

        let src = make_image(pattern, seed, w, h, 3);
        let need = geometry.resize_scratch();
        let mut columns = vec![ColumnTap::default(); need.columns];
        let mut ints = vec![0u16; need.rows];
        let mut row = vec![0u8; geometry.row_scratch_len()];

        let mut image = vec![0u8; geometry.image_len()];
        let mut scratch = Scratch {
            columns: &mut columns,
            rows: &mut ints,
        };
        letterbox_image(&src, &geometry, &mut image, &mut scratch).expect("letterbox image");
        let mut digests = vec![sha256_hex(&image)];

        for normalization in [Normalization::Divide, Normalization::MultiplyReciprocal] {
            // Start from garbage so every element must be written.
            let mut tensor = vec![f32::NAN; geometry.tensor_len()];
            let mut scratch = LetterboxScratch {
                resize: Scratch {
                    columns: &mut columns,
                    rows: &mut ints,
                },
                row: &mut row,
            };
            letterbox_tensor(&src, &geometry, normalization, &mut tensor, &mut scratch)
                .expect("letterbox tensor");
            digests.push(sha256_hex(&f32_bytes(&tensor)));
        }
        for (what, (got, expected)) in ["image", "divide", "reciprocal"]
            .iter()
            .zip(digests.iter().zip(&f[14..17]))
        {
            if got != expected {
                bad.push(format!("{name} ({w}x{h}, auto={auto}): {what}"));
            }
        }
    }
    println!(
        "{} letterbox cases, 3 outputs each: {} differ",
        rows.len(),
        bad.len()
    );
    assert!(bad.is_empty(), "differences:\n{}", bad.join("\n"));
}

#[test]
fn geometry_and_scale_boxes_match_python_exactly() {
    let rows = read_rows(&data_path(
        "LETTERBOX_GEOMETRY",
        "tests/data/letterbox_geometry.tsv",
    ));
    assert!(rows.len() > 6000, "{} cases", rows.len());
    for f in &rows {
        let number = |i: usize| f[i].parse::<usize>().expect("numeric field");
        let bits = |i: usize| f64::from_bits(f[i].parse::<u64>().expect("f64 bits"));
        let signed = |i: usize| f[i].parse::<i64>().expect("integer");
        let params = LetterboxParams {
            new_shape: (number(7), number(8)),
            auto: number(2) == 1,
            scale_fill: number(3) == 1,
            scaleup: number(4) == 1,
            center: number(5) == 1,
            stride: number(6),
        };
        let (w, h) = (number(0), number(1));
        let g = letterbox_geometry(w, h, &params).expect("geometry");
        let context = format!("{w}x{h} {params:?}");
        assert_eq!(
            [g.resized_w, g.resized_h, g.top, g.bottom, g.left, g.right],
            [
                number(9),
                number(10),
                number(11),
                number(12),
                number(13),
                number(14)
            ],
            "{context}"
        );
        assert_eq!(
            (g.ratio.0.to_bits(), g.ratio.1.to_bits()),
            (bits(15).to_bits(), bits(16).to_bits()),
            "{context}: ratio"
        );
        let s = g.scale_boxes();
        assert_eq!(
            (s.gain_x.to_bits(), s.gain_y.to_bits(), s.pad_x, s.pad_y),
            (
                bits(17).to_bits(),
                bits(18).to_bits(),
                signed(19),
                signed(20)
            ),
            "{context}: scale_boxes"
        );
    }
    println!("{} geometry cases match", rows.len());
}
