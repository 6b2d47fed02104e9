//! OpenOrca as MLPerf's llama2-70b reads it: `open_orca_gpt4_tokenized_llama.sampled_24576.pkl`,
//! a pickled pandas DataFrame whose row `i` is `qsl_idx` `i`, its `tok_input` the ids sent to
//! the SUT and its `output` what the accuracy script scores the answer against. A pickle of
//! pandas' internals cannot be read robustly without pandas, so it is converted once
//! ([`convert`], `mlperf-host dataset convert`) into a JSON file of the same records, which
//! the host reads like CNN-DailyMail's evaluation file.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::cnndm::CnnDmSet;
use super::DatasetError;

/// The reference's data set file (MLCommons' automation: get,dataset,openorca,_validation).
pub const PICKLE: &str = "open_orca_gpt4_tokenized_llama.sampled_24576.pkl";
/// What [`convert`] writes: the same records as JSON.
pub const CONVERTED: &str = "open_orca_gpt4_tokenized_llama.sampled_24576.json";

/// The converted file `path` stands for: itself, or [`CONVERTED`] in a folder.
pub fn evaluation_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(CONVERTED)
    } else {
        path.to_path_buf()
    }
}

/// The records of a converted file, or of a folder holding one; a folder (or a path) holding
/// only the pickle is an error that gives the conversion command.
pub fn open(path: &Path) -> Result<CnnDmSet, DatasetError> {
    let file = evaluation_file(path);
    if file.is_file() && file.extension().is_some_and(|e| e == "json") {
        return CnnDmSet::read(file);
    }
    let pickle = if path.is_dir() {
        path.join(PICKLE)
    } else {
        path.to_path_buf()
    };
    let message = if pickle.is_file() {
        format!(
            "{} is a pandas pickle, which is read through pandas once: `mlperf-host dataset convert --benchmark llama2-70b-99.9 --dataset-dir {} --out DIR` writes {CONVERTED} into DIR; then run with --dataset-dir DIR",
            pickle.display(),
            pickle.parent().unwrap_or(Path::new(".")).display()
        )
    } else {
        format!("holds neither {CONVERTED} nor {PICKLE} (MLCommons' automation: get,dataset,openorca,_validation; then `mlperf-host dataset convert`)")
    };
    Err(DatasetError::file(path, message))
}

/// Converts the pickle in `dataset` (a folder holding [`PICKLE`], or the pickle itself) into
/// `out/`[`CONVERTED`] with `python`, which must have pandas; returns the file written and
/// the records it holds, read back as the host reads them.
pub fn convert(
    python: &Path,
    dataset: &Path,
    out: &Path,
) -> Result<(PathBuf, usize), DatasetError> {
    let pickle = if dataset.is_dir() {
        dataset.join(PICKLE)
    } else {
        dataset.to_path_buf()
    };
    if !pickle.is_file() {
        return Err(DatasetError::file(
            &pickle,
            "does not exist (the OpenOrca pickle of llama2-70b)",
        ));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| DatasetError::file(out, format!("cannot create: {e}")))?;
    let target = out.join(CONVERTED);
    let output = Command::new(python)
        .arg("-c")
        .arg(include_str!("openorca_convert.py"))
        .arg(&pickle)
        .arg(&target)
        .output()
        .map_err(|e| {
            DatasetError::file(
                python,
                format!("cannot start: {e} (pass --python with a Python that has pandas)"),
            )
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(DatasetError::file(
            &pickle,
            format!(
                "{} could not convert it ({}): {last}",
                python.display(),
                output.status
            ),
        ));
    }
    let set = CnnDmSet::read(target.clone())?;
    link_pickle(&pickle, out)?;
    Ok((target, set.len()))
}

/// A link to the pickle beside the converted file, unless the pickle is there already: the
/// reference's accuracy script (`accuracy --reference-script`) reads the pickle.
fn link_pickle(pickle: &Path, out: &Path) -> Result<(), DatasetError> {
    let link = out.join(PICKLE);
    if link.exists() {
        return Ok(());
    }
    let absolute = std::path::absolute(pickle).unwrap_or(pickle.to_path_buf());
    std::os::unix::fs::symlink(&absolute, &link).map_err(|e| {
        DatasetError::file(
            &link,
            format!("cannot link it to {}: {e}", absolute.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/openorca")
    }

    #[test]
    fn the_converted_fixture_reads_and_a_pickle_alone_says_how_to_convert_it() {
        let set = open(&fixture()).unwrap();
        assert_eq!(set.len(), 12);
        assert_eq!(set.path, fixture().join(CONVERTED));
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(fixture().join(PICKLE), dir.path().join(PICKLE)).unwrap();
        let error = open(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("is a pandas pickle") && error.contains("mlperf-host dataset convert"),
            "{error}"
        );
        let empty = tempfile::tempdir().unwrap();
        let error = open(empty.path()).unwrap_err().to_string();
        assert!(error.contains("holds neither"), "{error}");
    }
}
