//! NumPy `.npy` files read sample by sample: the first axis counts samples, the rest is each
//! sample's shape. Versions 1.0, 2.0 and 3.0; C order; little-endian numbers. The host's
//! sample library loads data sets through it, the accuracy scorers their labels.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use header::Header;

mod header;
#[cfg(test)]
mod mutations;

/// The bytes every `.npy` file starts with.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// An element type of the `.npy` files read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    U8,
    I8,
    Bool,
    U16,
    I16,
    F16,
    U32,
    I32,
    F32,
    U64,
    I64,
    F64,
}

impl Element {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Element::U8 | Element::I8 | Element::Bool => 1,
            Element::U16 | Element::I16 | Element::F16 => 2,
            Element::U32 | Element::I32 | Element::F32 => 4,
            Element::U64 | Element::I64 | Element::F64 => 8,
        }
    }
}

/// Every sample's element type and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyLayout {
    pub element: Element,
    pub shape: Vec<i64>,
}

/// A data file that could not be read, named.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: {message}", path.display())]
    Format { path: PathBuf, message: String },
    #[error("{source_name}: sample {index} is out of range ({count} samples)")]
    OutOfRange {
        source_name: String,
        index: usize,
        count: usize,
    },
}

impl SourceError {
    pub fn io(path: &Path, error: std::io::Error) -> SourceError {
        SourceError::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

/// An opened `.npy` file; samples are read from it on demand.
pub struct NpyFile {
    path: PathBuf,
    file: File,
    data_offset: u64,
    count: usize,
    layout: NpyLayout,
    sample_bytes: usize,
}

impl NpyFile {
    pub fn open(path: &Path) -> Result<NpyFile, SourceError> {
        let invalid = |message: String| SourceError::Format {
            path: path.to_path_buf(),
            message,
        };
        // A FIFO or device would block or never end; a directory is no data set.
        let kind = std::fs::metadata(path).map_err(|e| SourceError::io(path, e))?;
        if !kind.is_file() {
            return Err(invalid("not a regular file".into()));
        }
        let file = File::open(path).map_err(|e| SourceError::io(path, e))?;
        let mut preamble = [0u8; 12];
        let read = file
            .read_at(&mut preamble, 0)
            .map_err(|e| SourceError::io(path, e))?;
        if read < 10 || &preamble[..6] != MAGIC {
            return Err(invalid("not a .npy file (no \\x93NUMPY magic)".into()));
        }
        let (header_len, header_at) = match preamble[6] {
            1 => (u16::from_le_bytes([preamble[8], preamble[9]]) as usize, 10),
            2 | 3 if read == 12 => (
                u32::from_le_bytes([preamble[8], preamble[9], preamble[10], preamble[11]]) as usize,
                12,
            ),
            2 | 3 => return Err(invalid("truncated in the header length field".into())),
            major => return Err(invalid(format!("unsupported .npy version {major}"))),
        };
        // Before the header is allocated: a 2.0 header length can claim 4 GiB.
        let actual = file.metadata().map_err(|e| SourceError::io(path, e))?.len();
        if header_at + header_len as u64 > actual {
            return Err(invalid(format!(
                "truncated: the header length field says {header_len} bytes from offset \
                 {header_at}, the file has {actual}"
            )));
        }
        let mut header = vec![0u8; header_len];
        file.read_exact_at(&mut header, header_at)
            .map_err(|e| SourceError::io(path, e))?;
        let header = String::from_utf8_lossy(&header);
        let parsed = Header::parse(&header).map_err(invalid)?;
        let Some((&count, sample_shape)) = parsed.shape.split_first() else {
            return Err(invalid(
                "a 0-dimensional array has no sample axis".to_string(),
            ));
        };
        let data_offset = header_at + header_len as u64;
        let sizes = Sizes::of(count, sample_shape, parsed.element.size(), data_offset)
            .map_err(|why| invalid(format!("shape {:?}: {why}", parsed.shape)))?;
        let (sample_bytes, needed) = (sizes.sample_bytes, sizes.file_bytes);
        if actual < needed {
            return Err(invalid(format!(
                "truncated: the header describes {count} samples of {sample_bytes} bytes \
                 ({needed} bytes with the header), the file has {actual}"
            )));
        }
        Ok(NpyFile {
            path: path.to_path_buf(),
            file,
            data_offset,
            count: count as usize,
            layout: NpyLayout {
                element: parsed.element,
                shape: sample_shape.to_vec(),
            },
            sample_bytes,
        })
    }

    /// Every sample's element type and shape.
    pub fn layout(&self) -> &NpyLayout {
        &self.layout
    }

    /// The file's path, for messages.
    pub fn describe(&self) -> String {
        self.path.display().to_string()
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The whole array's shape: the sample axis, then each sample's.
    pub fn array_shape(&self) -> Vec<i64> {
        let mut shape = vec![self.count as i64];
        shape.extend(&self.layout.shape);
        shape
    }

    /// The whole array's bytes into `out`, replacing its contents (a file that holds one
    /// sample, such as an image of a preprocessed cache).
    pub fn read_all(&mut self, out: &mut Vec<u8>) -> Result<(), SourceError> {
        out.resize(self.count * self.sample_bytes, 0);
        self.file
            .read_exact_at(out, self.data_offset)
            .map_err(|e| SourceError::io(&self.path, e))
    }

    /// Sample `index`'s bytes into `out`, replacing its contents.
    pub fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<(), SourceError> {
        if index >= self.count {
            return Err(SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.count,
            });
        }
        out.resize(self.sample_bytes, 0);
        let at = self.data_offset + (index * self.sample_bytes) as u64;
        self.file
            .read_exact_at(out, at)
            .map_err(|e| SourceError::io(&self.path, e))
    }
}

/// What a header's shape makes of a file, every product checked: a hostile header must not
/// wrap the byte counts into something that passes the length check.
#[derive(Debug)]
struct Sizes {
    sample_bytes: usize,
    /// The header and every sample.
    file_bytes: u64,
}

impl Sizes {
    fn of(
        count: i64,
        sample_shape: &[i64],
        element_bytes: usize,
        data_offset: u64,
    ) -> Result<Sizes, String> {
        if let Some(negative) = std::iter::once(&count)
            .chain(sample_shape)
            .find(|d| **d < 0)
        {
            return Err(format!("the dimension {negative} is negative"));
        }
        let overflow = || "the byte count overflows".to_string();
        let sample_bytes = sample_shape
            .iter()
            .try_fold(element_bytes as u64, |bytes, &d| {
                bytes.checked_mul(d as u64)
            })
            .filter(|bytes| usize::try_from(*bytes).is_ok())
            .ok_or_else(overflow)?;
        // Nothing would bound the count: a 128-byte file could claim 2^63 samples, and the
        // library allocates per sample.
        if sample_bytes == 0 && count > 0 {
            return Err(format!(
                "each of the {count} samples has 0 bytes (a dimension is 0); there is no data"
            ));
        }
        let file_bytes = sample_bytes
            .checked_mul(count as u64)
            .and_then(|bytes| bytes.checked_add(data_offset))
            .ok_or_else(overflow)?;
        Ok(Sizes {
            sample_bytes: sample_bytes as usize,
            file_bytes,
        })
    }
}

/// A NumPy type string (`<f4`, `|u1`, ...) as an element type.
pub fn element_of(descr: &str) -> Result<Element, String> {
    // The first character, whatever its width: a lossily read header can start with U+FFFD.
    let (order, code) = descr.split_at(descr.chars().next().map_or(0, char::len_utf8));
    if order == ">" && !code.ends_with('1') {
        return Err(format!(
            "big-endian data ({descr}) is not supported; save it little-endian"
        ));
    }
    // A byte order NumPy writes ('=' is native, little-endian here): not 'Xu1' read as u1.
    if !matches!(order, "<" | ">" | "|" | "=") {
        return Err(format!("unsupported element type {descr}"));
    }
    Ok(match code {
        "u1" => Element::U8,
        "i1" => Element::I8,
        "b1" => Element::Bool,
        "u2" => Element::U16,
        "i2" => Element::I16,
        "f2" => Element::F16,
        "u4" => Element::U32,
        "i4" => Element::I32,
        "f4" => Element::F32,
        "u8" => Element::U64,
        "i8" => Element::I64,
        "f8" => Element::F64,
        _ => return Err(format!("unsupported element type {descr}")),
    })
}

/// Writes a `.npy` (version 1.0) file: `count` samples of `shape`, little-endian `data`.
pub fn write_npy(
    path: &Path,
    descr: &str,
    count: usize,
    shape: &[i64],
    data: &[u8],
) -> std::io::Result<()> {
    let dims: Vec<String> = std::iter::once(count as i64)
        .chain(shape.iter().copied())
        .map(|d| d.to_string())
        .collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    // Pad so the data starts 64-byte aligned, the header ending in a newline.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + data.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_shapes_are_refused_before_any_byte_count_wraps() {
        assert_eq!(
            Sizes::of(10, &[28, 28], 4, 128).unwrap().file_bytes,
            128 + 10 * 28 * 28 * 4
        );
        let negative = Sizes::of(10, &[-1, 28], 4, 128).unwrap_err();
        assert!(negative.contains("-1 is negative"), "{negative}");
        assert!(Sizes::of(-3, &[2], 4, 128)
            .unwrap_err()
            .contains("negative"));
        // 2^62 * 2^2 elements of 4 bytes wraps u64 to 0 unchecked.
        let wraps = Sizes::of(1, &[1 << 62, 4], 4, 128).unwrap_err();
        assert!(wraps.contains("overflows"), "{wraps}");
        let many = Sizes::of(i64::MAX, &[1 << 20], 4, 128).unwrap_err();
        assert!(many.contains("overflows"), "{many}");
    }

    #[test]
    fn a_path_that_is_not_a_regular_file_is_refused_without_reading_it() {
        let dir = std::env::temp_dir();
        let error = NpyFile::open(&dir).err().unwrap().to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
