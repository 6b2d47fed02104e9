//! The exact element order of libstdc++'s `std::sort` (introsort), which torch's CPU `sort` /
//! `argsort` run with `KeyValueCompDesc` when `stable=False` (ATen `SortingKernel.cpp`).
//! `std::sort` is not stable, so the order of equal scores is whatever this algorithm leaves;
//! reproducing it step by step gives the same tie order as the reference.
//!
//! Items are `(key, index)` pairs; `less(a, b)` is "a goes before b": a descending comparison
//! on the keys, NaN first (the comparator torch uses for `descending=True`).

/// libstdc++ `_S_threshold`.
const THRESHOLD: usize = 16;

#[inline]
fn less(a: (f32, u32), b: (f32, u32)) -> bool {
    (a.0.is_nan() && !b.0.is_nan()) || a.0 > b.0
}

/// [`less`] as an [`Ordering`](std::cmp::Ordering), for a stable sort with the same comparator.
pub(crate) fn cmp_desc(a: &(f32, u32), b: &(f32, u32)) -> std::cmp::Ordering {
    if less(*a, *b) {
        std::cmp::Ordering::Less
    } else if less(*b, *a) {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

/// Sorts `v` in the order libstdc++ `std::sort(v, KeyValueCompDesc)` produces.
pub(crate) fn sort_desc(v: &mut [(f32, u32)]) {
    let n = v.len();
    if n == 0 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize; // 2 * floor(log2 n)
    introsort_loop(v, 0, n, depth);
    final_insertion_sort(v, n);
}

fn introsort_loop(v: &mut [(f32, u32)], first: usize, mut last: usize, mut depth: usize) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last]);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last);
        introsort_loop(v, cut, last, depth);
        last = cut;
    }
}

fn partition_pivot(v: &mut [(f32, u32)], first: usize, last: usize) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1);
    unguarded_partition(v, first + 1, last, first)
}

fn move_median_to_first(v: &mut [(f32, u32)], result: usize, a: usize, b: usize, c: usize) {
    let pick = if less(v[a], v[b]) {
        if less(v[b], v[c]) {
            b
        } else if less(v[a], v[c]) {
            c
        } else {
            a
        }
    } else if less(v[a], v[c]) {
        a
    } else if less(v[b], v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition(
    v: &mut [(f32, u32)],
    mut first: usize,
    mut last: usize,
    pivot: usize,
) -> usize {
    loop {
        while less(v[first], v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(v[pivot], v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort(v: &mut [(f32, u32)], n: usize) {
    if n > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD]);
        for i in THRESHOLD..n {
            unguarded_linear_insert(v, i);
        }
    } else {
        insertion_sort(v);
    }
}

fn insertion_sort(v: &mut [(f32, u32)]) {
    for i in 1..v.len() {
        if less(v[i], v[0]) {
            let val = v[i];
            v.copy_within(0..i, 1);
            v[0] = val;
        } else {
            unguarded_linear_insert(v, i);
        }
    }
}

fn unguarded_linear_insert(v: &mut [(f32, u32)], mut last: usize) {
    let val = v[last];
    while less(val, v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = val;
}

/// `std::__partial_sort(first, last, last)`: make_heap then sort_heap.
fn heap_sort(v: &mut [(f32, u32)]) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[parent];
            adjust_heap(v, parent, len, value);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, value);
    }
}

fn adjust_heap(v: &mut [(f32, u32)], mut hole: usize, len: usize, value: (f32, u32)) {
    let top = hole;
    let mut second = hole;
    while second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if less(v[second], v[second - 1]) {
            second -= 1;
        }
        v[hole] = v[second];
        hole = second;
    }
    if len & 1 == 0 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[hole] = v[second - 1];
        hole = second - 1;
    }
    // push_heap
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(v[parent], value) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_sort_orders_descending() {
        let mut v: Vec<(f32, u32)> = (0..37u32).map(|i| (((i * 7) % 5) as f32, i)).collect();
        heap_sort(&mut v);
        assert!(v.windows(2).all(|w| w[0].0 >= w[1].0));
        let mut idx: Vec<u32> = v.iter().map(|p| p.1).collect();
        idx.sort_unstable();
        assert_eq!(idx, (0..37).collect::<Vec<_>>());
    }

    #[test]
    fn small_inputs_are_stable() {
        // n <= 16: plain insertion sort, which keeps equal keys in input order.
        let mut v: Vec<(f32, u32)> = (0..16u32).map(|i| ((i % 3) as f32, i)).collect();
        sort_desc(&mut v);
        let idx: Vec<u32> = v.iter().map(|p| p.1).collect();
        assert_eq!(idx, [2, 5, 8, 11, 14, 1, 4, 7, 10, 13, 0, 3, 6, 9, 12, 15]);
    }
}

#[cfg(test)]
mod torch_vectors {
    use super::sort_desc;

    fn u32_at(b: &[u8], o: usize) -> u32 {
        u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
    }

    /// `tests/data/sort_ties.bin`: key arrays full of ties with torch's `argsort(descending=True)`.
    #[test]
    fn matches_torch_argsort_on_ties() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sort_ties.bin");
        let b = std::fs::read(path).unwrap();
        let count = u32_at(&b, 0) as usize;
        let mut o = 4;
        for case in 0..count {
            let n = u32_at(&b, o) as usize;
            o += 4;
            let mut v: Vec<(f32, u32)> = (0..n)
                .map(|i| (f32::from_bits(u32_at(&b, o + 4 * i)), i as u32))
                .collect();
            o += 4 * n;
            let want: Vec<u32> = (0..n).map(|i| u32_at(&b, o + 4 * i)).collect();
            o += 4 * n;
            sort_desc(&mut v);
            let got: Vec<u32> = v.iter().map(|p| p.1).collect();
            assert_eq!(got, want, "sort vector {case} (n = {n})");
        }
        assert_eq!(o, b.len());
    }
}
