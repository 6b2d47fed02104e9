//! Errors of [`crate::decode_bgr`].
//!
//! Every case where `cv2.imread` would return `None` (or raise, for the size limits) is an
//! error here, and each variant names the stage that failed, so a caller can log why one
//! ImageNet file was skipped without re-running the decoder under a debugger.

use thiserror::Error;

/// Why a JPEG could not be decoded the way `cv2.imread(path)` decodes it.
#[derive(Debug, Error)]
pub enum DecodeError {
    /// The bytes do not start with a JPEG SOI marker (`FF D8`), so OpenCV would not even
    /// pick its JPEG decoder.
    #[error("not a JPEG stream: {0}")]
    NotJpeg(&'static str),

    /// Our own marker walk (needed for the frame size and for EXIF) failed before the
    /// first scan; libjpeg would fail on the same stream.
    #[error("malformed JPEG header: {0}")]
    Header(String),

    /// OpenCV's `imread` refuses images over its default limits (width or height over
    /// 2^20, or more than 2^30 pixels) with `cv2.error` before decoding them.
    #[error("image is {width}x{height}, over OpenCV's imread size limits")]
    TooLarge {
        /// Frame width from the SOF marker.
        width: u32,
        /// Frame height from the SOF marker.
        height: u32,
    },

    /// The TurboJPEG shared library (Debian package `libturbojpeg0`) or one of its
    /// functions could not be loaded.
    #[error("cannot load TurboJPEG ({what}): {message}")]
    Library {
        /// The library file or symbol that was being loaded.
        what: String,
        /// The loader's message.
        message: String,
    },

    /// `tjInitDecompress` returned no handle.
    #[error("tjInitDecompress failed: {0}")]
    Init(String),

    /// libjpeg-turbo reported a fatal error while decoding (warnings never end up here,
    /// because OpenCV ignores them too).
    #[error("libjpeg-turbo failed in {stage}: {message}")]
    Turbo {
        /// The TurboJPEG call that failed.
        stage: &'static str,
        /// libjpeg-turbo's error text.
        message: String,
    },

    /// libjpeg's header parse and ours disagree on the frame size; decoding on would give
    /// a silently rescaled image, so we stop.
    #[error(
        "frame size mismatch: SOF says {sof_width}x{sof_height}, libjpeg says {lib_width}x{lib_height}"
    )]
    SizeMismatch {
        /// Width from our SOF parse.
        sof_width: u32,
        /// Height from our SOF parse.
        sof_height: u32,
        /// Width from `tjDecompressHeader3`.
        lib_width: u32,
        /// Height from `tjDecompressHeader3`.
        lib_height: u32,
    },
}
