//! NIfTI stores voxels first-axis-fastest (Fortran order); numpy arrays from
//! the reference (and the bytes the SUT sends) are last-axis-fastest.

/// Reorders `src`, laid out first-axis-fastest over `shape`, into C order.
pub fn fortran_to_c<T: Copy>(src: &[T], shape: &[usize]) -> Vec<T> {
    let n: usize = shape.iter().product();
    assert_eq!(src.len(), n, "data length must match the shape");
    if shape.iter().filter(|&&d| d > 1).count() <= 1 {
        return src.to_vec(); // 1-D in effect: both orders coincide
    }
    // Fortran stride of each axis.
    let mut fstride = vec![1usize; shape.len()];
    for a in 1..shape.len() {
        fstride[a] = fstride[a - 1] * shape[a - 1];
    }
    let last = shape.len() - 1;
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    let mut base = 0usize; // Fortran offset of idx with idx[last] = 0
    while out.len() < n {
        // innermost C axis is the last one: walk it with its Fortran stride
        out.extend((0..shape[last]).map(|k| src[base + k * fstride[last]]));
        // odometer over the other axes, last-but-one fastest
        let mut a = last;
        while a > 0 {
            a -= 1;
            idx[a] += 1;
            base += fstride[a];
            if idx[a] < shape[a] {
                break;
            }
            base -= idx[a] * fstride[a];
            idx[a] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fortran_to_c;

    #[test]
    fn transposes_3d() {
        // shape (2, 3, 4); Fortran value at (i, j, k) = i + 2j + 6k
        let shape = [2, 3, 4];
        let src: Vec<u32> = (0..24).collect();
        let c = fortran_to_c(&src, &shape);
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    assert_eq!(c[(i * 3 + j) * 4 + k], (i + 2 * j + 6 * k) as u32);
                }
            }
        }
    }

    #[test]
    fn degenerate_shapes_are_copies() {
        assert_eq!(fortran_to_c(&[1, 2, 3], &[1, 3, 1]), vec![1, 2, 3]);
        assert_eq!(fortran_to_c::<u8>(&[], &[0, 4]), Vec::<u8>::new());
    }
}
