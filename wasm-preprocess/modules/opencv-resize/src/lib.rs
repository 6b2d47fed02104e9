//! OpenCV 5.0's `cv2.resize` for u8 images, bit for bit with `opencv-python-headless==5.0.0.93`
//! on x86_64, for the preprocessing modules of MLPerf's vision benchmarks:
//!
//! - [`area`]: `INTER_AREA` (ResNet-50's `pre_process_vgg`);
//! - [`linear`]: `INTER_LINEAR`, and ultralytics 8.4.190's YOLO `LetterBox` on it
//!   ([`linear::letterbox`]).
//!
//! `#![no_std]`, no allocation, no dependencies, no `unsafe`: every table and row buffer comes
//! from the caller, sized by each module's `scratch_requirement`. The shared integer
//! conversions (OpenCV's `cvFloor`, `cvRound`, `saturate_cast`) are in one place.

#![no_std]
#![forbid(unsafe_code)]

pub mod area;
mod checks;
pub mod linear;
mod rounding;
