//! [`PluginError`] and its trip across the boundary as a heap-allocated `mlperf_error`.

use std::ffi::{CStr, CString};
use std::ptr;

use crate::ffi::{self, mlperf_error};

/// An error a plugin reports to the host: an `MLPERF_ERROR_*` code and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (error code {code})")]
pub struct PluginError {
    pub code: i32,
    pub message: String,
}

impl PluginError {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        PluginError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ffi::ERROR_INVALID_ARGUMENT, message)
    }

    pub fn invalid_config(message: impl Into<String>) -> Self {
        Self::new(ffi::ERROR_INVALID_CONFIG, message)
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ffi::ERROR_UNSUPPORTED, message)
    }

    pub fn device(message: impl Into<String>) -> Self {
        Self::new(ffi::ERROR_DEVICE, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ffi::ERROR_INTERNAL, message)
    }

    pub fn panic(message: impl Into<String>) -> Self {
        Self::new(ffi::ERROR_PANIC, message)
    }

    /// Moves the error onto the heap for the host, which frees it through its `release`.
    pub fn into_raw(self) -> *mut mlperf_error {
        // A NUL inside the message would cut it short in C; show it instead.
        let message =
            CString::new(self.message.replace('\0', "\\0")).expect("NULs were replaced just above");
        let owned = Box::new(OwnedError {
            raw: mlperf_error {
                struct_size: size_of::<mlperf_error>(),
                next: ptr::null(),
                code: self.code,
                message: message.as_ptr(),
                release: Some(release),
            },
            _message: message,
        });
        Box::into_raw(owned).cast()
    }

    /// Reads an error received over the ABI and releases it; `None` for NULL (success).
    ///
    /// # Safety
    /// `raw` is NULL or an `mlperf_error` that nobody has released yet; it is released here.
    pub unsafe fn take(raw: *mut mlperf_error) -> Option<PluginError> {
        // SAFETY: the caller hands over a live error or NULL.
        let error = unsafe { raw.as_ref()? };
        let message = if error.message.is_null() {
            String::from("(no message)")
        } else {
            // SAFETY: the header makes `message` NUL-terminated and valid until release.
            unsafe { CStr::from_ptr(error.message) }
                .to_string_lossy()
                .into_owned()
        };
        let taken = PluginError::new(error.code, message);
        if let Some(release) = error.release {
            // SAFETY: released exactly once, here, by the one who received it.
            unsafe { release(raw) };
        }
        Some(taken)
    }
}

/// The error and the message it points to, freed together. `raw` comes first so that the
/// pointer handed out is also a pointer to the whole.
#[repr(C)]
struct OwnedError {
    raw: mlperf_error,
    _message: CString,
}

unsafe extern "C" fn release(error: *mut mlperf_error) {
    if !error.is_null() {
        // SAFETY: every error with this `release` came from `into_raw`'s Box<OwnedError>, and
        // the ABI has its receiver release it once.
        drop(unsafe { Box::from_raw(error.cast::<OwnedError>()) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_frees() {
        let raw = PluginError::invalid_config("bad \0 key").into_raw();
        // SAFETY: fresh from into_raw.
        let back = unsafe { PluginError::take(raw) }.unwrap();
        assert_eq!(back, PluginError::invalid_config("bad \\0 key"));
        // SAFETY: NULL is success.
        assert_eq!(unsafe { PluginError::take(ptr::null_mut()) }, None);
    }
}

/// A configuration parser's message on one line, with the line of `text` it points at:
/// ``line 3 (`workers = "many"`): invalid type: string "many", expected usize``. `offset` is
/// the byte where the parser stopped, when it says (toml's `span().start`).
pub fn config_error_text(text: &str, offset: Option<usize>, message: &str) -> String {
    let message = message.trim().replace('\n', "; ");
    let Some(offset) = offset else {
        return message;
    };
    let number = text[..offset.min(text.len())].matches('\n').count() + 1;
    match text.lines().nth(number - 1).map(str::trim) {
        Some(line) if !line.is_empty() => format!("line {number} (`{line}`): {message}"),
        _ => format!("line {number}: {message}"),
    }
}

#[cfg(test)]
mod config_error_tests {
    use super::*;

    #[test]
    fn the_message_names_the_line_it_points_at() {
        let text = "workers = 1\nlatency = \"x\"\n";
        assert_eq!(
            config_error_text(text, Some(12), "invalid type\nexpected u64"),
            "line 2 (`latency = \"x\"`): invalid type; expected u64"
        );
        assert_eq!(config_error_text(text, None, "bad"), "bad");
        assert_eq!(config_error_text("\n\n", Some(1), "bad"), "line 2: bad");
    }
}
