//! A `.npy` file as a sample source: mlperf-submission's reader, its element types as the
//! plugin ABI's.

use std::path::Path;

use mlperf_plugin_api::sdk::DType;
pub use mlperf_submission::npy::write_npy;
use mlperf_submission::npy::{Element, NpyFile};

use super::arena::SampleLayout;
use super::source::{SampleSource, SourceError};

/// An opened `.npy` file; samples are read from it on demand.
pub struct NpySource {
    file: NpyFile,
    layout: SampleLayout,
}

impl NpySource {
    pub fn open(path: &Path) -> Result<NpySource, SourceError> {
        let file = NpyFile::open(path)?;
        let layout = SampleLayout {
            dtype: dtype(file.layout().element),
            shape: file.layout().shape.clone(),
        };
        Ok(NpySource { file, layout })
    }

    /// Every sample's element type and shape.
    pub fn layout(&self) -> &SampleLayout {
        &self.layout
    }
}

impl SampleSource for NpySource {
    fn describe(&self) -> String {
        self.file.describe()
    }

    fn len(&self) -> usize {
        self.file.len()
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        self.file.read(index, out)?;
        Ok(self.layout.clone())
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        let again = NpySource::open(std::path::Path::new(&self.file.describe())).ok()?;
        Some(Box::new(again))
    }
}

fn dtype(element: Element) -> DType {
    match element {
        Element::U8 => DType::U8,
        Element::I8 => DType::I8,
        Element::Bool => DType::Bool,
        Element::U16 => DType::U16,
        Element::I16 => DType::I16,
        Element::F16 => DType::F16,
        Element::U32 => DType::U32,
        Element::I32 => DType::I32,
        Element::F32 => DType::F32,
        Element::U64 => DType::U64,
        Element::I64 => DType::I64,
        Element::F64 => DType::F64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_type_keeps_its_size_as_a_dtype() {
        let dir = std::env::temp_dir().join(format!("npy-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (descr, size) in [("|u1", 1), ("<i2", 2), ("<f2", 2), ("<i4", 4), ("<f8", 8)] {
            let path = dir.join("one.npy");
            write_npy(&path, descr, 2, &[3], &vec![7u8; 2 * 3 * size]).unwrap();
            let mut source = NpySource::open(&path).unwrap();
            assert_eq!(source.layout().dtype.size(), size, "{descr}");
            let mut out = Vec::new();
            let layout = source.read(1, &mut out).unwrap();
            assert_eq!((layout.shape, out.len()), (vec![3], 3 * size), "{descr}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
