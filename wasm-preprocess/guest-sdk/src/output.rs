use crate::Error;

/// Where a module writes its output. Ask for the buffer once per sample, sized for the whole
/// output: the buffer of the last request, cut to the requested length, is the output.
///
/// A buffer's contents start unspecified (an earlier sample's output may still be there), so
/// write every byte of it.
pub struct Output<'a> {
    storage: Storage<'a>,
    /// Address and length of the last requested buffer; address 0 while none was requested.
    last: (usize, usize),
}

enum Storage<'a> {
    /// The module's output region, grown as needed.
    #[cfg(target_arch = "wasm32")]
    Memory(&'a mut crate::region::Region),
    /// A caller's buffer, for running a module natively (tests).
    Slice(&'a mut [u8]),
}

impl<'a> Output<'a> {
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn in_region(region: &'a mut crate::region::Region) -> Output<'a> {
        Output {
            storage: Storage::Memory(region),
            last: (0, 0),
        }
    }

    /// An output that writes into `buffer`, which limits its size: for running a module's
    /// logic natively. Align `buffer` to 4 bytes to use [`Output::f32s`].
    pub fn from_slice(buffer: &'a mut [u8]) -> Output<'a> {
        Output {
            storage: Storage::Slice(buffer),
            last: (0, 0),
        }
    }

    /// An output buffer of `len` bytes, 16-byte aligned in a module. Fails with
    /// [`Error::OutOfMemory`] if memory cannot hold it or `len` exceeds what `mlperf_preprocess`
    /// can return (`i32::MAX`).
    pub fn bytes(&mut self, len: usize) -> Result<&mut [u8], Error> {
        if len > i32::MAX as usize {
            return Err(Error::OutOfMemory);
        }
        let bytes = match &mut self.storage {
            #[cfg(target_arch = "wasm32")]
            Storage::Memory(region) => {
                let address = region
                    .reserve(len, &mut crate::region::WasmMemory)
                    .ok_or(Error::OutOfMemory)?;
                // SAFETY: the region owns at least `len` bytes at `address`, pages obtained by
                // growing memory that no Rust object lives in; the `&mut self` borrow keeps
                // this the only slice over them.
                unsafe { core::slice::from_raw_parts_mut(address as *mut u8, len) }
            }
            Storage::Slice(buffer) => buffer.get_mut(..len).ok_or(Error::OutOfMemory)?,
        };
        self.last = (bytes.as_ptr() as usize, len);
        Ok(bytes)
    }

    /// An output buffer of `count` `f32`s (little-endian, as WebAssembly is), 16-byte aligned
    /// in a module. Fails like [`Output::bytes`], and also for a misaligned
    /// [`Output::from_slice`] buffer.
    pub fn f32s(&mut self, count: usize) -> Result<&mut [f32], Error> {
        let len = count
            .checked_mul(core::mem::size_of::<f32>())
            .ok_or(Error::OutOfMemory)?;
        let bytes = self.bytes(len)?;
        if bytes.as_ptr().align_offset(core::mem::align_of::<f32>()) != 0 {
            return Err(Error::OutOfMemory);
        }
        // SAFETY: `bytes` is `count * 4` writable bytes aligned for f32, and every bit
        // pattern is a valid f32; the new slice takes over the borrow of `bytes`.
        Ok(unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<f32>(), count) })
    }

    /// Makes the output the first `len` bytes of the last requested buffer, for a module that
    /// asked for one buffer holding its output and, after it, the working memory it computed
    /// the output with ([`carve`]). Fails when `len` exceeds that buffer.
    pub fn truncate(&mut self, len: usize) -> Result<(), Error> {
        if len > self.last.1 {
            return Err(Error::OutOfMemory);
        }
        self.last.1 = len;
        Ok(())
    }

    /// The length in bytes of the last requested buffer: the output's length.
    pub fn len(&self) -> usize {
        self.last.1
    }

    /// True while no bytes were requested.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The address of the last requested buffer, `None` while none was requested.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn address(&self) -> Option<usize> {
        match self.last.0 {
            0 => None,
            address => Some(address),
        }
    }
}

