//! The sample arena: the memory of the loaded samples, which the system under test reads in
//! place while a series runs.
//!
//! The sample library fills it in `load_samples_to_ram`, before timing; a plugin receives
//! pointers into it that stay valid until it completes those samples. Memory is only replaced
//! by the next load (or freed with the arena), never by an unload, and the engine starts no
//! series after one that left samples with the SUT, so no pointer outlives its bytes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{RwLock, RwLockReadGuard};

use mlperf_plugin_api::sdk::DType;

/// Alignment of every sample's first byte: enough for any element type and for SIMD loads.
pub const SAMPLE_ALIGN: usize = 64;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; SAMPLE_ALIGN]);

/// Growable bytes aligned to [`SAMPLE_ALIGN`], for sample data made outside the arena.
#[derive(Default)]
pub struct AlignedBuffer {
    blocks: Vec<Block>,
}

impl AlignedBuffer {
    /// At least `length` bytes (contents unspecified after growth beyond the old length).
    pub fn resize(&mut self, length: usize) {
        let blocks = length.div_ceil(SAMPLE_ALIGN);
        if blocks > self.blocks.len() {
            self.blocks.resize(blocks, Block([0; SAMPLE_ALIGN]));
        }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `Block` is plain bytes with no padding; the slice covers the blocks exactly.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr() as *mut u8,
                self.blocks.len() * SAMPLE_ALIGN,
            )
        }
    }
}

/// A sample's element type and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleLayout {
    pub dtype: DType,
    pub shape: Vec<i64>,
}

/// One loaded sample, borrowed from the arena.
#[derive(Debug, Clone, Copy)]
pub struct SampleView<'a> {
    pub data: &'a [u8],
    pub dtype: DType,
    pub shape: &'a [i64],
}

#[derive(Clone, Copy)]
struct Slot {
    offset: usize,
    length: usize,
    dtype: DType,
    shape_at: u32,
    rank: u32,
}

/// The samples of one loadable set, laid out back to back (each aligned to [`SAMPLE_ALIGN`]).
#[derive(Default)]
pub struct LoadedSamples {
    blocks: Vec<Block>,
    /// By sample index; `None` where the index is not loaded.
    slots: Vec<Option<Slot>>,
    shapes: Vec<i64>,
    /// The shape most recently added to `shapes`: (position, rank).
    last_shape: Option<(u32, u32)>,
    used: usize,
}

impl LoadedSamples {
    /// An empty set with room for indices below `total`.
    pub fn new(total: usize) -> LoadedSamples {
        LoadedSamples {
            slots: vec![None; total],
            ..LoadedSamples::default()
        }
    }

    /// Makes room for `bytes` more bytes of samples (alignment included) at once, so that
    /// filling a large set does not copy it over and over as it grows.
    pub fn reserve(&mut self, bytes: usize) {
        let blocks = (self.used + bytes).div_ceil(SAMPLE_ALIGN);
        self.blocks
            .reserve_exact(blocks.saturating_sub(self.blocks.len()));
    }

    /// Room for `count` more samples of `length` bytes each.
    pub fn reserve_samples(&mut self, count: usize, length: usize) {
        self.reserve(count * length.next_multiple_of(SAMPLE_ALIGN));
    }

    /// Copies in sample `index`.
    pub fn insert(
        &mut self,
        index: usize,
        layout: &SampleLayout,
        bytes: &[u8],
    ) -> Result<(), String> {
        let range = self.allocate(index, layout, bytes.len())?;
        self.bytes_mut()[range].copy_from_slice(bytes);
        Ok(())
    }

    /// Makes room for sample `index` of `length` bytes (zeroed), to be written later through
    /// [`LoadedSamples::slots_mut`]; returns its byte range.
    pub fn allocate(
        &mut self,
        index: usize,
        layout: &SampleLayout,
        length: usize,
    ) -> Result<std::ops::Range<usize>, String> {
        if index >= self.slots.len() {
            return Err(format!(
                "sample index {index} is outside the data set ({} samples)",
                self.slots.len()
            ));
        }
        let offset = self.used.next_multiple_of(SAMPLE_ALIGN);
        let end = offset + length;
        let blocks = end.div_ceil(SAMPLE_ALIGN);
        if blocks > self.blocks.len() {
            // Within reserved capacity, no more than needed; beyond it, doubling.
            let grown = match blocks <= self.blocks.capacity() {
                true => blocks,
                false => blocks.max(self.blocks.len() * 2),
            };
            self.blocks.resize(grown, Block([0; SAMPLE_ALIGN]));
        }
        self.used = end;
        let shape_at = self.shape_at(&layout.shape);
        self.slots[index] = Some(Slot {
            offset,
            length,
            dtype: layout.dtype,
            shape_at,
            rank: layout.shape.len() as u32,
        });
        Ok(offset..end)
    }

