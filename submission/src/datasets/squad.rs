//! SQuAD v1.1 as MLPerf's bert benchmark reads it: a folder holding the dev set
//! `dev-v1.1.json` and the model's WordPiece `vocab.txt`, turned into the reference's
//! 384-token features (`mlperf-squad`: the slow BertTokenizer, doc_stride 128,
//! max_query_length 64). Feature `i` is `qsl_idx` `i`, as in the reference's QSL; the
//! accuracy scorer builds the same features from the same files.

use std::path::{Path, PathBuf};

use mlperf_squad::dataset::SquadDataset;
use mlperf_squad::features::{convert, Feature, FeatureSettings};
use mlperf_squad::tokenize::BertTokenizer;
use mlperf_squad::vocab::Vocab;

use super::DatasetError;

/// The dev set inside a SQuAD folder.
pub const DEV_SET: &str = "dev-v1.1.json";
/// The model's vocabulary, beside it.
pub const VOCAB: &str = "vocab.txt";

/// A SQuAD folder read and turned into features.
#[derive(Debug)]
pub struct SquadSet {
    /// The dev set file read.
    pub path: PathBuf,
    pub dataset: SquadDataset,
    pub tokenizer: BertTokenizer,
    pub settings: FeatureSettings,
    /// In `qsl_idx` order.
    pub features: Vec<Feature>,
}

impl SquadSet {
    /// Reads `dir/dev-v1.1.json` and `dir/vocab.txt` and makes every feature (about a second
    /// for the 10,570 questions of the real set).
    pub fn open(dir: &Path) -> Result<SquadSet, DatasetError> {
        let path = dir.join(DEV_SET);
        let vocab_path = dir.join(VOCAB);
        if !dir.is_dir() {
            return Err(DatasetError::file(
                dir,
                format!("not a folder: a SQuAD data set is a folder holding {DEV_SET} and the model's {VOCAB}"),
            ));
        }
        if !path.is_file() {
            return Err(DatasetError::file(
                &path,
                format!("no such file: a SQuAD data set is a folder holding SQuAD v1.1's {DEV_SET} (MLCommons' automation: get,dataset,squad) and the model's {VOCAB}"),
            ));
        }
        if !vocab_path.is_file() {
            return Err(DatasetError::file(
                &vocab_path,
                format!("no such file: put the model's WordPiece vocabulary beside {DEV_SET} (e.g. ln -s .../bert_tf_v1_1_large_fp32_384_v2/vocab.txt {})", vocab_path.display()),
            ));
        }
        let dataset =
            SquadDataset::read(&path).map_err(|e| DatasetError::file(&path, e.to_string()))?;
        let vocab =
            Vocab::read(&vocab_path).map_err(|e| DatasetError::file(&vocab_path, e.to_string()))?;
        let tokenizer = BertTokenizer::new(vocab);
        let settings = FeatureSettings::default();
        let features = convert(&dataset, &tokenizer, &settings);
        if features.is_empty() {
            return Err(DatasetError::file(&path, "it holds no question"));
        }
        Ok(SquadSet {
            path,
            dataset,
            tokenizer,
            settings,
            features,
        })
    }

    pub fn len(&self) -> usize {
        self.features.len()
    }

    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// The int64 `[3, max_seq_length]` sample of feature `index`: input_ids, input_mask and
    /// segment_ids, as the reference's SUT feeds them, little-endian into `out`.
    pub fn write_sample(&self, index: usize, out: &mut Vec<u8>) -> Option<[usize; 2]> {
        let feature = self.features.get(index)?;
        let width = self.settings.max_seq_length;
        let mut values = vec![0i64; 3 * width];
        feature.write_inputs(&self.settings, &mut values);
        out.clear();
        out.reserve_exact(8 * values.len());
        out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        Some([3, width])
    }
}
