//! Seeded mutations of whole `.npy` files: `NpyFile::open` and every read either succeed or
//! fail naming the file, never panic, and never allocate more than the file holds (the test
//! binary's allocator notes the largest request per thread).

use std::path::{Path, PathBuf};

use super::*;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The test binary's allocator: the system's, noting per thread the largest single request,
/// so that the mutation test can tell that no header made `open` or `read` allocate more
/// than the file holds.
struct LargestAllocation;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation(size: usize) {
    // `try_with`: nothing to note while the thread's locals are being torn down.
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the bookkeeping only
// touches a const-initialized thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: the caller upholds `alloc`'s contract, which is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        // SAFETY: as for `dealloc`, and the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: LargestAllocation = LargestAllocation;

use mlperf_loadgen::testing::MutationRng as Rng;

/// A temporary directory of the test's own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("mlperf-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `.npy` file of `version` around the header dictionary `dict`, padded with spaces and a
/// newline to 64 bytes like NumPy writes it, then `data`.
fn npy_bytes(version: u8, dict: &[u8], data: &[u8]) -> Vec<u8> {
    let header_at = if version == 1 { 10 } else { 12 };
    let mut header = dict.to_vec();
    while !(header_at + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[version, 0]);
    if version == 1 {
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(data);
    bytes
}

/// Where the header dictionary starts and how long the length field says it is, if the
/// preamble is readable.
fn framing(bytes: &[u8]) -> Option<(usize, usize)> {
    match *bytes.get(6)? {
        1 if bytes.len() >= 10 => Some((10, u16::from_le_bytes([bytes[8], bytes[9]]) as usize)),
        2 | 3 if bytes.len() >= 12 => Some((
            12,
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        )),
        _ => None,
    }
}

/// Rewrites the header length field to `len` (cut to the field's width).
fn set_header_len(bytes: &mut [u8], len: u64) {
    match framing(bytes) {
        Some((10, _)) => bytes[8..10].copy_from_slice(&(len as u16).to_le_bytes()),
        Some(_) => bytes[8..12].copy_from_slice(&(len as u32).to_le_bytes()),
        None => {}
    }
}

/// Keeps the length field in step with an edit of `delta` bytes inside the header (half of
/// the time: the other half tests a field that disagrees with the text).
fn follow_edit(rng: &mut Rng, bytes: &mut [u8], delta: isize) {
    if let Some((_, len)) = framing(bytes) {
        if rng.chance(2) {
            set_header_len(bytes, (len as i64 + delta as i64).max(0) as u64);
        }
    }
}

const DESCRS: &[&str] = &[
    "<f4",
    "|u1",
    "<i8",
    "<f8",
    "<u2",
    "<f2",
    "|b1",
    "|i1",
    "<u8",
    "<i4",
    ">f4",
    ">u1",
    "=f4",
    "<U8",
    "O",
    "",
    "<",
    "f4",
    "é4",
    "\u{fffd}u1",
    "<f4\0",
    "<c8",
    "<i16",
    "|V8",
    "<M8[ns]",
    "'",
    "\"",
];

const DIMS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "255",
    "65536",
    "2147483648",
    "4294967296",
    "1152921504606846976",
    "4611686018427387904",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "99999999999999999999",
    "-1",
    "-9223372036854775808",
    "3L",
    " 2 ",
    "+2",
    "0x10",
    "1e3",
    "",
    "'a'",
    "\u{fffd}",
];

const SHAPES: &[&str] = &[
    "()",
    "(,)",
    "(0,)",
    "(-1,)",
    "(-1, 3)",
    "(3, -1)",
    "(99999999999999999999,)",
    "(9223372036854775807, 0)",
    "(0, 9223372036854775807)",
    "(4611686018427387904, 4)",
    "(1, 4611686018427387904, 4)",
    "(1152921504606846976,)",
    "(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)",
    "(3L, 2L)",
    "(2, 3",
    "2, 3)",
    "[2, 3]",
    "(2,,3)",
    "(2 3)",
    "((2, 3))",
    "(",
    ")",
    "",
];

/// A shape tuple: one of the odd ones, or random dimensions.
fn shape_text(rng: &mut Rng) -> String {
    if rng.chance(3) {
        return rng.pick(SHAPES).to_string();
    }
    let dims: Vec<&str> = (0..rng.below(6)).map(|_| rng.pick(DIMS)).collect();
    match dims.len() {
        1 if rng.chance(2) => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

/// A header dictionary: keys dropped, repeated or reordered, quotes swapped or missing.
fn dict_text(rng: &mut Rng) -> Vec<u8> {
    let quote = rng.pick(&["'", "'", "\"", "", "`"]);
    let value_quote = rng.pick(&["'", "'", "\"", "", "'\""]);
    let mut items = vec![
        format!(
            "{quote}descr{quote}: {value_quote}{}{value_quote}",
            rng.pick(DESCRS)
        ),
        format!(
            "{quote}fortran_order{quote}: {}",
            rng.pick(&["False", "False", "True", "0", "", "None"])
        ),
        format!("{quote}shape{quote}: {}", shape_text(rng)),
    ];
    if rng.chance(4) {
        items.remove(rng.below(items.len()));
    }
    if rng.chance(4) {
        let i = rng.below(items.len());
        items.swap(0, i);
    }
    if rng.chance(8) {
        let again = items[rng.below(items.len())].clone();
        items.push(again);
    }
    let mut text = format!("{{{}, }}", items.join(", ")).into_bytes();
    if rng.chance(8) {
        // Bytes that are not UTF-8 (the header is read lossily).
        let at = rng.below(text.len() + 1);
        text.splice(at..at, [0xff, 0xe9]);
    }
    text
}

/// Pieces spliced into the header.
const TOKENS: &[&[u8]] = &[
    b"'",
    b"\"",
    b":",
    b"(",
    b")",
    b",",
    b"-",
    b"-1",
    b"0",
    b"99999999999999999999",
    b"9223372036854775807",
    b"L",
    b"True",
    b"\0",
    b"\xff",
    b"\xe9",
    b"\xc3\xa9",
    b" ",
    b"\n",
    b"{",
    b"}",
    b"'shape': (1,), ",
    b"'descr': '<f4', ",
];

/// One random mutation of a `.npy` file.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, data: &[u8]) {
    let len = bytes.len();
    let head = len.min(128);
    let header = framing(bytes).map(|(at, n)| (at, n.min(len.saturating_sub(at))));
    match rng.below(13) {
        // A bit flipped or a byte replaced in the first 128 bytes.
        0 if head > 0 => {
            let i = rng.below(head);
            bytes[i] ^= 1 << rng.below(8);
        }
        1 if head > 0 => {
            let i = rng.below(head);
            bytes[i] = match rng.below(2) {
                0 => rng.next_u64() as u8,
                _ => *rng
                    .pick(&[b"'", b"\"", b"(", b")", b",", b":", b"-", b"9", b"\0"])
                    .first()
                    .unwrap(),
            };
        }
        // A token inserted into, or a range deleted from, the dictionary.
        2 | 3 => {
            if let Some((at, n)) = header {
                let i = at + rng.below(n + 1);
                let token = rng.pick(TOKENS);
                bytes.splice(i..i, token.iter().copied());
                follow_edit(rng, bytes, token.len() as isize);
            }
        }
        4 => {
            if let Some((at, n)) = header.filter(|(_, n)| *n > 0) {
                let i = at + rng.below(n);
                let end = (i + 1 + rng.below(12)).min(at + n);
                bytes.drain(i..end);
                follow_edit(rng, bytes, -((end - i) as isize));
            }
        }
        // The length field made extreme.
        5 => {
            if let Some((_, n)) = framing(bytes) {
                let n = n as u64;
                let len = *rng.pick(&[
                    &0u64,
                    &1,
                    &2,
                    &n.saturating_sub(1),
                    &(n + 1),
                    &(n + 64),
                    &0x7fff,
                    &0xffff,
                    &0x1_0000,
                    &0x7fff_ffff,
                    &0xffff_ffff,
                ]);
                set_header_len(bytes, len);
            }
        }
        // The version changed (the length field not converted).
        6 if len > 7 => {
            bytes[6] = *rng.pick(&[&0u8, &1, &2, &3, &4, &0xff]);
            if rng.chance(4) {
                bytes[7] = rng.next_u64() as u8;
            }
        }
        // A new dictionary, framed properly, over this data or other bytes.
        7 | 8 => {
            let version = *rng.pick(&[&1u8, &1, &2, &3]);
            let data: Vec<u8> = match rng.below(3) {
                0 => (0..rng.below(200)).map(|_| rng.next_u64() as u8).collect(),
                _ => data.to_vec(),
            };
            *bytes = npy_bytes(version, &dict_text(rng), &data);
        }
        // Only the shape or the descr replaced, in place.
        9 => {
            let text = shape_text(rng);
            replace_value(rng, bytes, b"'shape': ", b")", text.as_bytes());
        }
        10 => {
            let descr = format!("'{}'", rng.pick(DESCRS));
            replace_value(rng, bytes, b"'descr': ", b"',", descr.as_bytes());
        }
        // Truncated anywhere.
        11 => bytes.truncate(rng.below(len + 1)),
        // Data cut short or extended a little.
        _ => {
            if rng.chance(2) {
                bytes.truncate(len.saturating_sub(1 + rng.below(16)));
            } else {
                let extra = 1 + rng.below(64);
                bytes.extend((0..extra).map(|_| rng.next_u64() as u8));
            }
        }
    }
}

/// Replaces the text from after `key` up to and including the first `end` after it.
fn replace_value(rng: &mut Rng, bytes: &mut Vec<u8>, key: &[u8], end: &[u8], with: &[u8]) {
    let Some(start) = bytes
        .windows(key.len())
        .position(|w| w == key)
        .map(|at| at + key.len())
    else {
        return;
    };
    let Some(stop) = bytes[start..]
        .windows(end.len())
        .position(|w| w == end)
        .map(|at| start + at + 1)
    else {
        return;
    };
    let removed = stop - start;
    bytes.splice(start..stop, with.iter().copied());
    follow_edit(rng, bytes, with.len() as isize - removed as isize);
}

/// Opens `path` (holding `file_len` bytes) and reads every sample; checks what comes back
/// and that no allocation exceeded what the file can justify. The sample count, or the
/// error.
fn exercise(path: &Path, file_len: u64) -> Result<usize, String> {
    let name = path.display().to_string();
    LARGEST.with(|largest| largest.set(0));
    let opened = match NpyFile::open(path) {
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("{name}: ")) && message.len() > name.len() + 2,
                "the error does not name the file: {message}"
            );
            Err(message)
        }
        Ok(mut source) => {
            assert_eq!(source.describe(), name);
            let layout = source.layout().clone();
            assert!(layout.shape.iter().all(|&d| d >= 0), "{layout:?}");
            let sample_bytes = layout
                .shape
                .iter()
                .fold(layout.element.size() as u128, |n, &d| n * d as u128);
            let count = source.len();
            // A count no bigger than the file also bounds the reading below.
            assert!(
                count as u64 <= file_len,
                "{count} samples of {sample_bytes} bytes ({layout:?}) in a file of {file_len} bytes"
            );
            assert!(count as u128 * sample_bytes <= file_len as u128);
            let mut out = Vec::new();
            for index in 0..count {
                source
                    .read(index, &mut out)
                    .unwrap_or_else(|e| panic!("sample {index} of {count}: {e}"));
                assert_eq!(out.len() as u128, sample_bytes);
            }
            let beyond = source.read(count, &mut out).unwrap_err().to_string();
            assert!(beyond.starts_with(&format!("{name}: ")), "{beyond}");
            Ok(count)
        }
    };
    let largest = LARGEST.with(Cell::get) as u64;
    assert!(
        largest <= 2 * file_len + (1 << 16),
        "a {largest}-byte allocation for a file of {file_len} bytes"
    );
    opened
}

