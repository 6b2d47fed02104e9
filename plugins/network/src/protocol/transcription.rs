//! OpenAI's transcription API as speech servers serve it (vLLM's whisper):
//! `POST /v1/audio/transcriptions` with a multipart form holding the clip as a WAV file, the
//! model, the language and greedy decoding; the answer's `text`, and its generated-token
//! count where the server reports one (`usage.output_tokens`, `usage.completion_tokens`, or
//! the tokens of verbose_json's segments).

use http::{Method, StatusCode};
use serde_json::Value;

use super::openai::{Generate, OpenAiClient};
use super::{excerpt, Failure};
use crate::config::Api;
use mlperf_plugin_api::sdk::FailureKind;

/// A transcription: its text, and its tokens when the server counts them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Transcribed {
    pub text: String,
    pub n_tokens: Option<i64>,
}

/// Separates the form's parts; no WAV of float samples holds it by chance at a line start.
const BOUNDARY: &str = "mlperf-host-transcription-5f3c9a1e";

impl OpenAiClient {
    /// Transcribes one clip of 16 kHz float32 samples.
    pub(crate) async fn transcribe(
        &self,
        settings: &Generate,
        audio: &[f32],
        max_tokens: u32,
    ) -> Result<Transcribed, Failure> {
        let path = Api::Transcriptions.path();
        let body = form(settings, audio, max_tokens);
        let response = self
            .send_typed(
                Method::POST,
                path,
                Some(body),
                &format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .await
            .map_err(Failure::connection)?;
        let status = response.status();
        let body = self
            .read_body(path, response.into_body())
            .await
            .map_err(Failure::stream)?;
        if status != StatusCode::OK {
            return Err(Failure {
                kind: FailureKind::Status,
                status: i32::from(status.as_u16()),
                message: format!("POST {path}: {status}: {}", excerpt(&body)),
            });
        }
        answer(&body).map_err(|e| Failure::stream(format!("POST {path}: {e}")))
    }
}

/// The multipart form: the clip as `audio.wav`, then the text fields.
fn form(settings: &Generate, audio: &[f32], max_tokens: u32) -> Vec<u8> {
    let wav = mlperf_whisper::wav::float_wav(audio);
    let mut body = Vec::with_capacity(wav.len() + 1024);
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(&wav);
    body.extend_from_slice(b"\r\n");
    let mut fields = vec![
        ("model", settings.model.clone()),
        ("language", settings.language.clone()),
        ("response_format", settings.response_format.clone()),
        ("temperature", settings.temperature.to_string()),
        // The reference's SamplingParams: max_tokens 200 (vLLM's form calls it so).
        ("max_completion_tokens", max_tokens.to_string()),
    ];
    if let Some(seed) = settings.seed {
        fields.push(("seed", seed.to_string()));
    }
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// The answer's text and token count.
fn answer(body: &[u8]) -> Result<Transcribed, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the answer is not JSON ({e}): {}", excerpt(body)))?;
    if let Some(error) = value.get("error") {
        return Err(format!("the server reports an error: {error}"));
    }
    let text = value
        .get("text")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the answer has no text: {}", excerpt(body)))?;
    let usage = value.get("usage");
    let counted = ["output_tokens", "completion_tokens"]
        .iter()
        .find_map(|key| usage?.get(key)?.as_i64());
    let from_segments = || {
        let segments = value.get("segments")?.as_array()?;
        segments
            .iter()
            .map(|s| Some(s.get("tokens")?.as_array()?.len() as i64))
            .sum::<Option<i64>>()
    };
    Ok(Transcribed {
        text: text.to_owned(),
        n_tokens: counted.or_else(from_segments),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Generate {
        Generate {
            api: Api::Transcriptions,
            model: "openai/whisper-large-v3".into(),
            max_tokens: 200,
            temperature: 0.0,
            seed: None,
            stream: false,
            exact_output: false,
            token_ids: false,
            language: "en".into(),
            response_format: "verbose_json".into(),
        }
    }

    #[test]
    fn the_form_holds_the_clip_and_the_decoding() {
        let body = form(&settings(), &[0.5, -0.25], 200);
        let text = String::from_utf8_lossy(&body);
        assert!(
            text.contains("name=\"file\"; filename=\"audio.wav\""),
            "{text}"
        );
        assert!(
            text.contains("name=\"model\"\r\n\r\nopenai/whisper-large-v3\r\n"),
            "{text}"
        );
        assert!(
            text.contains("name=\"max_completion_tokens\"\r\n\r\n200\r\n"),
            "{text}"
        );
        assert!(
            text.contains("name=\"response_format\"\r\n\r\nverbose_json\r\n"),
            "{text}"
        );
        assert!(text.ends_with(&format!("--{BOUNDARY}--\r\n")));
        let wav = mlperf_whisper::wav::float_wav(&[0.5, -0.25]);
        assert!(body.windows(wav.len()).any(|w| w == wav));
    }

    #[test]
    fn answers_give_their_text_and_tokens() {
        let answer =
            answer(br#"{"text":" Hello.","usage":{"type":"tokens","output_tokens":4}}"#).unwrap();
        assert_eq!(
            answer,
            Transcribed {
                text: " Hello.".into(),
                n_tokens: Some(4)
            }
        );
        let answer =
            super::answer(br#"{"text":"a","segments":[{"tokens":[1,2]},{"tokens":[3]}]}"#).unwrap();
        assert_eq!(answer.n_tokens, Some(3));
        assert_eq!(super::answer(br#"{"text":"a"}"#).unwrap().n_tokens, None);
        // vLLM's json answer: its usage counts the clip's seconds, no tokens.
        let json = br#"{"text":"a","usage":{"type":"duration","seconds":4}}"#;
        assert_eq!(super::answer(json).unwrap().n_tokens, None);
        let error = super::answer(br#"{"texts":"a"}"#).unwrap_err();
        assert!(error.contains("no text"), "{error}");
    }
}
