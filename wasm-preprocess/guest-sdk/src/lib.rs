//! Guest SDK for mlperf-host preprocessing modules: implement [`Preprocess`] and call
//! [`export_preprocess!`] to export the WebAssembly guest ABI (version 1, described in
//! `wasm-preprocess/README.md`).
//!
//! ```ignore
//! #![no_std]
//! use mlperf_preprocess_guest::{export_preprocess, Error, Output, Preprocess, Shape};
//!
//! struct Negate;
//!
//! impl Preprocess for Negate {
//!     const METADATA: &'static str = "name=negate\nversion=1.0.0\ninput_dtype=int8\n\
//!         input_shape=*\noutput_dtype=int8\noutput_shape=*";
//!
//!     fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error> {
//!         let out = output.bytes(input.len())?;
//!         for (o, i) in out.iter_mut().zip(input) {
//!             *o = (*i as i8).wrapping_neg() as u8;
//!         }
//!         Ok(*shape)
//!     }
//! }
//!
//! export_preprocess!(Negate);
//! ```
//!
//! The crate has no allocator: the input and output buffers are regions of linear memory
//! grown on demand and reused by every later sample. It also builds for the host target
//! (without the exports) so that a module's pure logic can be unit-tested natively.

#![no_std]

#[doc(hidden)]
#[cfg(target_arch = "wasm32")]
pub mod abi;
mod error;
mod export;
mod output;
mod region;
mod shape;

pub use error::Error;
pub use output::{carve, Output};
pub use shape::{Shape, MAX_RANK};

/// The guest ABI version this SDK exports, returned by `mlperf_preprocess_abi`.
pub const ABI_VERSION: i32 = 1;

/// A preprocessing module: turns one sample's bytes into the bytes a backend reads.
pub trait Preprocess {
    /// `key=value` lines (see the README's "Metadata"), returned verbatim to the host.
    const METADATA: &'static str;

    /// Preprocesses one sample whose bytes are `input` and whose shape is `shape`. Writes the
    /// output into a buffer obtained from `output` and returns the output's shape.
    ///
    /// The result must depend on this sample only (MLPerf forbids caching across samples).
    fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate documentation's example, run natively.
    struct Negate;

    impl Preprocess for Negate {
        const METADATA: &'static str = "name=negate";

        fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error> {
            let out = output.bytes(input.len())?;
            for (o, i) in out.iter_mut().zip(input) {
                *o = (*i as i8).wrapping_neg() as u8;
            }
            Ok(*shape)
        }
    }

    export_preprocess!(Negate);

    #[test]
    fn a_module_runs_natively_over_a_slice() {
        let mut buffer = [0u8; 4];
        let mut output = Output::from_slice(&mut buffer);
        let shape = Negate::preprocess(&[1, 2, 255], &Shape::new(&[3]), &mut output);
        assert_eq!(shape, Ok(Shape::new(&[3])));
        assert_eq!(output.len(), 3);
        assert_eq!(buffer, [255, 254, 1, 0]);
    }
}
