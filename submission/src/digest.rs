//! The data set's sha256 (the inference rules ask for data-set checksums): hashed once per
//! file content, the digest kept in a cache keyed by the file's path, size and modification
//! time, so a run of an unchanged data set does not read it twice.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

/// Where digests are cached: `$MLPERF_HOST_CACHE_DIR`, else `$XDG_CACHE_HOME/mlperf-host`,
/// else `~/.cache/mlperf-host`; None when none can be named.
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MLPERF_HOST_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("mlperf-host"))
}

/// The sha256 of `path`'s content, in lower-case hex.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let canonical = std::fs::canonicalize(path)?;
    let key = hex(&Sha256::digest(
        format!("{}\0{}\0{modified}", canonical.display(), meta.len()).as_bytes(),
    ));
    let cached = cache_dir().map(|dir| dir.join("sha256").join(key));
    if let Some(digest) = cached
        .as_ref()
        .and_then(|file| std::fs::read_to_string(file).ok())
        .filter(|text| is_sha256(text.trim()))
    {
        return Ok(digest.trim().to_string());
    }
    let digest = hash_file(path)?;
    if let Some(file) = cached {
        // A cache that cannot be written only costs the next run a re-read.
        let _ = std::fs::create_dir_all(file.parent().expect("a cache file has a folder"))
            .and_then(|()| std::fs::write(&file, &digest));
    }
    Ok(digest)
}

/// The data set's digest: its file's sha256, or for a data set of one file per input the
/// sha256 of a `sha256sum`-style manifest of them (`<sha256>  <name>\n` in the given order).
pub fn dataset_sha256(files: &[(String, PathBuf)]) -> std::io::Result<String> {
    if let [(_, path)] = files {
        return file_sha256(path);
    }
    let mut manifest = String::new();
    for (name, path) in files {
        manifest.push_str(&format!("{}  {name}\n", file_sha256(path)?));
    }
    Ok(hex(&Sha256::digest(manifest.as_bytes())))
}

fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hex(&hasher.finalize()))
}

pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_hashes_to_its_sha256_and_a_change_is_seen() {
        let dir = std::env::temp_dir().join(format!("digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("data.npy");
        std::fs::write(&file, b"abc").unwrap();
        // sha256("abc"), FIPS 180-2's example.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(file_sha256(&file).unwrap(), abc);
        assert_eq!(file_sha256(&file).unwrap(), abc, "from the cache");
        std::fs::write(&file, b"abcd").unwrap();
        assert_ne!(file_sha256(&file).unwrap(), abc, "a new size is a new key");
        let two = [
            ("a".to_string(), file.clone()),
            ("b".to_string(), file.clone()),
        ];
        let manifest = format!("{0}  a\n{0}  b\n", file_sha256(&file).unwrap());
        assert_eq!(
            dataset_sha256(&two).unwrap(),
            hex(&Sha256::digest(manifest.as_bytes()))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
