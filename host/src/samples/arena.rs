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

pub use super::arena_error::{ArenaError, ImageError};

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

/// Bytes held elsewhere (a shared memory mapping) that a set of samples is read from.
pub type ForeignBytes = std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Where a set's sample bytes are when they are not in its own blocks.
enum Elsewhere {
    /// Read in place from an image (see [`LoadedSamples::from_image`]), the sample bytes
    /// from `data_at` on.
    Image { bytes: ForeignBytes, data_at: usize },
    /// In a device's own memory from `address` on: the host never reads them, it only hands
    /// out addresses (see [`LoadedSamples::handed`]); `holder` frees them when the set goes.
    Device {
        address: usize,
        _holder: std::sync::Arc<dyn Send + Sync>,
    },
}

/// A loaded sample as it is handed to a plugin: where its data starts (an address in a
/// device's memory for a set placed there), its length, type and shape.
#[derive(Debug, Clone, Copy)]
pub struct HandedSample<'a> {
    pub data: *const u8,
    pub length: usize,
    pub dtype: DType,
    pub shape: &'a [i64],
}

/// The samples of one loadable set, laid out back to back (each aligned to [`SAMPLE_ALIGN`]).
#[derive(Default)]
pub struct LoadedSamples {
    blocks: Vec<Block>,
    /// Instead of `blocks`: where the bytes are held.
    elsewhere: Option<Elsewhere>,
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

    /// Room for `count` more samples of `length` bytes each; refused (before anything is
    /// allocated) when they would not fit in the memory this machine has available, which
    /// would otherwise end the process (an allocation failure aborts; overcommitted memory
    /// brings the OOM killer).
    pub fn reserve_samples(&mut self, count: usize, length: usize) -> Result<(), ArenaError> {
        let bytes = length
            .checked_next_multiple_of(SAMPLE_ALIGN)
            .and_then(|stride| stride.checked_mul(count))
            .filter(|&bytes| {
                mlperf_loadgen::available_memory().is_none_or(|free| bytes as u64 <= free)
            });
        let Some(bytes) = bytes else {
            return Err(ArenaError::TooLarge {
                count,
                length,
                available: mlperf_loadgen::available_memory(),
            });
        };
        let blocks = (self.used + bytes).div_ceil(SAMPLE_ALIGN);
        self.blocks
            .try_reserve_exact(blocks.saturating_sub(self.blocks.len()))
            .map_err(|source| ArenaError::Allocation {
                count,
                length,
                source,
            })
    }

    /// Copies in sample `index`.
    pub fn insert(
        &mut self,
        index: usize,
        layout: &SampleLayout,
        bytes: &[u8],
    ) -> Result<(), ArenaError> {
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
    ) -> Result<std::ops::Range<usize>, ArenaError> {
        if index >= self.slots.len() {
            return Err(ArenaError::OutsideDataSet {
                index,
                samples: self.slots.len(),
            });
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

    /// The host's copy of the sample bytes; empty for a set in a device's memory.
    fn bytes(&self) -> &[u8] {
        match &self.elsewhere {
            Some(Elsewhere::Image { bytes, data_at }) => return &(**bytes).as_ref()[*data_at..],
            Some(Elsewhere::Device { .. }) => return &[],
            None => {}
        }
        // SAFETY: `Block` is plain bytes with no padding; the slice covers the blocks exactly.
        unsafe {
            std::slice::from_raw_parts(
                self.blocks.as_ptr() as *const u8,
                self.blocks.len() * SAMPLE_ALIGN,
            )
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        debug_assert!(
            self.elsewhere.is_none(),
            "a set held elsewhere is read-only"
        );
        // SAFETY: as in `bytes`, uniquely borrowed.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr() as *mut u8,
                self.blocks.len() * SAMPLE_ALIGN,
            )
        }
    }

    /// Sample `index`, if it is loaded and its bytes are in the host's memory (not for a set
    /// placed in a device's memory: see [`LoadedSamples::handed`]).
    #[inline]
    pub fn get(&self, index: usize) -> Option<SampleView<'_>> {
        if matches!(self.elsewhere, Some(Elsewhere::Device { .. })) {
            return None;
        }
        let slot = (*self.slots.get(index)?)?;
        let at = slot.shape_at as usize;
        Some(SampleView {
            data: &self.bytes()[slot.offset..slot.offset + slot.length],
            dtype: slot.dtype,
            shape: &self.shapes[at..at + slot.rank as usize],
        })
    }

