//! Fashion-MNIST preprocessing: uint8 pixels `[28, 28]` divided by 255 as float32, flattened
//! to `[784]`, as numpy's `u8.astype(np.float32) / 255` computes them.

#![no_std]

use mlperf_preprocess_guest::{export_preprocess, Error, Output, Preprocess, Shape};

const SIDE: u32 = 28;
const PIXELS: usize = (SIDE * SIDE) as usize;
const OUTPUT_SHAPE: Shape = Shape::new(&[PIXELS as u32]);

/// `byte as f32 / 255.0` for every byte: a true division, not a multiplication by 1/255, so
/// it rounds as numpy's `u8.astype(np.float32) / 255` does. Evaluated at compile time, where
/// f32 division rounds exactly as at run time: a lookup beats 784 scalar divisions (the
/// modules use no SIMD, for portability).
const SCALED: [f32; 256] = {
    let mut table = [0.0; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = byte as f32 / 255.0;
        byte += 1;
    }
    table
};

struct Fmnist;

impl Preprocess for Fmnist {
    const METADATA: &'static str = concat!(
        "name=fmnist\n",
        "version=1.0.0\n",
        "description=Fashion-MNIST pixels: uint8 / 255 as float32, flattened\n",
        "input_dtype=uint8\n",
        "input_shape=28,28\n",
        "output_dtype=float32\n",
        "output_shape=784",
    );

    fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error> {
        if shape.dims() != [SIDE, SIDE] {
            return Err(Error::BadShape);
        }
        if input.len() != PIXELS {
            return Err(Error::LengthMismatch);
        }
        let pixels = output.f32s(PIXELS)?;
        for (pixel, &byte) in pixels.iter_mut().zip(input) {
            *pixel = SCALED[byte as usize];
        }
        Ok(OUTPUT_SHAPE)
    }
}

export_preprocess!(Fmnist);
