//! ResNet-50's top-1 as `tools/accuracy-imagenet.py` scores it: each sample's first record
//! (TEST01 logs repeat samples) decoded as one class of the log's element type, the float
//! truncated to an integer, against its line of `val_map.txt`; the line the script prints.

use std::path::Path;

use super::{for_each_response, AccuracyError};
use crate::datasets::imagenet::ValMap;

/// The element type of the class a response holds: the script's `--dtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassDtype {
    /// The reference's own: `np.array([argmax - 1], np.float32)`.
    Float32,
    Int32,
    Int64,
}

impl ClassDtype {
    /// The script's name for it.
    pub fn name(self) -> &'static str {
        match self {
            ClassDtype::Float32 => "float32",
            ClassDtype::Int32 => "int32",
            ClassDtype::Int64 => "int64",
        }
    }

    fn size(self) -> usize {
        match self {
            ClassDtype::Float32 | ClassDtype::Int32 => 4,
            ClassDtype::Int64 => 8,
        }
    }

    /// The first element of `bytes`, as `int(np.frombuffer(bytes, dtype)[0])` reads it.
    fn first_class(self, bytes: &[u8]) -> Result<i64, String> {
        let size = self.size();
        if bytes.is_empty() || !bytes.len().is_multiple_of(size) {
            return Err(format!(
                "{} bytes: not {} values ({size} bytes each); is the dtype the log was written in {}?",
                bytes.len(),
                self.name(),
                self.name()
            ));
        }
        Ok(match self {
            ClassDtype::Int64 => i64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            ClassDtype::Int32 => i32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as i64,
            ClassDtype::Float32 => {
                let value = f32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
                if !value.is_finite() {
                    return Err(format!("class {value}: not a number int() can take"));
                }
                // int() truncates toward zero, as `as` does.
                value as i64
            }
        })
    }
}

/// A top-1 score over an ImageNet list.
#[derive(Debug, Clone, PartialEq)]
pub struct ImagenetTop1 {
    pub good: usize,
    /// Samples counted: each once.
    pub total: usize,
    /// Records for a sample already counted (ignored, as the script ignores them).
    pub duplicates: usize,
    pub dtype: ClassDtype,
}

impl ImagenetTop1 {
    /// The fraction right, in percent (the script's figure).
    pub fn percent(&self) -> f64 {
        100.0 * self.good as f64 / self.total as f64
    }

    /// The line `accuracy-imagenet.py` prints, which the submission checker reads.
    pub fn line(&self) -> String {
        format!(
            "accuracy={:.3}%, good={}, total={}",
            self.percent(),
            self.good,
            self.total
        )
    }
}

/// Scores the accuracy log at `log` against `list`, its responses of element type `dtype`.
pub(super) fn evaluate(
    log: &Path,
    list: &ValMap,
    dtype: ClassDtype,
) -> Result<ImagenetTop1, AccuracyError> {
    let mut score = ImagenetTop1 {
        good: 0,
        total: 0,
        duplicates: 0,
        dtype,
    };
    let what = format!("images of {}", list.path.display());
    score.duplicates = for_each_response(log, list.len(), &what, |index, bytes| {
        let class = dtype.first_class(bytes)?;
        score.total += 1;
        score.good += usize::from(class == i64::from(list.entries[index].label));
        Ok(())
    })?;
    if score.total == 0 {
        return Err(AccuracyError::File {
            path: log.to_path_buf(),
            message: "holds no responses: an accuracy run logs one per sample".into(),
        });
    }
    Ok(score)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Every recorded run of the reference's `accuracy-imagenet.py` (the fixture's
    /// logs/COMMANDS.txt: float32, int32 and int64 logs, repeated samples, a log read with the
    /// wrong dtype) prints the line this scorer prints.
    #[test]
    fn the_line_is_the_reference_scripts_on_every_recorded_log() {
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/imagenet");
        let commands = std::fs::read_to_string(fixture.join("logs/COMMANDS.txt")).unwrap();
        let list = ValMap::read(&fixture.join("raw/val_map.txt")).unwrap();
        let mut checked = 0;
        for command in commands.lines().filter(|c| !c.contains("--verbose")) {
            let words: Vec<&str> = command.split_whitespace().collect();
            let after = |flag: &str| {
                let at = words.iter().rposition(|w| *w == flag).unwrap();
                words[at + 1]
            };
            let dtype = match after("--dtype") {
                "float32" => ClassDtype::Float32,
                "int32" => ClassDtype::Int32,
                "int64" => ClassDtype::Int64,
                other => panic!("{other}"),
            };
            let log = fixture.join(after("--mlperf-accuracy-file"));
            let printed = std::fs::read_to_string(fixture.join(after(">"))).unwrap();
            let score = evaluate(&log, &list, dtype).unwrap();
            assert_eq!(score.line(), printed.trim_end(), "{command}");
            checked += 1;
        }
        assert!(checked >= 8, "{checked} recorded runs");
    }

    #[test]
    fn classes_decode_as_numpy_and_int_read_them() {
        let f = |v: f32| v.to_le_bytes().to_vec();
        assert_eq!(ClassDtype::Float32.first_class(&f(64.0)), Ok(64));
        assert_eq!(ClassDtype::Float32.first_class(&f(64.9)), Ok(64));
        assert_eq!(ClassDtype::Float32.first_class(&f(-0.5)), Ok(0));
        assert_eq!(ClassDtype::Float32.first_class(&f(-1.0)), Ok(-1));
        assert!(ClassDtype::Float32.first_class(&f(f32::NAN)).is_err());
        assert_eq!(
            ClassDtype::Int32.first_class(&[7, 0, 0, 0, 9, 0, 0, 0]),
            Ok(7)
        );
        assert_eq!(
            ClassDtype::Int64.first_class(&(-3i64).to_le_bytes()),
            Ok(-3)
        );
        let error = ClassDtype::Int64.first_class(&[1, 2, 3, 4]).unwrap_err();
        assert!(error.contains("not int64 values"), "{error}");
        assert!(ClassDtype::Int32.first_class(&[]).is_err());
    }

    #[test]
    fn the_line_rounds_as_python_formats() {
        let score = |good, total| ImagenetTop1 {
            good,
            total,
            duplicates: 0,
            dtype: ClassDtype::Float32,
        };
        assert_eq!(
            score(38228, 50000).line(),
            "accuracy=76.456%, good=38228, total=50000"
        );
        // A tie at the third decimal rounds to even, as Python's format does.
        assert_eq!(score(1, 1600).line(), "accuracy=0.062%, good=1, total=1600");
        assert_eq!(score(2, 3).line(), "accuracy=66.667%, good=2, total=3");
    }
}
