//! The EXIF orientation value exactly as OpenCV's imgcodecs reads it.
//!
//! A general EXIF library would be "more correct" than OpenCV, and that is the problem:
//! we must rotate exactly the images OpenCV rotates. OpenCV's reader has these traits,
//! all checked against `cv2.imread` by the decode-extra fixture:
//!
//! * Every APP1 segment longer than 6 bytes that starts with `Exif\0\0` is parsed, in file
//!   order, into one tag table; a tag already in the table is never replaced, so the
//!   first orientation found wins (across segments and within one IFD).
//! * Only IFD0 is read: no IFD1 (thumbnail) and no sub-IFDs.
//! * The byte order is little-endian only when the TIFF header starts with `II`; any other
//!   pair of bytes (even `IM` or `AA`) means big-endian. The magic number must then read 42.
//! * The orientation is the 16-bit word at the value field, whatever type and count the
//!   entry declares (so a big-endian LONG 6 reads as 0).
//! * Reading IFD0 stops at the first entry whose data lies outside the segment, but the
//!   entries before it are kept. Only the tags OpenCV knows can fail that way (strings,
//!   rationals, and the 16-bit fields); unknown tags are skipped without reading their
//!   data.

/// Orientation (1..=8 when valid) that OpenCV would apply, given the APP1 payloads
/// seen before the first scan. `None` when no segment yields an orientation tag.
pub(crate) fn orientation(app1_payloads: &[&[u8]]) -> Option<u16> {
    app1_payloads
        .iter()
        .filter(|p| p.len() > EXIF_PREFIX.len() && p.starts_with(EXIF_PREFIX))
        .find_map(|p| Tiff::new(&p[EXIF_PREFIX.len()..]).ifd0_orientation())
}

const EXIF_PREFIX: &[u8] = b"Exif\0\0";
const ORIENTATION: u16 = 0x0112;
/// Entries per IFD record and bytes of inline value data.
const ENTRY_SIZE: usize = 12;
const INLINE_BYTES: u64 = 4;

/// A read past the end of the TIFF block; OpenCV abandons the IFD at that point.
struct OutOfRange;

type Read<T> = Result<T, OutOfRange>;

struct Tiff<'a> {
    data: &'a [u8],
    little: bool,
}

impl<'a> Tiff<'a> {
    fn new(data: &'a [u8]) -> Self {
        let little = data.first() == Some(&b'I') && data.get(1).is_none_or(|b| *b == b'I');
        Tiff { data, little }
    }

    fn bytes<const N: usize>(&self, off: u64) -> Read<[u8; N]> {
        let start = usize::try_from(off).map_err(|_| OutOfRange)?;
        let end = start.checked_add(N).ok_or(OutOfRange)?;
        let s = self.data.get(start..end).ok_or(OutOfRange)?;
        let mut b = [0; N];
        b.copy_from_slice(s);
        if !self.little {
            b.reverse();
        }
        Ok(b)
    }

    fn u16(&self, off: u64) -> Read<u16> {
        self.bytes::<2>(off).map(u16::from_le_bytes)
    }

    fn u32(&self, off: u64) -> Read<u32> {
        self.bytes::<4>(off).map(u32::from_le_bytes)
    }

    /// First orientation entry of IFD0, reading entries in order until one fails.
    fn ifd0_orientation(&self) -> Option<u16> {
        if self.u16(2).ok()? != 42 {
            return None;
        }
        let ifd = u64::from(self.u32(4).ok()?);
        let count = self.u16(ifd).ok()?;
        let mut entry = ifd + 2;
        for _ in 0..count {
            match self.entry(entry) {
                Ok(Some(v)) => return Some(v),
                Ok(None) => {}
                Err(OutOfRange) => return None,
            }
            entry += ENTRY_SIZE as u64;
        }
        None
    }

