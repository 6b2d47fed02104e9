//! A clip's audio as the reference QSL loads it, `librosa.load(path, sr=16000)`: libsndfile
//! reads 16-bit PCM as float32 `sample / 32768` (and float WAVs as they are), and since the
//! repacked clips are 16 kHz mono nothing is resampled or mixed. Other rates and channel
//! counts are refused: librosa would resample (soxr) or average them, which is not ported.

use std::path::Path;

use crate::WhisperError;

/// The sample rate of whisper's input.
pub const SAMPLE_RATE: u32 = 16_000;

/// Reads the WAV at `path` into `out` (cleared first); returns the number of samples.
pub fn read_clip(path: &Path, out: &mut Vec<f32>) -> Result<usize, WhisperError> {
    let reader = hound::WavReader::open(path).map_err(|e| {
        WhisperError::file(
            path,
            format!(
                "{e}: a whisper clip is a 16 kHz mono WAV (repackage_librispeech.py writes PCM16)"
            ),
        )
    })?;
    let spec = reader.spec();
    if spec.sample_rate != SAMPLE_RATE {
        return Err(WhisperError::file(
            path,
            format!("{} Hz: whisper's clips are {SAMPLE_RATE} Hz (librosa.load(sr=16000) would resample it; convert it with `sox IN -r 16000 OUT` as the reference's convert script does)", spec.sample_rate),
        ));
    }
    if spec.channels != 1 {
        return Err(WhisperError::file(
            path,
            format!("{} channels: whisper's clips are mono", spec.channels),
        ));
    }
    let read_error = |e: hound::Error| WhisperError::file(path, e.to_string());
    out.clear();
    out.reserve_exact(reader.len() as usize);
    match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Int, 16) => {
            for sample in reader.into_samples::<i16>() {
                out.push(f32::from(sample.map_err(read_error)?) / 32768.0);
            }
        }
        (hound::SampleFormat::Float, 32) => {
            for sample in reader.into_samples::<f32>() {
                out.push(sample.map_err(read_error)?);
            }
        }
        (format, bits) => {
            return Err(WhisperError::file(
                path,
                format!(
                    "{bits}-bit {format:?} samples: a whisper clip is 16-bit PCM (or 32-bit float)"
                ),
            ))
        }
    }
    Ok(out.len())
}

/// `samples` as a 16 kHz mono 32-bit float WAV, which reads back to the same floats: what a
/// transcription endpoint is sent.
pub fn float_wav(samples: &[f32]) -> Vec<u8> {
    let data_bytes = 4 * samples.len() as u32;
    let mut wav = Vec::with_capacity(44 + data_bytes as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_bytes).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&3u16.to_le_bytes()); // WAVE_FORMAT_IEEE_FLOAT
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    wav.extend_from_slice(&(4 * SAMPLE_RATE).to_le_bytes());
    wav.extend_from_slice(&4u16.to_le_bytes());
    wav.extend_from_slice(&32u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_bytes.to_le_bytes());
    for sample in samples {
        wav.extend_from_slice(&sample.to_le_bytes());
    }
    wav
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcm16_reads_as_librosa_reads_it_and_float_wavs_round_trip() {
        let dir = std::env::temp_dir().join(format!("whisper-wav-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.wav");
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 16_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut writer = hound::WavWriter::create(&path, spec).unwrap();
        for s in [0i16, 1, -1, 32767, -32768, 12345] {
            writer.write_sample(s).unwrap();
        }
        writer.finalize().unwrap();
        let mut samples = Vec::new();
        read_clip(&path, &mut samples).unwrap();
        assert_eq!(
            samples,
            [
                0.0,
                1.0 / 32768.0,
                -1.0 / 32768.0,
                32767.0 / 32768.0,
                -1.0,
                12345.0 / 32768.0
            ]
        );
        let float_path = dir.join("f.wav");
        std::fs::write(&float_path, float_wav(&samples)).unwrap();
        let mut again = Vec::new();
        read_clip(&float_path, &mut again).unwrap();
        assert_eq!(again, samples);
        let stereo = dir.join("s.wav");
        let mut writer = hound::WavWriter::create(
            &stereo,
            hound::WavSpec {
                channels: 2,
                ..spec
            },
        )
        .unwrap();
        writer.write_sample(0i16).unwrap();
        writer.write_sample(0i16).unwrap();
        writer.finalize().unwrap();
        let error = read_clip(&stereo, &mut again).unwrap_err().to_string();
        assert!(error.contains("2 channels"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
