//! Buffers carved out of linear memory by growing it: there is no allocator, and a buffer is
//! kept and reused for every later sample, so memory grows only when a bigger one is needed.

// Natively only the tests use this module.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

/// The WebAssembly page size.
pub(crate) const PAGE_SIZE: usize = 65536;

/// A linear memory that can only grow, counted in pages.
pub(crate) trait LinearMemory {
    /// The current size in pages.
    fn pages(&self) -> usize;
    /// Grows by `delta` pages; returns the previous size, or `None` if the memory cannot grow.
    fn grow(&mut self, delta: usize) -> Option<usize>;
}

/// The module's own memory 0.
#[cfg(target_arch = "wasm32")]
pub(crate) struct WasmMemory;

#[cfg(target_arch = "wasm32")]
impl LinearMemory for WasmMemory {
    fn pages(&self) -> usize {
        core::arch::wasm32::memory_size::<0>()
    }

    fn grow(&mut self, delta: usize) -> Option<usize> {
        match core::arch::wasm32::memory_grow::<0>(delta) {
            usize::MAX => None,
            previous => Some(previous),
        }
    }
}

/// Whole pages of linear memory owned by one buffer. Page-aligned, so 16-byte aligned.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Region {
    first_page: usize,
    pages: usize,
}

impl Region {
    pub(crate) const fn empty() -> Region {
        Region {
            first_page: 0,
            pages: 0,
        }
    }

    /// Byte address of the region's start.
    pub(crate) fn address(&self) -> usize {
        self.first_page * PAGE_SIZE
    }

    /// How many bytes the region holds.
    pub(crate) fn capacity(&self) -> usize {
        self.pages * PAGE_SIZE
    }

    /// Makes the region hold at least `len` bytes (and at least one page, so its address is
    /// never 0) and returns its address, or `None` if memory cannot grow.
    ///
    /// A region at the end of memory grows in place; any other one moves to fresh pages at the
    /// end, abandoning the old ones (nothing is copied: a buffer's contents are per sample).
    /// Memory grows by exactly what is missing, never speculatively, as a module's memory is
    /// capped.
    pub(crate) fn reserve(&mut self, len: usize, memory: &mut impl LinearMemory) -> Option<usize> {
        let needed = len.div_ceil(PAGE_SIZE).max(1);
        if needed <= self.pages {
            return Some(self.address());
        }
        let at_end = self.pages > 0 && self.first_page + self.pages == memory.pages();
        if at_end {
            memory.grow(needed - self.pages)?;
        } else {
            self.first_page = memory.grow(needed)?;
        }
        self.pages = needed;
        Some(self.address())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory of `pages` pages that refuses to grow past `limit`.
    struct FakeMemory {
        pages: usize,
        limit: usize,
    }

    impl LinearMemory for FakeMemory {
        fn pages(&self) -> usize {
            self.pages
        }

        fn grow(&mut self, delta: usize) -> Option<usize> {
            if self.pages + delta > self.limit {
                return None;
            }
            self.pages += delta;
            Some(self.pages - delta)
        }
    }

    fn memory() -> FakeMemory {
        FakeMemory {
            pages: 17,
            limit: 100,
        }
    }

    #[test]
    fn first_reservation_grows_fresh_pages() {
        let mut memory = memory();
        let mut region = Region::empty();
        assert_eq!(
            region.reserve(PAGE_SIZE + 1, &mut memory),
            Some(17 * PAGE_SIZE)
        );
        assert_eq!(memory.pages, 19);
    }

    #[test]
    fn an_empty_buffer_still_gets_a_nonzero_address() {
        let mut memory = memory();
        let mut region = Region::empty();
        assert_eq!(region.reserve(0, &mut memory), Some(17 * PAGE_SIZE));
        assert_eq!(memory.pages, 18);
    }

    #[test]
    fn smaller_or_equal_requests_reuse_the_region() {
        let mut memory = memory();
        let mut region = Region::empty();
        region.reserve(3 * PAGE_SIZE, &mut memory);
        assert_eq!(
            region.reserve(3 * PAGE_SIZE, &mut memory),
            Some(17 * PAGE_SIZE)
        );
        assert_eq!(region.reserve(1, &mut memory), Some(17 * PAGE_SIZE));
        assert_eq!(memory.pages, 20);
    }

    #[test]
    fn region_at_the_end_grows_in_place() {
        let mut memory = memory();
        let mut region = Region::empty();
        region.reserve(PAGE_SIZE, &mut memory);
        assert_eq!(
            region.reserve(4 * PAGE_SIZE, &mut memory),
            Some(17 * PAGE_SIZE)
        );
        assert_eq!(memory.pages, 21);
    }

    #[test]
    fn region_not_at_the_end_moves() {
        let mut memory = memory();
        let mut input = Region::empty();
        let mut output = Region::empty();
        input.reserve(PAGE_SIZE, &mut memory);
        output.reserve(PAGE_SIZE, &mut memory);
        assert_eq!(
            input.reserve(2 * PAGE_SIZE, &mut memory),
            Some(19 * PAGE_SIZE)
        );
        assert_eq!(memory.pages, 21);
        assert_eq!(output.address(), 18 * PAGE_SIZE);
    }

    #[test]
    fn failed_growth_keeps_the_old_region() {
        let mut memory = memory();
        let mut region = Region::empty();
        region.reserve(PAGE_SIZE, &mut memory);
        assert_eq!(region.reserve(1000 * PAGE_SIZE, &mut memory), None);
        assert_eq!(region.reserve(PAGE_SIZE, &mut memory), Some(17 * PAGE_SIZE));
        assert_eq!(memory.pages, 18);
    }
}