    /// Do the reads OpenCV does for the entry at `off`; `Some` for an orientation entry.
    fn entry(&self, off: u64) -> Read<Option<u16>> {
        let value = off + 8;
        match self.u16(off)? {
            ORIENTATION => return Ok(Some(self.u16(value)?)),
            // ImageDescription, Make, Model, Software, DateTime, Copyright: ASCII.
            0x010E | 0x010F | 0x0110 | 0x0131 | 0x0132 | 0x8298 => self.string(off)?,
            // XResolution, YResolution, WhitePoint, PrimaryChromaticities,
            // YCbCrCoefficients, ReferenceBlackWhite: rationals behind an offset.
            0x011A | 0x011B => self.rationals(value, 1)?,
            0x013E => self.rationals(value, 2)?,
            0x013F | 0x0214 => self.rationals(value, 6)?,
            0x0211 => self.rationals(value, 3)?,
            // ResolutionUnit, YCbCrPositioning: inline 16-bit words.
            0x0128 | 0x0213 => {
                self.u16(value)?;
            }
            _ => {}
        }
        Ok(None)
    }

    /// OpenCV copies the string; it fails when the bytes are outside the block. Short
    /// strings are (wrongly, but harmlessly for us) taken from absolute offset 8.
    fn string(&self, off: u64) -> Read<()> {
        let len = u64::from(self.u32(off + 4)?);
        let start = if len > INLINE_BYTES {
            u64::from(self.u32(off + 8)?)
        } else {
            8
        };
        let size = self.data.len() as u64;
        if start > size || start + len > size {
            return Err(OutOfRange);
        }
        Ok(())
    }

    fn rationals(&self, value: u64, n: u32) -> Read<()> {
        let first = self.u32(value)?;
        for i in 0..n {
            // OpenCV steps the offset in 32-bit arithmetic.
            let at = u64::from(first.wrapping_add(8 * i));
            self.u32(at)?;
            self.u32(at + 4)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Little-endian TIFF with the given IFD0 entries (tag, type, count, value bytes).
    fn tiff_le(entries: &[(u16, u16, u32, [u8; 4])]) -> Vec<u8> {
        let mut v = b"Exif\0\0II*\0\x08\0\0\0".to_vec();
        v.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        for (tag, typ, count, val) in entries {
            v.extend_from_slice(&tag.to_le_bytes());
            v.extend_from_slice(&typ.to_le_bytes());
            v.extend_from_slice(&count.to_le_bytes());
            v.extend_from_slice(val);
        }
        v.extend_from_slice(&[0; 4]);
        v
    }

    #[test]
    fn first_orientation_wins_and_broken_entries_stop_the_ifd() {
        let six = [6, 0, 0, 0];
        let three = [3, 0, 0, 0];
        let a = tiff_le(&[(0x0112, 3, 1, six)]);
        let b = tiff_le(&[(0x0112, 3, 1, three)]);
        assert_eq!(orientation(&[&a, &b]), Some(6));
        assert_eq!(orientation(&[b"Exif\0\0", &b]), Some(3));
        let bad_make = (0x010F, 2, 100, 5000u32.to_le_bytes());
        assert_eq!(
            orientation(&[&tiff_le(&[bad_make, (0x0112, 3, 1, six)])]),
            None
        );
        assert_eq!(
            orientation(&[&tiff_le(&[(0x0112, 3, 1, six), bad_make])]),
            Some(6)
        );
        let unknown = (0x9999, 4, 1000, 99999u32.to_le_bytes());
        assert_eq!(
            orientation(&[&tiff_le(&[unknown, (0x0112, 3, 1, six)])]),
            Some(6)
        );
    }

    #[test]
    fn byte_order_is_little_only_for_ii() {
        let be = b"Exif\0\0MM\0*\0\0\0\x08\0\x01\x01\x12\0\x04\0\0\0\x01\0\0\0\x06\0\0\0\0";
        assert_eq!(orientation(&[be]), Some(0)); // LONG 6, upper half read
        let aa = b"Exif\0\0AA\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0";
        assert_eq!(orientation(&[aa]), Some(6));
        let mut im = tiff_le(&[(0x0112, 3, 1, [6, 0, 0, 0])]);
        im[7] = b'M';
        assert_eq!(orientation(&[&im]), None);
    }
}
