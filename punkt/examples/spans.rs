//! Prints the sentence spans of each text of a JSON array (stdin) as a JSON array of
//! `[[start, end], ...]`, for diffing against NLTK: `spans PUNKT_TAB_DIR < texts.json`.

use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: spans PUNKT_TAB_DIR < texts.json")?;
    let params = mlperf_punkt::PunktParameters::read_punkt_tab(dir.as_ref())?;
    let punkt = mlperf_punkt::SentenceTokenizer::new(params);
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let texts: Vec<String> = serde_json::from_str(&input)?;
    let spans: Vec<Vec<(usize, usize)>> = texts.iter().map(|t| punkt.spans(t)).collect();
    println!("{}", serde_json::to_string(&spans)?);
    Ok(())
}
