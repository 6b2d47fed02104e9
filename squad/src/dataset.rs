//! SQuAD v1.1's `dev-v1.1.json` as the reference's `read_squad_examples` reads it: one
//! example per question, in file order, each with its paragraph's words (split on the
//! script's own whitespace: space, tab, CR, LF and U+202F) and its ground-truth answers.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::SquadError;

/// One question.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub qas_id: String,
    pub question_text: String,
    /// The paragraph's words, shared by its questions.
    pub doc_tokens: Arc<[String]>,
    /// The answers' texts, in file order (evaluate_v1.1.py's ground truths).
    pub answers: Vec<String>,
}

/// A SQuAD v1.1 file's questions, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct SquadDataset {
    pub version: Option<String>,
    pub examples: Vec<Example>,
}

impl SquadDataset {
    /// Reads `path`; errors name the key at fault.
    pub fn read(path: &Path) -> Result<SquadDataset, SquadError> {
        let text = std::fs::read_to_string(path).map_err(|e| SquadError::File {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        SquadDataset::from_json_str(&text).map_err(|e| SquadError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    pub fn from_json_str(text: &str) -> Result<SquadDataset, SquadError> {
        let root: Value = serde_json::from_str(text).map_err(|e| {
            SquadError::Invalid(format!("not JSON ({e}): SQuAD v1.1's dev-v1.1.json is"))
        })?;
        let version = root
            .get("version")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut examples = Vec::new();
        for (a, article) in array(&root, "data", "data")?.iter().enumerate() {
            let at = format!("data[{a}]");
            for (p, paragraph) in array(article, "paragraphs", &at)?.iter().enumerate() {
                let at = format!("{at}.paragraphs[{p}]");
                let context = string(paragraph, "context", &at)?;
                let doc_tokens: Arc<[String]> = split_words(context).into();
                for (q, qa) in array(paragraph, "qas", &at)?.iter().enumerate() {
                    let at = format!("{at}.qas[{q}]");
                    let answers = array(qa, "answers", &at)?
                        .iter()
                        .enumerate()
                        .map(|(i, answer)| {
                            string(answer, "text", &format!("{at}.answers[{i}]"))
                                .map(str::to_string)
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    if answers.is_empty() {
                        return Err(key(
                            &format!("{at}.answers"),
                            "is empty: evaluate_v1.1.py needs a ground truth for every question",
                        ));
                    }
                    examples.push(Example {
                        qas_id: string(qa, "id", &at)?.to_string(),
                        question_text: string(qa, "question", &at)?.to_string(),
                        doc_tokens: Arc::clone(&doc_tokens),
                        answers,
                    });
                }
            }
        }
        Ok(SquadDataset { version, examples })
    }
}

/// The paragraph's words: runs between `read_squad_examples`' whitespace characters.
pub fn split_words(context: &str) -> Vec<String> {
    context
        .split(is_squad_whitespace)
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

fn is_squad_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{202f}')
}

fn key(at: &str, message: &str) -> SquadError {
    SquadError::Key {
        at: at.to_string(),
        message: message.to_string(),
    }
}

fn array<'a>(value: &'a Value, name: &str, at: &str) -> Result<&'a Vec<Value>, SquadError> {
    let path = if at == name {
        name.to_string()
    } else {
        format!("{at}.{name}")
    };
    match value.get(name) {
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(key(&path, "is not a list")),
        None => Err(key(
            &path,
            "missing (SQuAD v1.1's layout: data[].paragraphs[].qas[])",
        )),
    }
}

fn string<'a>(value: &'a Value, name: &str, at: &str) -> Result<&'a str, SquadError> {
    match value.get(name) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(key(&format!("{at}.{name}"), "is not a string")),
        None => Err(key(&format!("{at}.{name}"), "missing")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_the_scripts_whitespace_only() {
        assert_eq!(
            split_words(" a\u{202f}b\u{a0}c\r\nd\x1ce  "),
            ["a", "b\u{a0}c", "d\x1ce"]
        );
    }

    #[test]
    fn bad_files_are_named_down_to_the_key() {
        let error = SquadDataset::from_json_str(
            r#"{"data":[{"paragraphs":[{"context":"x","qas":[{"question":"q","answers":[{"text":"x"}]}]}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(error, "data[0].paragraphs[0].qas[0].id: missing");
        let error = SquadDataset::from_json_str(r#"{"version":"1.1"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("data: missing"), "{error}");
        assert!(SquadDataset::from_json_str("[").is_err());
    }
}
