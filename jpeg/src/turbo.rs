//! Run-time binding to the TurboJPEG 2.1 C API (Debian `libturbojpeg0`).
//!
//! We load the library with `libloading` instead of linking it so the crate builds on
//! machines without the development package, and fails with a clear error (not a link
//! error) where the runtime package is missing. Only the decompression entry points are
//! declared, with the signatures of `turbojpeg.h` from libjpeg-turbo 2.1.
//!
//! Why TurboJPEG and not a Rust decoder: OpenCV's output is whatever its bundled
//! libjpeg-turbo computes (ISLOW integer IDCT, "fancy" triangle-filter upsampling, the
//! library's fixed-point YCbCr->RGB tables). TurboJPEG's `tjDecompress2` with no flags
//! keeps all of those libjpeg defaults, so the pixels come from the same code.

use std::ffi::{c_char, c_int, c_uchar, c_ulong, c_void, CStr};
use std::sync::OnceLock;

use libloading::Library;

use crate::DecodeError;

/// `TJPF_BGR`: 3 bytes per pixel, B first (libjpeg's `JCS_EXT_BGR`).
pub(crate) const TJPF_BGR: c_int = 1;
/// `TJPF_CMYK`: 4 bytes per pixel, libjpeg's `JCS_CMYK` (YCCK converted, no RGB step).
pub(crate) const TJPF_CMYK: c_int = 11;
/// `tjGetErrorCode` result meaning only warnings were raised.
const TJERR_WARNING: c_int = 0;

type Handle = *mut c_void;
type InitFn = unsafe extern "C" fn() -> Handle;
type HeaderFn = unsafe extern "C" fn(
    Handle,
    *const c_uchar,
    c_ulong,
    *mut c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
) -> c_int;
type DecompressFn = unsafe extern "C" fn(
    Handle,
    *const c_uchar,
    c_ulong,
    *mut c_uchar,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
) -> c_int;
type ErrorStrFn = unsafe extern "C" fn(Handle) -> *mut c_char;
type ErrorCodeFn = unsafe extern "C" fn(Handle) -> c_int;
type DestroyFn = unsafe extern "C" fn(Handle) -> c_int;

/// Names tried in order: the Debian runtime soname, then the development symlink.
const LIBRARY_NAMES: [&str; 2] = ["libturbojpeg.so.0", "libturbojpeg.so"];

/// The loaded library and the function pointers taken from it. The pointers stay valid
/// because `_lib` lives as long as the struct, and the struct lives in a `static`.
struct Api {
    _lib: Library,
    init: InitFn,
    header: HeaderFn,
    decompress: DecompressFn,
    error_str: ErrorStrFn,
    error_code: ErrorCodeFn,
    destroy: DestroyFn,
}

fn api() -> Result<&'static Api, DecodeError> {
    static API: OnceLock<Result<Api, (String, String)>> = OnceLock::new();
    API.get_or_init(load)
        .as_ref()
        .map_err(|(what, message)| DecodeError::Library {
            what: what.clone(),
            message: message.clone(),
        })
}

fn load() -> Result<Api, (String, String)> {
    let mut last = String::new();
    let lib = LIBRARY_NAMES
        .iter()
        .find_map(|name| {
            // SAFETY: loading libturbojpeg runs no initialisers with preconditions.
            unsafe { Library::new(*name) }
                .map_err(|e| last = e.to_string())
                .ok()
        })
        .ok_or_else(|| (LIBRARY_NAMES.join(" or "), last))?;
    macro_rules! func {
        ($ty:ty, $name:literal) => {
            // SAFETY: the symbol is declared with the type turbojpeg.h (2.1) gives it.
            *unsafe { lib.get::<$ty>(concat!($name, "\0").as_bytes()) }
                .map_err(|e| ($name.to_string(), e.to_string()))?
        };
    }
    Ok(Api {
        init: func!(InitFn, "tjInitDecompress"),
        header: func!(HeaderFn, "tjDecompressHeader3"),
        decompress: func!(DecompressFn, "tjDecompress2"),
        error_str: func!(ErrorStrFn, "tjGetErrorStr2"),
        error_code: func!(ErrorCodeFn, "tjGetErrorCode"),
        destroy: func!(DestroyFn, "tjDestroy"),
        _lib: lib,
    })
}