/// The first `count` values of type `T` carved out of `bytes` (after the padding that aligns
/// them), each set to `T::default()`, and the bytes after them: working memory of typed values
/// from a byte buffer, for a module without an allocator. Fails with [`Error::OutOfMemory`]
/// when `bytes` cannot hold them.
pub fn carve<T: Copy + Default>(
    bytes: &mut [u8],
    count: usize,
) -> Result<(&mut [T], &mut [u8]), Error> {
    let padding = bytes.as_ptr().align_offset(core::mem::align_of::<T>());
    let size = count
        .checked_mul(core::mem::size_of::<T>())
        .and_then(|size| size.checked_add(padding))
        .filter(|&size| size <= bytes.len())
        .ok_or(Error::OutOfMemory)?;
    let (values, rest) = bytes.split_at_mut(size);
    let values = &mut values[padding..];
    let first = values.as_mut_ptr().cast::<T>();
    for i in 0..count {
        // SAFETY: `values` holds `count * size_of::<T>()` bytes aligned for T (the padding
        // above), so element i lies inside it; writing a value initialises it whatever the
        // bytes were.
        unsafe { first.add(i).write(T::default()) };
    }
    // SAFETY: the `count` elements were initialised above, aligned and inside `values`, whose
    // exclusive borrow the new slice takes over.
    let typed = unsafe { core::slice::from_raw_parts_mut(first, count) };
    Ok((typed, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_are_carved_aligned_and_the_output_truncated() {
        let mut buffer = [0xAAu8; 64];
        let (floats, rest) = carve::<f32>(&mut buffer[1..], 3).unwrap();
        assert_eq!(floats, [0.0; 3]);
        floats[2] = 1.5;
        assert!(rest.len() >= 63 - 3 - 12);
        let (ints, _) = carve::<i32>(rest, 2).unwrap();
        assert_eq!(ints, [0, 0]);
        assert_eq!(
            carve::<u64>(&mut buffer[..8], 2).err(),
            Some(Error::OutOfMemory)
        );
        assert_eq!(
            carve::<u8>(&mut buffer, usize::MAX).err(),
            Some(Error::OutOfMemory)
        );
        let mut out = [0u8; 16];
        let mut output = Output::from_slice(&mut out);
        output.bytes(16).unwrap();
        output.truncate(4).unwrap();
        assert_eq!(output.len(), 4);
        assert_eq!(output.truncate(5), Err(Error::OutOfMemory));
    }

    #[test]
    fn bytes_are_cut_from_the_slice_and_recorded() {
        let mut buffer = [7u8; 8];
        let mut output = Output::from_slice(&mut buffer);
        assert!(output.is_empty());
        output.bytes(3).unwrap().copy_from_slice(&[1, 2, 3]);
        assert_eq!(output.len(), 3);
        assert_eq!(&buffer[..4], &[1, 2, 3, 7]);
    }

    #[test]
    fn the_last_request_is_the_output() {
        let mut buffer = [0u8; 8];
        let mut output = Output::from_slice(&mut buffer);
        output.bytes(8).unwrap();
        output.bytes(2).unwrap();
        assert_eq!(output.len(), 2);
    }

    #[test]
    fn too_big_a_request_is_out_of_memory() {
        let mut buffer = [0u8; 8];
        let mut output = Output::from_slice(&mut buffer);
        assert_eq!(output.bytes(9), Err(Error::OutOfMemory));
        assert_eq!(output.f32s(3), Err(Error::OutOfMemory));
        assert_eq!(output.f32s(usize::MAX), Err(Error::OutOfMemory));
        assert_eq!(output.bytes(i32::MAX as usize + 1), Err(Error::OutOfMemory));
    }

    #[test]
    fn f32s_write_through_to_the_buffer() {
        let mut floats = [0f32; 2];
        // SAFETY: viewing two f32s as their 8 bytes.
        let buffer =
            unsafe { core::slice::from_raw_parts_mut(floats.as_mut_ptr().cast::<u8>(), 8) };
        let mut output = Output::from_slice(buffer);
        output.f32s(2).unwrap().copy_from_slice(&[1.0, -2.5]);
        assert_eq!(output.len(), 8);
        assert_eq!(floats, [1.0, -2.5]);
    }

    #[test]
    fn misaligned_f32s_are_refused() {
        let mut floats = [0f32; 3];
        // SAFETY: viewing three f32s as their 12 bytes.
        let bytes =
            unsafe { core::slice::from_raw_parts_mut(floats.as_mut_ptr().cast::<u8>(), 12) };
        let mut output = Output::from_slice(&mut bytes[1..]);
        assert_eq!(output.f32s(2), Err(Error::OutOfMemory));
    }
}
