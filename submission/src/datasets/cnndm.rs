//! CNN-DailyMail 3.0.0 validation as MLPerf's llama3.1-8b reads it: `cnn_eval.json` (or the
//! edge set's `sample_cnn_eval_5000.json`), a JSON array of records `{instruction, input,
//! tok_input, output}` made by the reference's `download_cnndm.py`. Record `i` is `qsl_idx`
//! `i`; the SUT is sent its `tok_input` ids as they are, and `output` (the highlights) is what
//! the accuracy script scores the answer against.

use std::path::{Path, PathBuf};

use super::DatasetError;

/// The datacenter set's file name; the edge set's is [`EDGE_SET`].
pub const DATACENTER_SET: &str = "cnn_eval.json";
pub const EDGE_SET: &str = "sample_cnn_eval_5000.json";

/// One record: what the model is sent and what it is scored against.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct CnnDmRecord {
    /// The prompt's token ids, BOS included (`tokenizer.encode` of the instruction).
    pub tok_input: Vec<u32>,
    /// The reference summary.
    pub output: String,
}

/// A CNN-DailyMail evaluation file read whole.
#[derive(Debug, Clone)]
pub struct CnnDmSet {
    pub path: PathBuf,
    /// In `qsl_idx` order.
    pub records: Vec<CnnDmRecord>,
}

/// The evaluation file of a folder: the one of `cnn_eval.json` and `sample_cnn_eval_5000.json`
/// it holds (`cnn_eval.json` when it holds neither, for messages).
pub fn evaluation_file(dir: &Path) -> PathBuf {
    let edge = dir.join(EDGE_SET);
    if edge.is_file() && !dir.join(DATACENTER_SET).exists() {
        edge
    } else {
        dir.join(DATACENTER_SET)
    }
}

impl CnnDmSet {
    /// Reads `path`: an evaluation file, or a folder holding one of them (not both: which
    /// one a run meant would be a guess).
    pub fn open(path: &Path) -> Result<CnnDmSet, DatasetError> {
        let path = if path.is_dir() {
            let (datacenter, edge) = (path.join(DATACENTER_SET), path.join(EDGE_SET));
            match (datacenter.is_file(), edge.is_file()) {
                (true, false) => datacenter,
                (false, true) => edge,
                (true, true) => return Err(DatasetError::file(
                    path,
                    format!("holds both {DATACENTER_SET} (llama3.1-8b) and {EDGE_SET} (llama3.1-8b-edge): give a folder holding only the benchmark's"),
                )),
                (false, false) => return Err(DatasetError::file(
                    path,
                    format!("holds neither {DATACENTER_SET} nor {EDGE_SET} (MLCommons' automation: get,dataset,cnndm,_validation,_llama3)"),
                )),
            }
        } else {
            path.to_path_buf()
        };
        CnnDmSet::read(path)
    }

    /// Reads an evaluation file: a JSON array of records with `tok_input` and `output` (the
    /// converted OpenOrca set of llama2-70b has the same shape).
    pub fn read(path: PathBuf) -> Result<CnnDmSet, DatasetError> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| DatasetError::file(&path, format!("cannot read: {e}")))?;
        let records: Vec<CnnDmRecord> = serde_json::from_str(&text).map_err(|e| {
            DatasetError::file(
                &path,
                format!("{e}: the file is a JSON array of records, each with `tok_input` (token ids) and `output` (the reference answer)"),
            )
        })?;
        if records.is_empty() {
            return Err(DatasetError::file(&path, "holds no records"));
        }
        if let Some(index) = records.iter().position(|r| r.tok_input.is_empty()) {
            return Err(DatasetError::file(
                &path,
                format!("record {index}: `tok_input` is empty (a prompt has at least its BOS id)"),
            ));
        }
        Ok(CnnDmSet { path, records })
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cnndm")
    }

    #[test]
    fn the_fixture_reads_in_qsl_order_and_bad_files_name_the_problem() {
        let set = CnnDmSet::open(&fixture()).unwrap();
        assert_eq!(set.len(), 12);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture().join(DATACENTER_SET)).unwrap())
                .unwrap();
        assert_eq!(set.records[3].output, json[3]["output"].as_str().unwrap());
        assert_eq!(
            set.records[3].tok_input.len(),
            json[3]["tok_input"].as_array().unwrap().len()
        );

        let dir = std::env::temp_dir().join(format!("cnndm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = CnnDmSet::open(&dir).unwrap_err().to_string();
        assert!(error.contains("neither cnn_eval.json"), "{error}");
        std::fs::write(dir.join(EDGE_SET), "[]").unwrap();
        assert_eq!(evaluation_file(&dir), dir.join(EDGE_SET));
        std::fs::write(dir.join(DATACENTER_SET), "[]").unwrap();
        let error = CnnDmSet::open(&dir).unwrap_err().to_string();
        assert!(error.contains("holds both"), "{error}");
        std::fs::remove_file(dir.join(EDGE_SET)).unwrap();
        let file = dir.join(DATACENTER_SET);
        for (text, expected) in [
            ("[{\"output\": \"x\"}]", "missing field `tok_input`"),
            (
                "[{\"tok_input\": [1, -2], \"output\": \"x\"}]",
                "invalid value",
            ),
            ("[]", "holds no records"),
            (
                "[{\"tok_input\": [], \"output\": \"x\"}]",
                "record 0: `tok_input` is empty",
            ),
        ] {
            std::fs::write(&file, text).unwrap();
            let error = CnnDmSet::open(&dir).unwrap_err().to_string();
            assert!(
                error.contains(expected) && error.contains("cnn_eval.json"),
                "{error}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
