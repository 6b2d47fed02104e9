//! Byte equality with `cv2.imread` (opencv-python-headless 5.0) on the whole fixture.
//!
//! `raw/` holds the ImageNet-layout photographs (goldens in `decoded/`), `decode-extra/`
//! the decode-only edge cases (goldens beside them; files cv2 cannot read have none and
//! must fail here too). All mismatches are collected and printed before failing, so one
//! run shows the full picture.

mod common;
mod npy;

use common::fixture_dir;
use mlperf_jpeg::Decoder;
use npy::{compare, read_npy};

fn check(
    dec: &mut Decoder,
    jpeg: &std::path::Path,
    golden: Option<std::path::PathBuf>,
) -> Option<String> {
    let bytes = std::fs::read(jpeg).unwrap();
    match (dec.decode_bgr(&bytes), golden) {
        (Ok(img), Some(g)) => compare(&img, &read_npy(&g)),
        (Err(e), Some(_)) => Some(format!("we fail ({e}), cv2 decodes it")),
        (Ok(img), None) => Some(format!(
            "we decode {}x{}, cv2 returns None",
            img.width, img.height
        )),
        (Err(_), None) => None,
    }
}

fn run(list: Vec<(std::path::PathBuf, Option<std::path::PathBuf>)>) {
    let mut dec = Decoder::new().expect("libturbojpeg.so.0 (apt-get install libturbojpeg0)");
    let mut bad = Vec::new();
    for (jpeg, golden) in &list {
        if let Some(why) = check(&mut dec, jpeg, golden.clone()) {
            bad.push(format!(
                "{}: {why}",
                jpeg.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} files differ from cv2.imread:\n{}",
        bad.len(),
        list.len(),
        bad.join("\n")
    );
    eprintln!("{} files byte-identical to cv2.imread", list.len());
}

/// The raw images against the digests of `cv2.imread`'s arrays (`decoded.sha256`: the
/// arrays themselves are 6 MB; `make_fixture.py reference` writes them to look into a
/// mismatch).
#[test]
fn imagenet_fixture_matches_cv2() {
    use sha2::{Digest, Sha256};
    let dir = fixture_dir();
    let digests = std::fs::read_to_string(dir.join("decoded.sha256")).unwrap();
    let mut dec = Decoder::new().expect("libturbojpeg.so.0 (apt-get install libturbojpeg0)");
    let mut bad = Vec::new();
    let mut checked = 0;
    for line in digests.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [digest, height, width, name] = fields[..] else {
            panic!("decoded.sha256: bad line {line:?}");
        };
        let bytes = std::fs::read(dir.join("raw").join(name)).unwrap();
        checked += 1;
        match dec.decode_bgr(&bytes) {
            Ok(img) => {
                let got = format!("{:x}", Sha256::digest(&img.data));
                let size = (img.height.to_string(), img.width.to_string());
                if got != digest || size != (height.to_string(), width.to_string()) {
                    bad.push(format!(
                        "{name}: {}x{} sha256 {got}, cv2.imread {height}x{width} {digest}",
                        img.height, img.width
                    ));
                }
            }
            Err(e) => bad.push(format!("{name}: we fail ({e}), cv2 decodes it")),
        }
    }
    assert!(checked >= 12, "decoded.sha256 lists {checked} images");
    assert!(
        bad.is_empty(),
        "differ from cv2.imread:\n{}",
        bad.join("\n")
    );
}

#[test]
fn decode_extra_matches_cv2() {
    let dir = fixture_dir().join("decode-extra");
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let list: Vec<_> = manifest
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .map(|name| {
            let golden = dir.join(format!("{name}.npy"));
            (dir.join(name), golden.exists().then_some(golden))
        })
        .collect();
    assert!(list.len() >= 40);
    run(list);
}
