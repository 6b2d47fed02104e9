//! A generic image-classification preprocessing (torchvision-style, not the MLPerf reference's:
//! the `imagenet-vgg` module is that): a uint8 HWC image of any size is resized
//! (bilinear) so its shorter side is 256, center-cropped to 224×224, normalised per channel
//! and laid out CHW as float32 `[3, 224, 224]`.

#![no_std]

mod resize;

use mlperf_preprocess_guest::{export_preprocess, Error, Output, Preprocess, Shape};
use resize::{CROP, OUTPUT_LEN};

const OUTPUT_SHAPE: Shape = Shape::new(&[3, CROP as u32, CROP as u32]);

struct ImageClassification;

impl Preprocess for ImageClassification {
    const METADATA: &'static str = concat!(
        "name=image-classification\n",
        "version=1.0.0\n",
        "description=Generic image classification (not the MLPerf reference's): bilinear resize of the shorter side to 256, ",
        "center crop 224x224, mean/std normalisation, HWC to CHW\n",
        "input_dtype=uint8\n",
        "input_shape=*,*,3\n",
        "output_dtype=float32\n",
        "output_shape=3,224,224",
    );

    fn preprocess(input: &[u8], shape: &Shape, output: &mut Output) -> Result<Shape, Error> {
        let &[height, width, 3] = shape.dims() else {
            return Err(Error::BadShape);
        };
        if height == 0 || width == 0 {
            return Err(Error::BadShape);
        }
        if input.len() as u64 != u64::from(height) * u64::from(width) * 3 {
            return Err(Error::LengthMismatch);
        }
        let planes = output.f32s(OUTPUT_LEN)?;
        resize::resize_crop_normalize(input, height, width, planes);
        Ok(OUTPUT_SHAPE)
    }
}

export_preprocess!(ImageClassification);
