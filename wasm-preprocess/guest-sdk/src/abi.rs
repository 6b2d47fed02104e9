//! The bodies of the exported functions, called by the code [`crate::export_preprocess!`]
//! generates. Not a public API.

use core::cell::UnsafeCell;

use crate::region::{Region, WasmMemory};
use crate::{Error, Output, Preprocess, Shape, MAX_RANK};

/// State the exported functions share. `Sync` is sound because wasm32-unknown-unknown
/// without the atomics feature has one thread, and the exports never call one another, so
/// each borrow below is the only one while it lives.
struct Global<T>(UnsafeCell<T>);

unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    const fn new(value: T) -> Global<T> {
        Global(UnsafeCell::new(value))
    }

    /// # Safety
    /// No other reference to the value may be live.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut T {
        &mut *self.0.get()
    }
}

struct Buffers {
    input: Region,
    output: Region,
    /// Address and length of the last call's output (empty after a failure).
    last_output: (usize, usize),
}

static BUFFERS: Global<Buffers> = Global::new(Buffers {
    input: Region::empty(),
    output: Region::empty(),
    last_output: (0, 0),
});

/// Where the host writes the input shape and reads the output shape. Its address escapes to
/// the host, so the compiler must assume the host changes it between calls.
static SHAPE_BLOCK: Global<[u32; MAX_RANK + 1]> = Global::new([0; MAX_RANK + 1]);

pub fn metadata<T: Preprocess>() -> i32 {
    T::METADATA.as_ptr() as i32
}

pub fn metadata_len<T: Preprocess>() -> i32 {
    T::METADATA.len() as i32
}

pub fn shape() -> i32 {
    SHAPE_BLOCK.0.get() as i32
}

pub fn input(len: i32) -> i32 {
    let Ok(len) = usize::try_from(len) else {
        return 0;
    };
    // SAFETY: exports do not nest, so this is the only borrow.
    let buffers = unsafe { BUFFERS.get() };
    buffers
        .input
        .reserve(len, &mut WasmMemory)
        .map_or(0, |address| address as i32)
}

pub fn preprocess<T: Preprocess>(len: i32) -> i32 {
    // An output nobody asked a buffer for is empty, at an address that is surely valid.
    let no_output = (shape() as usize, 0);
    // SAFETY: exports do not nest, so these are the only borrows.
    let (buffers, block) = unsafe { (BUFFERS.get(), SHAPE_BLOCK.get()) };
    buffers.last_output = no_output;
    let Ok(shape) = Shape::from_block(block) else {
        return Error::BadShape.code();
    };
    let Some(input) = input_bytes(&buffers.input, len) else {
        return Error::LengthMismatch.code();
    };
    let mut output = Output::in_region(&mut buffers.output);
    match T::preprocess(input, &shape, &mut output) {
        Ok(output_shape) => {
            let len = output.len();
            buffers.last_output = output.address().map_or(no_output, |address| (address, len));
            *block = output_shape.to_block();
            // `Output::bytes` refuses lengths above i32::MAX.
            len as i32
        }
        Err(error) => error.code(),
    }
}

pub fn output() -> i32 {
    // SAFETY: exports do not nest, so this is the only borrow.
    unsafe { BUFFERS.get() }.last_output.0 as i32
}

/// The `len` input bytes the host wrote, or `None` if `len` is negative or more than the
/// input buffer holds (the host did not ask for a buffer that big).
fn input_bytes(region: &Region, len: i32) -> Option<&'static [u8]> {
    let len = usize::try_from(len).ok()?;
    if len == 0 {
        return Some(&[]);
    }
    if len > region.capacity() {
        return None;
    }
    // SAFETY: the input region owns at least `len` bytes at its address, pages no Rust object
    // lives in and that nothing writes while the module runs; the output uses other pages.
    Some(unsafe { core::slice::from_raw_parts(region.address() as *const u8, len) })
}
