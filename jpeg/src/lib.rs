//! Decode JPEGs exactly as OpenCV's `cv2.imread(path)` does (`IMREAD_COLOR`, BGR).
//!
//! MLPerf's ResNet-50 reference preprocesses ImageNet with `cv2.imread`, so any other
//! decoder (a pure-Rust one, or libjpeg with other settings) shifts pixel values and,
//! after resizing, the network's input. This crate reproduces OpenCV 5.0's JPEG path:
//!
//! 1. The pixels come from libjpeg-turbo itself, through TurboJPEG loaded at run time
//!    (see [`turbo`](crate)), with libjpeg's defaults that OpenCV also keeps: ISLOW
//!    integer IDCT, fancy upsampling, no scaling.
//! 2. The output colour space follows OpenCV's rule, keyed on the number of components:
//!    anything but 4 components is decoded straight to BGR (grayscale replicated by
//!    libjpeg), 4 components (CMYK or YCCK) to CMYK and then converted by OpenCV's own
//!    integer formula ([`color`](crate)).
//! 3. The EXIF orientation is read the way OpenCV's limited EXIF reader reads it
//!    ([`exif`](crate)) and applied as a flip/transpose ([`orient`](crate)).
//! 4. libjpeg warnings (truncated or damaged data) do not fail the decode, and neither
//!    does a fatal error raised only after the last row was produced, as in OpenCV
//!    ([`Decoder`]).
//!
//! ```no_run
//! let bytes = std::fs::read("ILSVRC2012_val_00000001.JPEG").unwrap();
//! let img = mlperf_jpeg::decode_bgr(&bytes).unwrap();
//! assert_eq!(img.data.len(), img.width * img.height * 3);
//! ```

mod color;
mod decoder;
mod error;
mod exif;
mod markers;
mod orient;
mod turbo;
mod warnings;

pub use decoder::Decoder;
pub use error::DecodeError;

/// A decoded image: `height` rows of `width` pixels, 3 bytes per pixel in B, G, R order,
/// no padding (the layout of a continuous `CV_8UC3` `cv::Mat` / numpy `HxWx3` uint8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Pixels per row.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
    /// `height * width * 3` bytes, row-major, BGR.
    pub data: Vec<u8>,
}

impl Image {
    /// Bytes per pixel.
    pub const CHANNELS: usize = 3;
}

/// Decode one JPEG file's bytes into BGR, as `cv2.imread(path)` would.
///
/// Creates a fresh TurboJPEG handle per call; use [`Decoder`] for many files.
///
/// # Errors
/// As [`Decoder::new`] and [`Decoder::decode_bgr`].
pub fn decode_bgr(bytes: &[u8]) -> Result<Image, DecodeError> {
    Decoder::new()?.decode_bgr(bytes)
}