/// Writes `bytes` as a new file (rewriting one in place makes ext4 flush it on close) and
/// exercises it; a panic is reported with the input.
fn run_case(path: &Path, case: &str, bytes: &[u8]) -> Result<usize, String> {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).unwrap();
    catch_unwind(AssertUnwindSafe(|| exercise(path, bytes.len() as u64))).unwrap_or_else(|why| {
        let why = why
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| why.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        let head = &bytes[..bytes.len().min(160)];
        panic!(
            "{case} ({} bytes, first {}: {:?}): {why}",
            bytes.len(),
            head.len(),
            String::from_utf8_lossy(head)
        )
    })
}

/// Inputs that found bugs, and edges, with what must come of them: `Ok(samples)`, or
/// `Err(part of the message)`.
#[allow(clippy::type_complexity)]
fn regressions() -> Vec<(&'static str, Vec<u8>, Result<usize, &'static str>)> {
    let dict = |descr: &str, shape: &str| {
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}").into_bytes()
    };
    let mut huge_header = npy_bytes(2, &dict("<f4", "(1,)"), &[0; 4]);
    // A version 2.0 header length of 4 GiB - 1 in a 132-byte file: was allocated (then
    // the read failed) before the length was compared with the file's.
    huge_header[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut non_ascii_descr = dict("Xu1", "(2,)");
    let x = non_ascii_descr.iter().position(|&b| b == b'X').unwrap();
    // A descr starting with a byte that is not UTF-8 (read as U+FFFD): split inside a
    // character, a panic.
    non_ascii_descr[x] = 0xe9;
    vec![
        (
            "4 GiB header length",
            huge_header,
            Err("header length field says 4294967295 bytes"),
        ),
        (
            "descr starting with byte 0xe9",
            npy_bytes(1, &non_ascii_descr, &[0; 2]),
            Err("unsupported element type \u{fffd}u1"),
        ),
        (
            "descr 'é4'",
            npy_bytes(1, &dict("é4", "(2,)"), &[0; 8]),
            Err("unsupported element type é4"),
        ),
        (
            "descr '\u{fffd}u1'",
            npy_bytes(1, &dict("\u{fffd}u1", "(2,)"), &[0; 2]),
            Err("unsupported element type"),
        ),
        // i64::MAX samples of 0 bytes in a 128-byte file: opened, a source of 2^63 samples.
        (
            "i64::MAX zero-byte samples",
            npy_bytes(1, &dict("<f4", "(9223372036854775807, 0)"), &[]),
            Err("samples has 0 bytes"),
        ),
        (
            "zero-byte samples",
            npy_bytes(1, &dict("|u1", "(3, 2, 0)"), &[]),
            Err("each of the 3 samples has 0 bytes"),
        ),
        (
            "no samples of 2^40 bytes",
            npy_bytes(1, &dict("|u1", "(0, 1099511627776)"), &[]),
            Ok(0),
        ),
        (
            "2^62 x 4 elements",
            npy_bytes(1, &dict("<f4", "(4611686018427387904, 4)"), &[0; 64]),
            Err("overflows"),
        ),
        (
            "2^60 one-byte samples",
            npy_bytes(3, &dict("|u1", "(1152921504606846976,)"), &[0; 64]),
            Err("truncated: the header describes 1152921504606846976 samples"),
        ),
        (
            "dimension beyond i64",
            npy_bytes(1, &dict("|u1", "(99999999999999999999,)"), &[0; 64]),
            Err("\"99999999999999999999\" is not a number"),
        ),
        (
            "negative dimension",
            npy_bytes(1, &dict("<f4", "(-1, 3)"), &[0; 64]),
            Err("-1 is negative"),
        ),
        (
            "0-dimensional",
            npy_bytes(1, &dict("<f4", "()"), &[0; 4]),
            Err("0-dimensional"),
        ),
        ("empty file", Vec::new(), Err("not a .npy file")),
        ("magic only", MAGIC.to_vec(), Err("not a .npy file")),
        (
            "version 2 preamble cut",
            b"\x93NUMPY\x02\x00\x10\x00".to_vec(),
            Err("truncated in the header length field"),
        ),
    ]
}

