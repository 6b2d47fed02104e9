//! A minimal `.npy` reader and the comparison against cv2's output.
//!
//! The golden outputs are numpy arrays saved by `cv2.imread` + `np.save`; reading the
//! format ourselves (uint8, C order only) keeps the dev-dependencies at zero.

/// A uint8 array from a `.npy` file: its shape and its bytes in C order.
pub(crate) struct Npy {
    pub(crate) shape: Vec<usize>,
    pub(crate) data: Vec<u8>,
}

pub(crate) fn read_npy(path: &std::path::Path) -> Npy {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        &bytes[..6],
        b"\x93NUMPY",
        "{}: not an npy file",
        path.display()
    );
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
            12,
        ),
    };
    let header = std::str::from_utf8(&bytes[start..start + len]).unwrap();
    assert!(
        header.contains("'descr': '|u1'"),
        "{}: not uint8: {header}",
        path.display()
    );
    assert!(
        header.contains("'fortran_order': False"),
        "{}: not C order",
        path.display()
    );
    let shape_text = header
        .split("'shape': (")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    Npy {
        shape,
        data: bytes[start + len..].to_vec(),
    }
}

/// Compare a decoded image with a golden HxWx3 array; `None` when byte-identical,
/// otherwise a one-line description of how they differ.
pub(crate) fn compare(img: &mlperf_jpeg::Image, golden: &Npy) -> Option<String> {
    let shape = vec![img.height, img.width, 3];
    if golden.shape != shape {
        return Some(format!("shape {:?}, cv2 has {:?}", shape, golden.shape));
    }
    let diffs: Vec<usize> = (0..img.data.len())
        .filter(|&i| img.data[i] != golden.data[i])
        .collect();
    let first = *diffs.first()?;
    let max = diffs
        .iter()
        .map(|&i| (img.data[i] as i32 - golden.data[i] as i32).abs())
        .max()
        .unwrap();
    let (px, ch) = (first / 3, first % 3);
    Some(format!(
        "{} of {} bytes differ (max |diff| {max}); first at row {} col {} channel {} (BGR): ours {} cv2 {}",
        diffs.len(),
        img.data.len(),
        px / img.width,
        px % img.width,
        ch,
        img.data[first],
        golden.data[first]
    ))
}