    /// Every loaded sample's bytes, writable at once (so threads can fill disjoint samples), as
    /// (index, bytes) in memory order.
    pub fn slots_mut(&mut self) -> Vec<(usize, &mut [u8])> {
        let mut slots: Vec<(usize, Slot)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| slot.map(|slot| (index, slot)))
            .collect();
        slots.sort_unstable_by_key(|(_, slot)| slot.offset);
        let mut rest = self.bytes_mut();
        let mut at = 0;
        let mut out = Vec::with_capacity(slots.len());
        for (index, slot) in slots {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(slot.offset - at);
            let (bytes, tail) = tail.split_at_mut(slot.length);
            out.push((index, bytes));
            rest = tail;
            at = slot.offset + slot.length;
        }
        out
    }

    /// Where `shape` sits in the shape pool; consecutive samples of one shape share it.
    fn shape_at(&mut self, shape: &[i64]) -> u32 {
        if let Some((at, rank)) = self.last_shape {
            let range = at as usize..(at + rank) as usize;
            if self.shapes.get(range) == Some(shape) {
                return at;
            }
        }
        let at = self.shapes.len() as u32;
        self.shapes.extend_from_slice(shape);
        self.last_shape = Some((at, shape.len() as u32));
        at
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `Block` is plain bytes with no padding; the slice covers the blocks exactly.
        unsafe {
            std::slice::from_raw_parts(
                self.blocks.as_ptr() as *const u8,
                self.blocks.len() * SAMPLE_ALIGN,
            )
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, uniquely borrowed.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr() as *mut u8,
                self.blocks.len() * SAMPLE_ALIGN,
            )
        }
    }

    /// Sample `index`, if it is loaded.
    #[inline]
    pub fn get(&self, index: usize) -> Option<SampleView<'_>> {
        let slot = (*self.slots.get(index)?)?;
        let at = slot.shape_at as usize;
        Some(SampleView {
            data: &self.bytes()[slot.offset..slot.offset + slot.length],
            dtype: slot.dtype,
            shape: &self.shapes[at..at + slot.rank as usize],
        })
    }

    /// Bytes of sample data held.
    pub fn data_bytes(&self) -> usize {
        self.slots.iter().flatten().map(|slot| slot.length).sum()
    }
}

/// Shared between the sample library, which replaces the loaded set between series, and the
/// system under test, which reads it while issuing.
#[derive(Default)]
pub struct SampleArena {
    loaded: RwLock<LoadedSamples>,
    /// False until samples with data are loaded: a library without data costs the issue path
    /// one relaxed load, no lock.
    has_data: AtomicBool,
}

impl SampleArena {
    pub fn new() -> SampleArena {
        SampleArena::default()
    }

    /// The loaded samples, or `None` when nothing with data was ever loaded.
    #[inline]
    pub fn read(&self) -> Option<RwLockReadGuard<'_, LoadedSamples>> {
        if !self.has_data.load(Ordering::Acquire) {
            return None;
        }
        Some(self.loaded.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Makes `samples` the loaded set; the previous set's memory is freed.
    pub fn replace(&self, samples: LoadedSamples) {
        let mut loaded = self.loaded.write().unwrap_or_else(|p| p.into_inner());
        *loaded = samples;
        self.has_data.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[i64]) -> SampleLayout {
        SampleLayout {
            dtype: DType::U8,
            shape: shape.to_vec(),
        }
    }

    #[test]
    fn samples_are_aligned_and_read_back_by_index() {
        let mut loaded = LoadedSamples::new(10);
        loaded.insert(7, &layout(&[3]), &[1, 2, 3]).unwrap();
        loaded.insert(2, &layout(&[3]), &[4, 5, 6]).unwrap();
        loaded.insert(5, &layout(&[2, 2]), &[7, 8, 9, 10]).unwrap();
        let seven = loaded.get(7).unwrap();
        assert_eq!(seven.data, &[1, 2, 3]);
        assert_eq!(seven.shape, &[3]);
        let five = loaded.get(5).unwrap();
        assert_eq!(five.data, &[7, 8, 9, 10]);
        assert_eq!(five.shape, &[2, 2]);
        for view in [seven, loaded.get(2).unwrap(), five] {
            assert_eq!(view.data.as_ptr() as usize % SAMPLE_ALIGN, 0);
        }
        assert!(loaded.get(3).is_none());
        assert!(loaded.get(99).is_none());
        assert_eq!(loaded.data_bytes(), 10);
        assert!(loaded.insert(10, &layout(&[1]), &[0]).is_err());
    }

    #[test]
    fn allocated_slots_are_filled_in_place() {
        let mut loaded = LoadedSamples::new(6);
        for index in [4, 1, 5] {
            let range = loaded.allocate(index, &layout(&[2, 3]), 6).unwrap();
            assert_eq!(range.start % SAMPLE_ALIGN, 0);
        }
        let slots = loaded.slots_mut();
        assert_eq!(slots.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [4, 1, 5]);
        for (index, bytes) in slots {
            assert_eq!(bytes, &[0; 6]);
            bytes.fill(index as u8);
        }
        for index in [4, 1, 5] {
            let view = loaded.get(index).unwrap();
            assert_eq!(view.data, &[index as u8; 6]);
            assert_eq!(view.shape, &[2, 3]);
        }
        assert!(loaded.get(0).is_none());
    }

    #[test]
    fn growth_keeps_earlier_samples() {
        let mut loaded = LoadedSamples::new(1000);
        for index in 0..1000 {
            let bytes = vec![(index % 251) as u8; 100 + index % 7];
            loaded
                .insert(index, &layout(&[bytes.len() as i64]), &bytes)
                .unwrap();
        }
        for index in 0..1000 {
            let view = loaded.get(index).unwrap();
            assert_eq!(view.data.len(), 100 + index % 7);
            assert!(view.data.iter().all(|&b| b == (index % 251) as u8));
            assert_eq!(view.shape, &[view.data.len() as i64]);
        }
    }

    #[test]
    fn an_arena_without_data_reads_as_none() {
        let arena = SampleArena::new();
        assert!(arena.read().is_none());
        let mut loaded = LoadedSamples::new(1);
        loaded.insert(0, &layout(&[1]), &[42]).unwrap();
        arena.replace(loaded);
        assert_eq!(arena.read().unwrap().get(0).unwrap().data, &[42]);
    }
}
