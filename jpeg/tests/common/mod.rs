//! Test helper shared by the integration tests: where the fixture lives.

use std::path::PathBuf;

/// The fixture folder: `MLPERF_JPEG_FIXTURE`, or the repository's ImageNet fixture.
pub(crate) fn fixture_dir() -> PathBuf {
    std::env::var_os("MLPERF_JPEG_FIXTURE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/imagenet")
        })
}
