//! A walk over the JPEG marker segments that precede the first scan.
//!
//! We need two things libjpeg does not hand out through TurboJPEG: the number of colour
//! components (OpenCV picks its output colour space from it) and the APP1 segments
//! (OpenCV reads EXIF orientation from them). libjpeg's `jpeg_read_header` stops at the
//! first SOS, and OpenCV only looks at the markers saved by then, so we stop there too:
//! an APP1 placed between progressive scans is ignored, as in OpenCV.
//!
//! The walk is as lenient as libjpeg's `next_marker`: bytes between segments that are not
//! `FF` are skipped (libjpeg only warns about them), runs of `FF` fill bytes are allowed and
//! `FF 00` is treated as garbage. Anything libjpeg would reject outright (a second SOI, EOI
//! before any scan, a segment running past the end) is an error here as well.

use crate::DecodeError;

/// Frame parameters from the first SOFn segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The SOF marker code (`0xC0` baseline, `0xC2` progressive, ...).
    pub(crate) marker: u8,
    /// Sample precision in bits.
    pub(crate) precision: u8,
    /// Number of lines (may be 0 only in DNL streams, which libjpeg does not support).
    pub(crate) height: u16,
    /// Samples per line.
    pub(crate) width: u16,
    /// Number of image components (1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK).
    pub(crate) components: u8,
}

/// What the header walk found before the first scan.
#[derive(Debug, Clone)]
pub(crate) struct Header<'a> {
    /// The first frame header.
    pub(crate) frame: Frame,
    /// Payloads (after the length field) of every APP1 segment, in file order.
    pub(crate) app1: Vec<&'a [u8]>,
}

const SOI: u8 = 0xD8;
const EOI: u8 = 0xD9;
const SOS: u8 = 0xDA;
const APP1: u8 = 0xE1;
const TEM: u8 = 0x01;

/// True for SOF0..SOF15 (`C0`..`CF`) except DHT (`C4`), JPG (`C8`) and DAC (`CC`).
fn is_sof(marker: u8) -> bool {
    (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// Walk the markers from SOI up to the first SOS.
pub(crate) fn scan(bytes: &[u8]) -> Result<Header<'_>, DecodeError> {
    // OpenCV only hands a file to its JPEG decoder when it starts with FF D8 FF.
    if !bytes.starts_with(&[0xFF, SOI, 0xFF]) {
        return Err(DecodeError::NotJpeg("does not start with FF D8 FF"));
    }
    let mut pos = 2;
    let mut frame = None;
    let mut app1 = Vec::new();
    loop {
        let (marker, after) = next_marker(bytes, pos)?;
        pos = after;
        match marker {
            SOI => return Err(DecodeError::Header("second SOI marker".into())),
            EOI => return Err(DecodeError::Header("EOI before the first scan".into())),
            TEM | 0xD0..=0xD7 => continue, // stand-alone markers without a length
            _ => {}
        }
        let len = segment_len(bytes, pos, marker)?;
        let payload = &bytes[pos + 2..pos + len];
        if marker == SOS {
            let frame = frame.ok_or_else(|| DecodeError::Header("SOS before any SOF".into()))?;
            return Ok(Header { frame, app1 });
        }
        if is_sof(marker) && frame.is_none() {
            frame = Some(parse_sof(marker, payload)?);
        } else if marker == APP1 {
            app1.push(payload);
        }
        pos += len;
    }
}

/// Find the next marker at or after `pos`, skipping garbage and fill bytes.
/// Returns the marker code and the offset just past it.
fn next_marker(bytes: &[u8], mut pos: usize) -> Result<(u8, usize), DecodeError> {
    let truncated = || DecodeError::Header("stream ends before the first scan".into());
    loop {
        while *bytes.get(pos).ok_or_else(truncated)? != 0xFF {
            pos += 1;
        }
        while *bytes.get(pos).ok_or_else(truncated)? == 0xFF {
            pos += 1;
        }
        let code = bytes[pos];
        pos += 1;
        if code != 0 {
            return Ok((code, pos));
        }
    }
}

/// Length of the segment at `pos` (counting its own two length bytes), checked to fit.
fn segment_len(bytes: &[u8], pos: usize, marker: u8) -> Result<usize, DecodeError> {
    let b = bytes
        .get(pos..pos + 2)
        .ok_or_else(|| DecodeError::Header(format!("marker FF{marker:02X} has no length")))?;
    let len = usize::from(u16::from_be_bytes([b[0], b[1]]));
    if len < 2 || pos + len > bytes.len() {
        return Err(DecodeError::Header(format!(
            "segment FF{marker:02X} at byte {} has bad length {len}",
            pos - 2
        )));
    }
    Ok(len)
}

fn parse_sof(marker: u8, p: &[u8]) -> Result<Frame, DecodeError> {
    if p.len() < 6 {
        return Err(DecodeError::Header(format!("SOF FF{marker:02X} too short")));
    }
    Ok(Frame {
        marker,
        precision: p[0],
        height: u16::from_be_bytes([p[1], p[2]]),
        width: u16::from_be_bytes([p[3], p[4]]),
        components: p[5],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(marker: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0xFF, marker];
        v.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
        v.extend_from_slice(payload);
        v
    }

    fn stream(parts: &[Vec<u8>]) -> Vec<u8> {
        let mut v = vec![0xFF, SOI];
        for p in parts {
            v.extend_from_slice(p);
        }
        v
    }

    const SOF0: [u8; 15] = [8, 0, 23, 0, 37, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];

    #[test]
    fn finds_frame_and_app1_before_sos_only() {
        let bytes = stream(&[
            seg(APP1, b"Exif\0\0first"),
            seg(0xC0, &SOF0),
            b"\x00\x13garbage".to_vec(), // junk between segments, as libjpeg tolerates
            vec![0xFF, 0xFF],            // fill bytes
            seg(APP1, b"second"),
            seg(SOS, &[1, 1, 0, 0, 63, 0]),
            seg(APP1, b"after-sos"),
        ]);
        let h = scan(&bytes).unwrap();
        assert_eq!(h.frame.width, 37);
        assert_eq!(h.frame.height, 23);
        assert_eq!(h.frame.components, 3);
        assert_eq!(h.app1, vec![&b"Exif\0\0first"[..], &b"second"[..]]);
    }

    #[test]
    fn rejects_what_libjpeg_rejects() {
        assert!(matches!(scan(b"\x89PNG"), Err(DecodeError::NotJpeg(_))));
        assert!(scan(&stream(&[vec![0xFF, EOI]])).is_err());
        assert!(scan(&stream(&[seg(SOS, &[0])])).is_err());
        let mut cut = stream(&[seg(0xC0, &SOF0)]);
        cut.truncate(cut.len() - 3);
        assert!(scan(&cut).is_err());
    }
}
