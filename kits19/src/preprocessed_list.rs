//! `preprocessed_data/preprocessed_files.pkl`, which the reference QSL and
//! accuracy script read for the sample order (`file_list`, indexed by
//! qsl_idx) and each case's `image_shape`. Only those two are taken; the
//! affines and zoom factors (numpy arrays, left opaque) are not needed.

use std::path::{Path, PathBuf};

use crate::pickle::{parse_pickle, PickleError, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreprocessedList {
    pub path: PathBuf,
    /// In `file_list` order, so `cases[qsl_idx]` is the sample LoadGen means.
    pub cases: Vec<PreprocessedCase>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreprocessedCase {
    pub name: String,
    /// `(1, D, H, W)`: the channel axis, then the preprocessed volume.
    pub image_shape: [usize; 4],
}

impl PreprocessedCase {
    /// `(D, H, W)`, the shape of the label volume and of a prediction.
    pub fn volume_shape(&self) -> [usize; 3] {
        [
            self.image_shape[1],
            self.image_shape[2],
            self.image_shape[3],
        ]
    }
}

impl PreprocessedList {
    pub fn names(&self) -> Vec<String> {
        self.cases.iter().map(|c| c.name.clone()).collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PreprocessedListError {
    #[error(
        "{path}: no such file; preprocess.py writes preprocessed_files.pkl into its \
         --results_dir, beside the case_XXXXX.pkl files and nifti/"
    )]
    NotFound { path: PathBuf },
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a readable pickle: {source}")]
    Pickle { path: PathBuf, source: PickleError },
    #[error("{path}: {what} is {found}, expected {expected}")]
    WrongType {
        path: PathBuf,
        what: String,
        found: String,
        expected: &'static str,
    },
    #[error("{path}: {within} has no {key:?} key")]
    MissingKey {
        path: PathBuf,
        within: String,
        key: &'static str,
    },
    #[error("{path}: file_list[{index}] is {case:?}, but \"cases\" has no entry for it")]
    MissingCase {
        path: PathBuf,
        index: usize,
        case: String,
    },
    #[error("{path}: cases[{case:?}][\"image_shape\"] is {found}: {why}")]
    BadShape {
        path: PathBuf,
        case: String,
        found: String,
        why: &'static str,
    },
    /// The reference would give both qsl_idx the same case, and its accuracy
    /// script could then never see every case.
    #[error("{path}: file_list names {case:?} twice, at {first} and {second}")]
    Duplicate {
        path: PathBuf,
        case: String,
        first: usize,
        second: usize,
    },
}

/// Values in messages are cut to this many characters.
const REPR: usize = 80;

pub fn read_preprocessed_list(
    path: impl AsRef<Path>,
) -> Result<PreprocessedList, PreprocessedListError> {
    let path = path.as_ref();
    let data = std::fs::read(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            PreprocessedListError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            PreprocessedListError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    parse_preprocessed_list(&data, path)
}

/// The same from bytes already read; `path` is only for messages.
pub fn parse_preprocessed_list(
    data: &[u8],
    path: &Path,
) -> Result<PreprocessedList, PreprocessedListError> {
    let doc = parse_pickle(data).map_err(|source| PreprocessedListError::Pickle {
        path: path.to_path_buf(),
        source,
    })?;
    let wrong = |what: &str, found: &Value, expected| PreprocessedListError::WrongType {
        path: path.to_path_buf(),
        what: what.to_string(),
        found: describe(found),
        expected,
    };
    if doc.as_dict().is_none() {
        return Err(wrong("the pickled object", &doc, "a dict"));
    }
    let file_list = get(path, &doc, "the top-level dict", "file_list")?;
    let cases = get(path, &doc, "the top-level dict", "cases")?;
    // the reference only indexes file_list, so a tuple serves as well
    let names = file_list
        .as_sequence()
        .ok_or_else(|| wrong("file_list", file_list, "a list of case names"))?;
    if cases.as_dict().is_none() {
        return Err(wrong("cases", cases, "a dict keyed by case name"));
    }
    let mut out = Vec::with_capacity(names.len());
    for (index, v) in names.iter().enumerate() {
        let name = v
            .as_str()
            .ok_or_else(|| wrong(&format!("file_list[{index}]"), v, "a case name (str)"))?;
        if let Some(first) = out.iter().position(|c: &PreprocessedCase| c.name == name) {
            return Err(PreprocessedListError::Duplicate {
                path: path.to_path_buf(),
                case: name.to_string(),
                first,
                second: index,
            });
        }
        let entry = cases
            .get(name)
            .ok_or_else(|| PreprocessedListError::MissingCase {
                path: path.to_path_buf(),
                index,
                case: name.to_string(),
            })?;
        let within = format!("cases[{name:?}]");
        if entry.as_dict().is_none() {
            return Err(wrong(&within, entry, "a dict"));
        }
        let shape = get(path, entry, &within, "image_shape")?;
        out.push(PreprocessedCase {
            name: name.to_string(),
            image_shape: image_shape(shape).map_err(|why| PreprocessedListError::BadShape {
                path: path.to_path_buf(),
                case: name.to_string(),
                found: describe(shape),
                why,
            })?,
        });
    }
    Ok(PreprocessedList {
        path: path.to_path_buf(),
        cases: out,
    })
}

fn get<'v>(
    path: &Path,
    dict: &'v Value,
    within: &str,
    key: &'static str,
) -> Result<&'v Value, PreprocessedListError> {
    dict.get(key)
        .ok_or_else(|| PreprocessedListError::MissingKey {
            path: path.to_path_buf(),
            within: within.to_string(),
            key,
        })
}

/// `image.shape` of the `(1, D, H, W)` float32 array, a tuple of Python ints.
fn image_shape(v: &Value) -> Result<[usize; 4], &'static str> {
    let items = v.as_sequence().ok_or("not a tuple")?;
    let dims: Vec<usize> = items
        .iter()
        .map(|d| {
            d.as_int()
                .ok_or("an element is not an int")?
                .try_into()
                .ok()
                .filter(|&n: &usize| n > 0)
                .ok_or("an element is not positive")
        })
        .collect::<Result<_, _>>()?;
    let dims: [usize; 4] = dims
        .try_into()
        .map_err(|_| "it needs 4 elements (1, D, H, W)")?;
    if dims[0] != 1 {
        return Err("the first (channel) element must be 1");
    }
    Ok(dims)
}

/// `a tuple (1, 128, 128)`, `an opaque object numpy.dtype(...)`, `None`.
fn describe(v: &Value) -> String {
    let repr = v.short_repr(REPR);
    match v.kind() {
        "None" => repr,
        k if k.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {k} {repr}"),
        k => format!("a {k} {repr}"),
    }
}
