//! Times the data path at the real set's scale: the fixture's paragraphs repeated to
//! 10,570 questions and about 10,833 features (the shape of SQuAD v1.1's dev set), then
//! `convert`, `predictions` on seeded logits, `evaluate` and `to_json`.
//!
//! `cargo run --release -p mlperf-squad --example scale [FIXTURE_DIR]`

use std::path::PathBuf;
use std::time::Instant;

use mlperf_squad::dataset::SquadDataset;
use mlperf_squad::evaluate::evaluate;
use mlperf_squad::features::{convert, FeatureSettings};
use mlperf_squad::predict::{predictions, PredictSettings};
use mlperf_squad::tokenize::BertTokenizer;
use mlperf_squad::vocab::Vocab;
use serde_json::{json, Value};

const QUESTIONS: usize = 10_570;
const FEATURES: usize = 10_833;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/squad"),
        PathBuf::from,
    );
    let text = std::fs::read_to_string(dir.join("dev-v1.1.json"))?;
    let vocab = Vocab::read(&dir.join("vocab.txt"))?;
    let tokenizer = BertTokenizer::new(vocab);
    let settings = FeatureSettings::default();

    // Each paragraph alone, with its questions and its features per question.
    let root: Value = serde_json::from_str(&text)?;
    let mut paragraphs = Vec::new();
    for article in root["data"].as_array().ok_or("no data")? {
        for paragraph in article["paragraphs"].as_array().ok_or("no paragraphs")? {
            let one =
                json!({"version": "1.1", "data": [{"title": "t", "paragraphs": [paragraph]}]});
            let set = SquadDataset::from_json_str(&one.to_string())?;
            let per_question = convert(&set, &tokenizer, &settings).len() / set.examples.len();
            paragraphs.push((paragraph.clone(), set.examples.len(), per_question));
        }
    }
    // Multi-feature paragraphs (the fewest features per question) until the features exceed
    // the questions by the real set's 263, then single-feature ones; the last copy keeps only
    // the questions still wanted.
    let multi = paragraphs
        .iter()
        .map(|p| p.2)
        .filter(|&per| per > 1)
        .min()
        .ok_or("no multi-feature paragraph")?;
    let mut chosen = Vec::new();
    let (mut questions, mut features) = (0, 0);
    for per in [multi, 1] {
        let pool: Vec<_> = paragraphs.iter().filter(|p| p.2 == per).collect();
        if pool.is_empty() {
            return Err(format!("no paragraph with {per} feature(s) per question").into());
        }
        for (paragraph, _, _) in pool.iter().cycle() {
            let wanted = if per > 1 {
                (FEATURES - QUESTIONS).saturating_sub(features - questions) / (per - 1)
            } else {
                QUESTIONS - questions
            };
            if wanted == 0 {
                break;
            }
            let mut copy = paragraph.clone();
            let qas = copy["qas"].as_array_mut().ok_or("no qas")?;
            qas.truncate(wanted);
            for qa in qas.iter_mut() {
                let id = format!("{}-{}", qa["id"].as_str().unwrap_or("q"), chosen.len());
                qa["id"] = json!(id);
            }
            questions += qas.len();
            features += qas.len() * per;
            chosen.push(copy);
        }
    }
    let big =
        json!({"version": "1.1", "data": [{"title": "scale", "paragraphs": chosen}]}).to_string();

    let start = Instant::now();
    let dataset = SquadDataset::from_json_str(&big)?;
    let read = start.elapsed();
    let start = Instant::now();
    let features = convert(&dataset, &tokenizer, &settings);
    let converted = start.elapsed();

    // Seeded logits in multiples of 1/8, as the fixture's synthetic log (xorshift64).
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let logits: Vec<Vec<f64>> = features
        .iter()
        .map(|f| {
            (0..2 * f.token_ids.len())
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    ((state >> 40) % 57) as f64 / 8.0 - 3.5
                })
                .collect()
        })
        .collect();
    let start = Instant::now();
    let answers = predictions(
        &dataset,
        &features,
        &tokenizer,
        &|i| logits.get(i).cloned(),
        &PredictSettings::default(),
    );
    let predicted = start.elapsed();
    let start = Instant::now();
    let score = evaluate(&dataset, &answers);
    let evaluated = start.elapsed();
    let start = Instant::now();
    let written = answers.to_json();
    let json_time = start.elapsed();

    println!(
        "{} questions, {} features ({} paragraphs)",
        dataset.examples.len(),
        features.len(),
        chosen_len(&big)
    );
    println!("read dev set      {:>9.1} ms", read.as_secs_f64() * 1e3);
    println!(
        "convert           {:>9.1} ms",
        converted.as_secs_f64() * 1e3
    );
    println!(
        "predictions       {:>9.1} ms",
        predicted.as_secs_f64() * 1e3
    );
    println!(
        "evaluate          {:>9.1} ms",
        evaluated.as_secs_f64() * 1e3
    );
    println!(
        "predictions.json  {:>9.1} ms ({} bytes)",
        json_time.as_secs_f64() * 1e3,
        written.len()
    );
    println!("{}", score.line());
    Ok(())
}

fn chosen_len(big: &str) -> usize {
    serde_json::from_str::<Value>(big)
        .ok()
        .and_then(|v| v["data"][0]["paragraphs"].as_array().map(Vec::len))
        .unwrap_or(0)
}