    /// Sample `index` as a plugin is handed it, if it is loaded: for a set in a device's
    /// memory, its data is the device address (never read here).
    #[inline]
    pub fn handed(&self, index: usize) -> Option<HandedSample<'_>> {
        let slot = (*self.slots.get(index)?)?;
        let data = match &self.elsewhere {
            Some(Elsewhere::Device { address, .. }) => {
                address.wrapping_add(slot.offset) as *const u8
            }
            _ => self.bytes()[slot.offset..slot.offset + slot.length].as_ptr(),
        };
        let at = slot.shape_at as usize;
        Some(HandedSample {
            data,
            length: slot.length,
            dtype: slot.dtype,
            shape: &self.shapes[at..at + slot.rank as usize],
        })
    }

    /// The same set placed in a device's memory: the image of [`LoadedSamples::write_image`]
    /// was copied to `image_address` there, and `holder` frees it when the set is dropped.
    /// The samples keep their offsets, so each is handed as an address in that copy.
    pub fn placed_on_device(
        &self,
        image_address: usize,
        holder: std::sync::Arc<dyn Send + Sync>,
    ) -> LoadedSamples {
        LoadedSamples {
            blocks: Vec::new(),
            elsewhere: Some(Elsewhere::Device {
                address: image_address.wrapping_add(self.image_data_at()),
                _holder: holder,
            }),
            slots: self.slots.clone(),
            shapes: self.shapes.clone(),
            last_shape: None,
            used: self.used,
        }
    }

    /// Bytes of sample data held.
    pub fn data_bytes(&self) -> usize {
        self.slots.iter().flatten().map(|slot| slot.length).sum()
    }
}

/// The first word of a set's image.
const IMAGE_MAGIC: u64 = u64::from_le_bytes(*b"mlpsmp01");
/// Words before the slot table: magic, slots, shape entries, sample bytes.
const IMAGE_HEADER_WORDS: usize = 4;
const SLOT_WORDS: usize = 4;
const NO_SLOT: u64 = u64::MAX;

impl LoadedSamples {
    /// The size of [`LoadedSamples::write_image`]'s output.
    pub fn image_len(&self) -> usize {
        self.image_data_at() + self.used
    }

    fn image_data_at(&self) -> usize {
        let words = IMAGE_HEADER_WORDS + SLOT_WORDS * self.slots.len() + self.shapes.len();
        (words * 8).next_multiple_of(SAMPLE_ALIGN)
    }

    /// The set as one flat image (`image_len` bytes into `out`): a header, the slot table,
    /// the shapes, then the sample bytes at a [`SAMPLE_ALIGN`] offset. Another process maps it
    /// and reads the set in place with [`LoadedSamples::from_image`].
    pub fn write_image(&self, out: &mut [u8]) {
        let (table, samples) = self.image_parts();
        out[..table.len()].copy_from_slice(&table);
        out[table.len()..table.len() + samples.len()].copy_from_slice(samples);
    }

    /// The image of [`LoadedSamples::write_image`] in its two parts: the table (header, slot
    /// table and shapes, padded to [`SAMPLE_ALIGN`]), then the sample bytes as they are held.
    pub fn image_parts(&self) -> (Vec<u8>, &[u8]) {
        let data_at = self.image_data_at();
        let mut words = Vec::with_capacity(data_at / 8);
        words.extend([
            IMAGE_MAGIC,
            self.slots.len() as u64,
            self.shapes.len() as u64,
            self.used as u64,
        ]);
        for slot in &self.slots {
            match slot {
                Some(slot) => words.extend([
                    slot.offset as u64,
                    slot.length as u64,
                    (slot.dtype.to_raw() as u32 as u64) | ((slot.rank as u64) << 32),
                    slot.shape_at as u64,
                ]),
                None => words.extend([NO_SLOT, 0, 0, 0]),
            }
        }
        words.extend(self.shapes.iter().map(|&d| d as u64));
        let mut table = vec![0u8; data_at];
        for (chunk, word) in table.chunks_exact_mut(8).zip(&words) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        (table, &self.bytes()[..self.used])
    }

    /// The set an image holds, read in place from `image` (which must start
    /// [`SAMPLE_ALIGN`]-aligned, as a mapping does). Refuses an image whose table points
    /// outside it.
    pub fn from_image(image: ForeignBytes) -> Result<LoadedSamples, ImageError> {
        let bytes = (*image).as_ref();
        let word = |i: usize| -> Result<u64, ImageError> {
            bytes
                .get(i * 8..i * 8 + 8)
                .map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")))
                .ok_or(ImageError::Truncated { word: i })
        };
        if word(0)? != IMAGE_MAGIC {
            return Err(ImageError::NotAnImage);
        }
        let (slots, shapes, used) = (word(1)? as usize, word(2)? as usize, word(3)? as usize);
        let table_words = slots
            .checked_mul(SLOT_WORDS)
            .and_then(|w| w.checked_add(IMAGE_HEADER_WORDS + shapes))
            .ok_or(ImageError::TableTooLarge)?;
        let data_at = (table_words * 8).next_multiple_of(SAMPLE_ALIGN);
        if data_at
            .checked_add(used)
            .is_none_or(|end| end > bytes.len())
        {
            return Err(ImageError::Short { bytes: bytes.len() });
        }
        let mut set = LoadedSamples {
            slots: Vec::with_capacity(slots),
            shapes: Vec::with_capacity(shapes),
            used,
            ..LoadedSamples::default()
        };
        let shapes_at = IMAGE_HEADER_WORDS + SLOT_WORDS * slots;
        for i in 0..shapes {
            set.shapes.push(word(shapes_at + i)? as i64);
        }
        for i in 0..slots {
            let at = IMAGE_HEADER_WORDS + SLOT_WORDS * i;
            let offset = word(at)?;
            if offset == NO_SLOT {
                set.slots.push(None);
                continue;
            }
            let (length, kind, shape_at) = (word(at + 1)?, word(at + 2)?, word(at + 3)?);
            let rank = kind >> 32;
            let dtype = DType::from_raw(kind as u32 as i32);
            if offset
                .checked_add(length)
                .is_none_or(|end| end > used as u64)
                || shape_at.saturating_add(rank) > shapes as u64
            {
                return Err(ImageError::SlotOutside { slot: i });
            }
            set.slots.push(Some(Slot {
                offset: offset as usize,
                length: length as usize,
                dtype,
                shape_at: shape_at as u32,
                rank: rank as u32,
            }));
        }
        set.elsewhere = Some(Elsewhere::Image {
            bytes: image,
            data_at,
        });
        Ok(set)
    }
}

