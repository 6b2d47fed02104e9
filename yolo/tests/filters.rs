//! Behaviour of the individual steps on hand-made inputs.

use mlperf_yolo_postprocess::{
    mlperf_records, non_max_suppression, postprocess, scale_boxes, Detection, Error, NmsParams,
    Scratch, COCO_80_TO_91,
};

const NC: usize = 80;

/// `(class, score)` entries of one anchor.
type Scores = [(usize, f32)];
/// One anchor: its `cx, cy, w, h` and scores.
type Anchor<'a> = ([f32; 4], &'a Scores);

/// Dense (84, n) raw output; each anchor gets a box and (class, score) entries.
fn raw(anchors: &[Anchor<'_>]) -> Vec<f32> {
    let n = anchors.len();
    let mut v = vec![0.0f32; (4 + NC) * n];
    for (a, (b, scores)) in anchors.iter().enumerate() {
        for (c, x) in b.iter().enumerate() {
            v[c * n + a] = *x;
        }
        for &(k, s) in scores.iter() {
            v[(4 + k) * n + a] = s;
        }
    }
    v
}

fn nms(v: &[f32], n: usize, p: &NmsParams) -> Vec<Detection> {
    non_max_suppression(v, NC, n, p, &mut Scratch::new()).unwrap()
}

#[test]
fn conf_filter_is_strict_in_float32() {
    let t = 0.001f32;
    let above = f32::from_bits(t.to_bits() + 1);
    let b = [100.0, 100.0, 10.0, 10.0];
    let b2 = [300.0, 100.0, 10.0, 10.0];
    let v = raw(&[(b, &[(0, t)]), (b2, &[(1, above)])]);
    let d = nms(&v, 2, &NmsParams::default());
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].class, d[0].score), (1, above));
}

#[test]
fn best_class_is_the_first_maximum() {
    let b = [100.0, 100.0, 10.0, 10.0];
    let v = raw(&[(b, &[(9, 0.4), (3, 0.4), (70, 0.1)])]);
    let d = nms(&v, 1, &NmsParams::default());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].class, 3);
}

#[test]
fn xywh_to_xyxy() {
    let v = raw(&[([10.0, 20.0, 5.0, 3.0], &[(0, 0.5)])]);
    let d = nms(&v, 1, &NmsParams::default())[0];
    assert_eq!((d.x1, d.y1, d.x2, d.y2), (7.5, 18.5, 12.5, 21.5));
}

#[test]
fn nms_is_class_aware_and_keeps_score_order() {
    let b = [100.0, 100.0, 50.0, 50.0];
    let v = raw(&[(b, &[(2, 0.3)]), (b, &[(2, 0.9)]), (b, &[(5, 0.5)])]);
    let d = nms(&v, 3, &NmsParams::default());
    let got: Vec<(u32, f32)> = d.iter().map(|d| (d.class, d.score)).collect();
    assert_eq!(got, [(2, 0.9), (5, 0.5)]);
}

#[test]
fn equal_scores_keep_the_lower_index_in_nms() {
    // Identical boxes with the same score: torchvision's stable sort visits anchor 0 first.
    let v = raw(&[
        ([100.0, 100.0, 50.0, 50.0], &[(1, 0.5)]),
        ([101.0, 100.0, 50.0, 50.0], &[(1, 0.5)]),
    ]);
    let d = nms(&v, 2, &NmsParams::default());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].x1, 75.0);
}

#[test]
fn iou_exactly_point_seven_is_not_suppressed() {
    // inter 70, union 100: IoU rounds to 0.7f32, which is below the double 0.7.
    let v = raw(&[
        ([5.0, 5.0, 10.0, 10.0], &[(0, 0.9)]),
        ([5.0, 3.5, 10.0, 7.0], &[(0, 0.8)]),
    ]);
    assert_eq!(nms(&v, 2, &NmsParams::default()).len(), 2);
    let v = raw(&[
        ([5.0, 5.0, 10.0, 10.0], &[(0, 0.9)]),
        ([5.0, 3.75, 10.0, 7.5], &[(0, 0.8)]),
    ]);
    assert_eq!(nms(&v, 2, &NmsParams::default()).len(), 1);
}

#[test]
fn max_det_and_max_nms_cut() {
    let scores: Vec<[(usize, f32); 1]> = (0..50).map(|i| [(0, 0.01 * (i + 1) as f32)]).collect();
    let refs: Vec<Anchor<'_>> = scores
        .iter()
        .enumerate()
        .map(|(i, s)| ([10.0 + 20.0 * i as f32, 10.0, 8.0, 8.0], &s[..]))
        .collect();
    let v = raw(&refs);
    let p = NmsParams {
        max_det: 7,
        ..NmsParams::default()
    };
    let d = nms(&v, 50, &p);
    assert_eq!(d.len(), 7);
    assert!(d.windows(2).all(|w| w[0].score > w[1].score));
    assert_eq!(d[0].score, 0.5);
    let p = NmsParams {
        max_nms: 5,
        ..NmsParams::default()
    };
    let d = nms(&v, 50, &p);
    assert_eq!(d.len(), 5);
    assert_eq!(d[4].score, 0.01 * 46.0);
}

#[test]
fn scale_boxes_undoes_letterbox_and_clips() {
    // 480x640 -> 640x640: gain 1, pad_y 80.
    let mut d = [Detection {
        x1: -3.0,
        y1: 90.0,
        x2: 650.0,
        y2: 600.0,
        score: 0.5,
        class: 0,
    }];
    scale_boxes(&mut d, (640, 640), (480, 640));
    assert_eq!(
        (d[0].x1, d[0].y1, d[0].x2, d[0].y2),
        (0.0, 10.0, 640.0, 480.0)
    );
}

#[test]
fn records_layout() {
    let d = [Detection {
        x1: 64.0,
        y1: 48.0,
        x2: 320.0,
        y2: 240.0,
        score: 0.25,
        class: 79,
    }];
    let mut out = Vec::new();
    mlperf_records(42, &d, (480, 640), &mut out);
    let f: Vec<f32> = out
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(f, [42.0, 0.1, 0.1, 0.5, 0.5, 0.25, 90.0]);
    assert_eq!(COCO_80_TO_91[79], 90);
    // qsl_idx goes through a double then float32, like float() and struct.pack("f").
    out.clear();
    mlperf_records(16_777_217, &d, (480, 640), &mut out);
    assert_eq!(
        f32::from_le_bytes(out[..4].try_into().unwrap()),
        16_777_216.0
    );
}

#[test]
fn wrong_length_is_an_error() {
    let bytes = vec![0u8; 84 * 10 * 4 - 4];
    match postprocess(&bytes, 10, (640, 640), (480, 640), 0) {
        Err(Error::BadLength { got, expected, .. }) => assert_eq!((got, expected), (3356, 3360)),
        other => panic!("{other:?}"),
    }
    let bytes = vec![0u8; 84 * 10 * 4];
    assert_eq!(
        postprocess(&bytes, 10, (640, 640), (480, 640), 0).unwrap(),
        Vec::<u8>::new()
    );
    assert!(matches!(
        postprocess(&bytes, 10, (640, 640), (0, 640), 0),
        Err(Error::EmptyShape(0, 640))
    ));
}
