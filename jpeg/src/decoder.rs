//! The decode pipeline: header walk, size limits, TurboJPEG, CMYK step, orientation.

use crate::{color, exif, markers, orient, turbo, DecodeError, Image};

/// OpenCV's default `imread` limits (`OPENCV_IO_MAX_IMAGE_WIDTH/HEIGHT/PIXELS`).
const MAX_SIDE: u64 = 1 << 20;
const MAX_PIXELS: u64 = 1 << 30;

/// A reusable decoder: keeps one TurboJPEG handle, so decoding many files avoids
/// creating and destroying libjpeg state for each. Use one per thread.
pub struct Decoder {
    turbo: turbo::Turbo,
}

impl Decoder {
    /// Load TurboJPEG (once per process) and create a decompressor.
    ///
    /// # Errors
    /// [`DecodeError::Library`] when `libturbojpeg.so.0` or one of its functions is
    /// missing, [`DecodeError::Init`] when it cannot create a handle.
    pub fn new() -> Result<Self, DecodeError> {
        Ok(Decoder {
            turbo: turbo::Turbo::new()?,
        })
    }

    /// Decode one JPEG file's bytes into BGR, as `cv2.imread` would.
    ///
    /// # Errors
    /// A [`DecodeError`] naming the failed stage, for every input `cv2.imread` returns
    /// `None` for (and [`DecodeError::TooLarge`] where it raises instead).
    pub fn decode_bgr(&mut self, bytes: &[u8]) -> Result<Image, DecodeError> {
        let header = markers::scan(bytes)?;
        let frame = header.frame;
        let (w, h) = (u32::from(frame.width), u32::from(frame.height));
        if w == 0 || h == 0 {
            return Err(DecodeError::Header("frame has zero width or height".into()));
        }
        let (w64, h64) = (u64::from(w), u64::from(h));
        if w64 > MAX_SIDE || h64 > MAX_SIDE || w64 * h64 > MAX_PIXELS {
            return Err(DecodeError::TooLarge {
                width: w,
                height: h,
            });
        }
        // libjpeg's own header parse, as a guard against our walk reading another frame.
        if let Ok(lib) = self.turbo.header(bytes) {
            if (lib.width, lib.height) != (w, h) {
                return Err(DecodeError::SizeMismatch {
                    sof_width: w,
                    sof_height: h,
                    lib_width: lib.width,
                    lib_height: lib.height,
                });
            }
        }
        // OpenCV's rule: 4 components (CMYK or YCCK) go through CMYK and its own
        // conversion; everything else is decoded by libjpeg straight to BGR.
        let cmyk = frame.components == 4;
        let (format, ps) = if cmyk {
            (turbo::TJPF_CMYK, 4)
        } else {
            (turbo::TJPF_BGR, 3)
        };
        let out = self.pixels(bytes, w, h, format, ps)?;
        let data = if cmyk { color::cmyk_to_bgr(&out) } else { out };
        let img = Image {
            width: w as usize,
            height: h as usize,
            data,
        };
        Ok(match exif::orientation(&header.app1) {
            Some(o) => orient::apply(img, o),
            None => img,
        })
    }

    /// Decompress, accepting what OpenCV accepts.
    ///
    /// OpenCV marks the read as successful once it has pulled every row, and only then
    /// calls `jpeg_finish_decompress`, whose errors (a bad marker after the scan, say) it
    /// ignores. TurboJPEG reports such an error like any other, so on a fatal error we
    /// check whether the last row was written: rows are written top-down, so then every
    /// row was, and the image is what OpenCV returns. A row "was written" if it differs
    /// from the fill of a zero-filled or of a 0xFF-filled buffer (no row can equal both).
    fn pixels(
        &mut self,
        bytes: &[u8],
        w: u32,
        h: u32,
        format: i32,
        ps: usize,
    ) -> Result<Vec<u8>, DecodeError> {
        let len = w as usize * h as usize * ps;
        let row = w as usize * ps;
        let mut zeros = vec![0u8; len];
        let Err(message) = self.turbo.decompress(bytes, &mut zeros, w, h, format) else {
            return Ok(zeros);
        };
        if zeros[len - row..].iter().any(|&b| b != 0) {
            return Ok(zeros);
        }
        let mut ones = vec![0xFFu8; len];
        let again = self.turbo.decompress(bytes, &mut ones, w, h, format);
        if again.is_err() && ones[len - row..].iter().any(|&b| b != 0xFF) {
            return Ok(ones);
        }
        Err(DecodeError::Turbo {
            stage: "tjDecompress2",
            message,
        })
    }
}