#[test]
fn mutated_npy_files_open_or_fail_naming_the_file() {
    const CASES: usize = 3_000;
    let started = std::time::Instant::now();
    let dir = TempDir::new("npy-mutations");
    let path = dir.0.join("mutated.npy");

    // The seeds: NumPy's layout, ranks 1 to 4, five types, versions 1.0 to 3.0.
    let mut seeds: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for (descr, count, shape) in [
        ("<f4", 3, &[2i64, 2][..]),
        ("|u1", 5, &[][..]),
        ("<i8", 2, &[1, 2, 3][..]),
        ("<f8", 4, &[3][..]),
        ("<u2", 2, &[3, 1, 2][..]),
    ] {
        let element = element_of(descr).unwrap().size();
        let bytes = count * element * shape.iter().product::<i64>() as usize;
        let data: Vec<u8> = (0..bytes).map(|i| (i * 7 + 1) as u8).collect();
        write_npy(&path, descr, count, shape, &data).unwrap();
        let file = std::fs::read(&path).unwrap();
        // Each seed reads back as written.
        let mut source = NpyFile::open(&path).unwrap();
        assert_eq!(source.len(), count);
        assert_eq!(source.layout().shape, shape);
        let mut out = Vec::new();
        for (index, expected) in data.chunks(bytes / count).enumerate() {
            source.read(index, &mut out).unwrap();
            assert_eq!(out, expected);
        }
        seeds.push((file, data));
    }
    for version in [2, 3] {
        let (file, data) = &seeds[0];
        let (at, len) = framing(file).unwrap();
        let dict = file[at..at + len].trim_ascii_end().to_vec();
        let converted = npy_bytes(version, &dict, data);
        assert_eq!(
            run_case(&path, &format!("version {version} seed"), &converted),
            Ok(3)
        );
        seeds.push((converted, data.clone()));
    }

    for (name, bytes, expected) in regressions() {
        match (run_case(&path, name, &bytes), expected) {
            (Ok(count), Ok(expected)) => assert_eq!(count, expected, "{name}"),
            (Err(message), Err(part)) => {
                assert!(message.contains(part), "{name}: {message}")
            }
            (outcome, expected) => panic!("{name}: {outcome:?}, expected {expected:?}"),
        }
    }

    let mut rng = Rng(0x5EED_0000_0000_4E50);
    let (mut opened, mut samples) = (0, 0);
    let mut reached = [
        "no \\x93NUMPY magic",
        "unsupported .npy version",
        "header length field says",
        "the header has no",
        "has no value",
        "expected a string",
        "unterminated string",
        "unsupported element type",
        "big-endian",
        "fortran_order arrays",
        "shape is not a tuple",
        "is not a number",
        "0-dimensional",
        "is negative",
        "overflows",
        "samples has 0 bytes",
        "truncated: the header describes",
    ]
    .map(|part| (part, 0usize));
    for case in 0..CASES {
        let (seed, data) = &seeds[rng.below(seeds.len())];
        let mut bytes = seed.clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut bytes, data);
        }
        match run_case(&path, &format!("case {case}"), &bytes) {
            Ok(count) => {
                opened += 1;
                samples += count;
            }
            Err(message) => {
                for (part, seen) in &mut reached {
                    *seen += usize::from(message.contains(*part));
                }
            }
        }
    }
    // The mutations must also reach files that open, their samples, and every check.
    assert!(opened > CASES / 20, "only {opened} of {CASES} opened");
    assert!(samples > CASES / 10, "only {samples} samples read");
    for (part, seen) in &reached {
        assert!(*seen > 0, "no mutation reached the error {part:?}");
    }
    eprintln!(
        "npy mutations: {CASES} cases, {opened} opened, {samples} samples read, {:?}; \
         errors: {reached:?}",
        started.elapsed()
    );
}