/// Frame facts as libjpeg's own header parser reports them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LibHeader {
    pub(crate) width: u32,
    pub(crate) height: u32,
}

/// One TurboJPEG decompressor instance. Not shareable across threads at once (libjpeg
/// state lives in it), but it may move between threads.
pub(crate) struct Turbo {
    api: &'static Api,
    handle: Handle,
}

// SAFETY: a TurboJPEG handle has no thread affinity; `&mut self` methods keep it from
// being used by two threads at the same time.
unsafe impl Send for Turbo {}

impl Turbo {
    pub(crate) fn new() -> Result<Self, DecodeError> {
        let api = api()?;
        // SAFETY: no arguments; a null return is handled.
        let handle = unsafe { (api.init)() };
        if handle.is_null() {
            // SAFETY: a null handle selects the global (thread-local) error string.
            return Err(DecodeError::Init(unsafe { message(api, handle) }));
        }
        Ok(Turbo { api, handle })
    }

    /// `tjDecompressHeader3`: libjpeg's view of the frame. TurboJPEG 2.1 refuses images
    /// whose sampling factors match none of its TJSAMP values (4:1:0, 3x1, ...) here even
    /// though libjpeg decodes them, so callers treat an error as "no opinion".
    pub(crate) fn header(&mut self, jpeg: &[u8]) -> Result<LibHeader, String> {
        let (mut w, mut h, mut sub, mut cs) = (0, 0, 0, 0);
        // SAFETY: the buffer and length describe `jpeg`; out-pointers are valid.
        let rc = unsafe {
            (self.api.header)(
                self.handle,
                jpeg.as_ptr(),
                jpeg.len() as c_ulong,
                &mut w,
                &mut h,
                &mut sub,
                &mut cs,
            )
        };
        if rc != 0 {
            // SAFETY: the handle is live.
            return Err(unsafe { message(self.api, self.handle) });
        }
        Ok(LibHeader {
            width: w as u32,
            height: h as u32,
        })
    }

    /// `tjDecompress2` into `out`, a `width * height * pixel size` buffer.
    ///
    /// Passing the frame size as the "desired" size keeps TurboJPEG at scale 1/1, and can
    /// never make it write more than `out` holds (it only scales down to fit).
    /// Returns `Ok(None)` on success, `Ok(Some(warning))` when libjpeg only warned, and
    /// `Err` for a fatal error.
    pub(crate) fn decompress(
        &mut self,
        jpeg: &[u8],
        out: &mut [u8],
        width: u32,
        height: u32,
        pixel_format: c_int,
    ) -> Result<Option<String>, String> {
        let ps = if pixel_format == TJPF_CMYK { 4 } else { 3 };
        assert!(out.len() >= width as usize * height as usize * ps);
        // SAFETY: `out` holds height rows of width*ps bytes (checked above) and TurboJPEG
        // writes at most that much for a desired size of width x height.
        let rc = unsafe {
            (self.api.decompress)(
                self.handle,
                jpeg.as_ptr(),
                jpeg.len() as c_ulong,
                out.as_mut_ptr(),
                width as c_int,
                (width as usize * ps) as c_int,
                height as c_int,
                pixel_format,
                0,
            )
        };
        if rc == 0 {
            return Ok(None);
        }
        // SAFETY: the handle is live.
        let (text, code) = unsafe {
            (
                message(self.api, self.handle),
                (self.api.error_code)(self.handle),
            )
        };
        if code == TJERR_WARNING && crate::warnings::is_warning(&text) {
            Ok(Some(text))
        } else {
            Err(text)
        }
    }
}

impl Drop for Turbo {
    fn drop(&mut self) {
        // SAFETY: the handle came from tjInitDecompress and is destroyed once.
        unsafe { (self.api.destroy)(self.handle) };
    }
}

/// The last TurboJPEG error text for `handle` (or the thread's global one for null).
///
/// # Safety
/// `handle` must be null or a live TurboJPEG handle.
unsafe fn message(api: &Api, handle: Handle) -> String {
    // SAFETY: tjGetErrorStr2 returns a NUL-terminated static or per-handle buffer.
    unsafe {
        let p = (api.error_str)(handle);
        if p.is_null() {
            return "unknown TurboJPEG error".into();
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}
