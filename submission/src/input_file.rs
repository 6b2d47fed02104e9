//! Reading a file the user named: refused before it is opened when it is not a regular file
//! (opening a FIFO waits for a writer, forever for a config; a folder or a device reads as
//! nothing useful). The error says what the path is instead.

use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The file's text, as `std::fs::read_to_string`, for a regular file only.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    ensure_regular(path)?;
    std::fs::read_to_string(path)
}

/// The file's bytes, as `std::fs::read`, for a regular file only.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    ensure_regular(path)?;
    std::fs::read(path)
}

/// An error (`InvalidInput`) unless `path` is a regular file or a link to one; a path that
/// does not exist is left to the read, whose error says so.
pub fn ensure_regular(path: &Path) -> io::Result<()> {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Ok(());
    };
    let kind = metadata.file_type();
    let what = match () {
        _ if kind.is_file() => return Ok(()),
        _ if kind.is_dir() => "a directory",
        _ if kind.is_fifo() => "a FIFO (named pipe)",
        _ if kind.is_socket() => "a socket",
        _ if kind.is_char_device() || kind.is_block_device() => "a device",
        _ => "neither file nor folder",
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what}, not a regular file: give the file itself"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("mlperf-input-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plain.toml");
        std::fs::write(&file, "a = 1\n").unwrap();
        assert_eq!(read_to_string(&file).unwrap(), "a = 1\n");
        let missing = read(&dir.join("missing")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        for (path, what) in [
            (dir.as_path(), "a directory"),
            (Path::new("/dev/zero"), "a device"),
        ] {
            let error = read(path).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
            assert!(error.to_string().contains(what), "{error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
