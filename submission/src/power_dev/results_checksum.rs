//! check.py's "Check results checksum": the SHA-1 of every file the session requires, as the
//! client and the server recorded them, against the files as they are now.

use std::collections::BTreeMap;
use std::path::Path;

use sha1::{Digest, Sha1};

use super::checks::{fail, Outcome, Verdict};
use super::descriptor::Descriptor;
use super::RESULT_PATHS;
use crate::logs::accuracy::hex;

/// The descriptors themselves are left out: neither side records their final checksum.
const DESCRIPTORS: [&str; 2] = ["power/server.json", "power/client.json"];

pub(super) fn check(client: &Descriptor, server: &Descriptor, session: &Path) -> Outcome {
    let mut on_disk = match hash_dir(session) {
        Ok(hashes) => hashes,
        Err(e) => return fail(format!("cannot read {}: {e}", session.display())),
    };
    for descriptor in DESCRIPTORS {
        if on_disk.remove(descriptor).is_none() {
            return fail(format!("{descriptor} is missing"));
        }
    }
    let required: Vec<&str> = RESULT_PATHS
        .into_iter()
        .filter(|path| !DESCRIPTORS.contains(path))
        .collect();
    let recorded = |descriptor: &Descriptor| -> BTreeMap<String, String> {
        descriptor
            .get("results")
            .as_object()
            .map(|results| {
                results
                    .iter()
                    .filter(|(path, _)| required.contains(&path.as_str()))
                    .map(|(path, hash)| {
                        (
                            path.clone(),
                            hash.as_str()
                                .map_or_else(|| hash.to_string(), str::to_string),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let by_server = recorded(server);
    let by_client = recorded(client);
    on_disk.retain(|path, _| required.contains(&path.as_str()));
    let differing = |a: &BTreeMap<String, String>, b: &BTreeMap<String, String>| -> Vec<String> {
        a.iter()
            .filter_map(|(path, hash)| {
                b.get(path)
                    .filter(|other| *other != hash)
                    .map(|other| format!("Expected {hash}, but got {other} for {path}\n"))
            })
            .collect()
    };
    let server_client = differing(&by_server, &by_client);
    if !server_client.is_empty() {
        return fail(format!(
            "{} and {} results checksum comparison{}",
            server.path.display(),
            client.path.display(),
            server_client.concat()
        ));
    }
    // The server's record wins where both have a file.
    let mut recorded_both = by_client;
    recorded_both.extend(by_server);
    let comment = format!(
        "{} + {} results checksum values and calculated {} content checksum comparison:\n",
        server.path.display(),
        client.path.display(),
        session.display()
    );
    let missing: Vec<&str> = recorded_both
        .keys()
        .filter(|path| !on_disk.contains_key(*path))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return fail(format!("{comment} Missing {}", python_str(&missing)));
    }
    let extra: Vec<&str> = on_disk
        .keys()
        .filter(|path| !recorded_both.contains_key(*path))
        .map(String::as_str)
        .collect();
    if !extra.is_empty() {
        return fail(format!("{comment} Extra {}", python_str(&extra)));
    }
    let changed = differing(&recorded_both, &on_disk);
    if !changed.is_empty() {
        return fail(format!("{comment}{}", changed.concat()));
    }
    for (files, place) in [
        (
            &recorded_both,
            format!("{} + {}", server.path.display(), client.path.display()),
        ),
        (&on_disk, session.display().to_string()),
    ] {
        let absent: Vec<&str> = required
            .iter()
            .copied()
            .filter(|path| !files.contains_key(*path))
            .collect();
        if !absent.is_empty() {
            return Err(Verdict::Failed(format!(
                "There are absent files {} in the results of {place}",
                python_str(&absent)
            )));
        }
    }
    Ok(())
}

/// `', '.join(paths)` quoted as Python's repr.
fn python_str(paths: &[&str]) -> String {
    super::descriptor::repr(&paths.join(", "))
}

/// The SHA-1 of every file under `dir`, keyed by its path relative to it with `/` between
/// parts.
fn hash_dir(dir: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let mut hashes = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let digest = Sha1::digest(std::fs::read(&path)?);
            hashes.insert(relative, hex(&digest));
        }
    }
    Ok(hashes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_of_a_known_text() {
        // FIPS 180's "abc" vector.
        assert_eq!(
            hex(&Sha1::digest(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }
}