/// Called with every set the arena is given (see [`SampleArena::mirror_to`]).
type Mirror = Box<dyn Fn(&LoadedSamples) + Send + Sync>;

/// Shared between the sample library, which replaces the loaded set between series, and the
/// system under test, which reads it while issuing.
#[derive(Default)]
pub struct SampleArena {
    loaded: RwLock<LoadedSamples>,
    /// False until samples with data are loaded: a library without data costs the issue path
    /// one relaxed load, no lock.
    has_data: AtomicBool,
    /// One per plugin process the sets go to (one per device for a run over several).
    mirrors: std::sync::Mutex<Vec<Mirror>>,
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
        for mirror in &*self.mirrors.lock().unwrap_or_else(|p| p.into_inner()) {
            mirror(&loaded);
        }
    }

    /// Hands every set loaded from now on to `mirror` as well, before the load returns
    /// (untimed): a plugin in another process gets its copy so. Each call adds one.
    pub fn mirror_to(&self, mirror: Mirror) {
        self.mirrors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(mirror);
    }

    /// Stops handing sets to the mirrors added so far (their instances are gone: the
    /// library is being attached to new ones).
    pub fn clear_mirrors(&self) {
        self.mirrors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
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
        assert!(matches!(
            loaded.insert(10, &layout(&[1]), &[0]),
            Err(ArenaError::OutsideDataSet {
                index: 10,
                samples: 10
            })
        ));
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
    fn a_set_larger_than_the_memory_available_is_refused_before_any_allocation() {
        let mut loaded = LoadedSamples::new(4);
        // A petabyte: more than any machine running this has available.
        let error = loaded
            .reserve_samples(1 << 20, 1 << 30)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("1048576 samples of 1073741824 bytes need 1048576.0 GiB"),
            "{error}"
        );
        // Past usize: refused, not wrapped.
        assert!(loaded.reserve_samples(usize::MAX / 2, 1 << 20).is_err());
        assert!(loaded.reserve_samples(4, 1 << 10).is_ok());
    }

    #[test]
    fn an_image_reads_back_the_same_set_in_place() {
        let mut loaded = LoadedSamples::new(6);
        loaded.insert(4, &layout(&[3]), &[1, 2, 3]).unwrap();
        loaded.insert(1, &layout(&[2, 2]), &[4, 5, 6, 7]).unwrap();
        let mut image = AlignedBuffer::default();
        image.resize(loaded.image_len());
        loaded.write_image(image.bytes_mut());
        let bytes: Vec<u8> = image.bytes_mut()[..loaded.image_len()].to_vec();
        let mut aligned = AlignedBuffer::default();
        aligned.resize(bytes.len());
        aligned.bytes_mut()[..bytes.len()].copy_from_slice(&bytes);
        struct Owner(AlignedBuffer, usize);
        impl AsRef<[u8]> for Owner {
            fn as_ref(&self) -> &[u8] {
                // SAFETY: the buffer is not written while shared.
                let all = unsafe {
                    std::slice::from_raw_parts(
                        self.0.blocks.as_ptr() as *const u8,
                        self.0.blocks.len() * SAMPLE_ALIGN,
                    )
                };
                &all[..self.1]
            }
        }
        let read =
            LoadedSamples::from_image(std::sync::Arc::new(Owner(aligned, bytes.len()))).unwrap();
        assert_eq!(read.get(4).unwrap().data, &[1, 2, 3]);
        assert_eq!(read.get(1).unwrap().shape, &[2, 2]);
        assert_eq!(
            read.get(1).unwrap().data.as_ptr() as usize % SAMPLE_ALIGN,
            0
        );
        assert!(read.get(0).is_none());
        // A table pointing past the end is refused, never read.
        let short = bytes[..bytes.len() - 1].to_vec();
        assert_eq!(
            LoadedSamples::from_image(std::sync::Arc::new(short.clone())).err(),
            Some(ImageError::Short { bytes: short.len() })
        );
        assert_eq!(
            LoadedSamples::from_image(std::sync::Arc::new(vec![0u8; 4])).err(),
            Some(ImageError::Truncated { word: 0 })
        );
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
