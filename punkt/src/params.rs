//! Punkt's trained parameters, read from a `punkt_tab` folder: what `nltk.download("punkt_tab")`
//! leaves in `nltk_data/tokenizers/punkt_tab/<language>/` and NLTK 3.9's `load_punkt_params`
//! reads. Each file is UTF-8 lines, the last without a newline: `abbrev_types.txt` and
//! `sent_starters.txt` a type a line, `collocations.tab` two types a line and
//! `ortho_context.tab` a type and its flags, tab-separated.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Why a parameter folder cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("{}: {source} (a punkt_tab language folder holds abbrev_types.txt, collocations.tab, sent_starters.txt and ortho_context.tab: `python -c \"import nltk; nltk.download('punkt_tab')\"` writes ~/nltk_data/tokenizers/punkt_tab/english)", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Orthographic context flags: the word was seen upper or lower case, at a sentence's
/// beginning, inside one, or where that was unknown.
pub(crate) const ORTHO_BEG_UC: u32 = 1 << 1;
pub(crate) const ORTHO_MID_UC: u32 = 1 << 2;
pub(crate) const ORTHO_UNK_UC: u32 = 1 << 3;
pub(crate) const ORTHO_BEG_LC: u32 = 1 << 4;
pub(crate) const ORTHO_MID_LC: u32 = 1 << 5;
pub(crate) const ORTHO_UNK_LC: u32 = 1 << 6;
pub(crate) const ORTHO_UC: u32 = ORTHO_BEG_UC | ORTHO_MID_UC | ORTHO_UNK_UC;
pub(crate) const ORTHO_LC: u32 = ORTHO_BEG_LC | ORTHO_MID_LC | ORTHO_UNK_LC;

/// A language's abbreviations, collocations, frequent sentence starters and orthographic
/// contexts, as Punkt's training left them (types are lowercase, numbers `##number##`).
#[derive(Debug, Clone, Default)]
pub struct PunktParameters {
    pub(crate) abbrev_types: HashSet<String>,
    pub(crate) collocations: HashSet<(String, String)>,
    pub(crate) sent_starters: HashSet<String>,
    pub(crate) ortho_context: HashMap<String, u32>,
}

impl PunktParameters {
    /// The parameters in the punkt_tab language folder `dir`.
    pub fn read_punkt_tab(dir: &Path) -> Result<Self, ParamsError> {
        let mut params = Self {
            abbrev_types: lines(&dir.join("abbrev_types.txt"))?
                .map(|(_, l)| l)
                .collect(),
            sent_starters: lines(&dir.join("sent_starters.txt"))?
                .map(|(_, l)| l)
                .collect(),
            ..Self::default()
        };
        let path = dir.join("collocations.tab");
        for (line, text) in lines(&path)? {
            let (first, second) = two_fields(&path, line, &text)?;
            params.collocations.insert((first.into(), second.into()));
        }
        let path = dir.join("ortho_context.tab");
        for (line, text) in lines(&path)? {
            let (typ, flags) = two_fields(&path, line, &text)?;
            let flags = flags.parse().map_err(|_| ParamsError::Line {
                path: path.clone(),
                line,
                message: format!("flags {flags:?} of {typ:?} are not an integer"),
            })?;
            params.ortho_context.insert(typ.into(), flags);
        }
        Ok(params)
    }

    /// Parameters from lists, as a test or a caller with its own store builds them.
    pub fn new<'a>(
        abbrev_types: impl IntoIterator<Item = &'a str>,
        collocations: impl IntoIterator<Item = (&'a str, &'a str)>,
        sent_starters: impl IntoIterator<Item = &'a str>,
        ortho_context: impl IntoIterator<Item = (&'a str, u32)>,
    ) -> Self {
        Self {
            abbrev_types: abbrev_types.into_iter().map(String::from).collect(),
            collocations: collocations
                .into_iter()
                .map(|(a, b)| (a.into(), b.into()))
                .collect(),
            sent_starters: sent_starters.into_iter().map(String::from).collect(),
            ortho_context: ortho_context
                .into_iter()
                .map(|(t, f)| (t.into(), f))
                .collect(),
        }
    }

    /// How many abbreviations, collocations, sentence starters and ortho contexts it holds.
    pub fn sizes(&self) -> [usize; 4] {
        [
            self.abbrev_types.len(),
            self.collocations.len(),
            self.sent_starters.len(),
            self.ortho_context.len(),
        ]
    }

    pub(crate) fn ortho(&self, typ: &str) -> u32 {
        self.ortho_context.get(typ).copied().unwrap_or(0)
    }
}

/// The file's lines as NLTK's `TabDecoder` reads them: one trailing `\n` dropped from each, a
/// `\r` kept; numbered from 1.
fn lines(path: &Path) -> Result<impl Iterator<Item = (usize, String)>, ParamsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ParamsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    for line in &mut lines {
        if line.ends_with('\n') {
            line.pop();
        }
    }
    Ok(lines.into_iter().enumerate().map(|(i, l)| (i + 1, l)))
}

fn two_fields<'a>(
    path: &Path,
    line: usize,
    text: &'a str,
) -> Result<(&'a str, &'a str), ParamsError> {
    let mut fields = text.split('\t');
    match (fields.next(), fields.next(), fields.next()) {
        (Some(a), Some(b), None) => Ok((a, b)),
        _ => Err(ParamsError::Line {
            path: path.to_path_buf(),
            line,
            message: format!("{text:?} is not two tab-separated fields"),
        }),
    }
}
