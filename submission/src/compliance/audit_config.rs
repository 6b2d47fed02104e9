//! Where a compliance test's audit.config lives: `configs/audit/<TEST>/<model>/audit.config`
//! for a model of its own (TEST01's sampling targets), else `configs/audit/<TEST>/audit.config`.
//! `configs/audit` is looked for as `Benchmark::find` looks for `configs/benchmarks`: under the
//! working directory, then in the repository the executable was built in.

use std::path::{Path, PathBuf};

use super::{ComplianceError, ComplianceTest};

/// The file name LoadGen looks for.
pub const AUDIT_CONFIG: &str = "audit.config";

/// The first `configs/audit` directory that exists.
pub fn audit_configs_dir() -> Result<PathBuf, ComplianceError> {
    let candidates = crate::benchmark::config_search_paths("audit");
    candidates
        .iter()
        .find(|dir| dir.is_dir())
        .cloned()
        .ok_or_else(|| ComplianceError::ConfigsNotFound {
            searched: candidates
                .iter()
                .map(|dir| dir.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The audit.config for `test` and `model` in `configs_dir`: the model's own, else the test's.
pub fn resolve_audit_config(
    configs_dir: &Path,
    test: ComplianceTest,
    model: &str,
) -> Result<PathBuf, ComplianceError> {
    let test_dir = configs_dir.join(test.name());
    let generic = test_dir.join(AUDIT_CONFIG);
    // A model name that is not one path component cannot name a folder of its own.
    let model_specific = if is_plain_name(model) {
        Some(test_dir.join(model).join(AUDIT_CONFIG))
    } else {
        None
    };
    if let Some(path) = model_specific.as_ref().filter(|p| p.is_file()) {
        return Ok(path.clone());
    }
    // The round's accuracy variants share their model's folder, as MLCommons' compliance/
    // tree has it (3d-unet-99 and 3d-unet-99.9: TEST01/3d-unet; yolo-95 and yolo-99: yolo).
    let family = ["-99.9", "-99", "-95"]
        .iter()
        .find_map(|suffix| model.strip_suffix(suffix))
        .filter(|family| is_plain_name(family))
        .map(|family| test_dir.join(family).join(AUDIT_CONFIG));
    if let Some(path) = family.filter(|p| p.is_file()) {
        return Ok(path);
    }
    if generic.is_file() {
        return Ok(generic);
    }
    Err(ComplianceError::AuditConfigNotFound {
        test: test.name().to_string(),
        model: model.to_string(),
        model_specific: model_specific
            .unwrap_or_else(|| test_dir.join("<model>").join(AUDIT_CONFIG)),
        generic,
    })
}

/// [`resolve_audit_config`] in [`audit_configs_dir`].
pub fn find_audit_config(test: ComplianceTest, model: &str) -> Result<PathBuf, ComplianceError> {
    resolve_audit_config(&audit_configs_dir()?, test, model)
}

fn is_plain_name(model: &str) -> bool {
    !model.is_empty() && model != "." && model != ".." && !model.contains(['/', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_loadgen::config::ConfigFile;

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/audit")
    }

    #[test]
    fn a_model_of_its_own_wins_over_the_tests_config() {
        let dir = shipped();
        let resnet = resolve_audit_config(&dir, ComplianceTest::Test01, "resnet50").unwrap();
        assert_eq!(resnet, dir.join("TEST01/resnet50/audit.config"));
        let test04 = resolve_audit_config(&dir, ComplianceTest::Test04, "resnet50").unwrap();
        assert_eq!(test04, dir.join("TEST04/audit.config"));
        let test06 = resolve_audit_config(&dir, ComplianceTest::Test06, "llama2-70b").unwrap();
        assert_eq!(test06, dir.join("TEST06/audit.config"));
        for (model, family) in [
            ("3d-unet-99.9", "3d-unet"),
            ("3d-unet-99", "3d-unet"),
            ("yolo-95", "yolo"),
        ] {
            let found = resolve_audit_config(&dir, ComplianceTest::Test01, model).unwrap();
            assert_eq!(
                found,
                dir.join(format!("TEST01/{family}/audit.config")),
                "{model}"
            );
        }
    }

    #[test]
    fn no_config_names_both_paths() {
        let dir = shipped();
        let error = resolve_audit_config(&dir, ComplianceTest::Test01, "gpt-oss-120b")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("TEST01/gpt-oss-120b/audit.config")
                && error.contains("TEST01/audit.config")
                && error.starts_with("no audit.config for TEST01 and model gpt-oss-120b"),
            "{error}"
        );
        let error = resolve_audit_config(&dir, ComplianceTest::Test01, "../TEST04")
            .unwrap_err()
            .to_string();
        assert!(error.contains("TEST01/<model>/audit.config"), "{error}");
    }

    /// Official targets (MLCommons compliance/TEST01/<model>/audit.config), ours for our own
    /// benchmarks.
    #[test]
    fn the_shipped_configs_parse_and_carry_the_official_values() {
        let dir = shipped();
        let targets = [
            ("3d-unet", "64"),
            ("bert", "4096"),
            ("dlrm", "4096"),
            ("dlrm-v2", "4096"),
            ("gpt-j", "4096"),
            ("pointpainting", "256"),
            ("resnet50", "4096"),
            ("retinanet", "256"),
            ("rgat", "4096"),
            ("rnnt", "4096"),
            ("stable-diffusion-xl", "128"),
            ("wan-2.2-t2v-a14b", "50"),
            ("whisper", "4096"),
            ("yolo", "64"),
            ("digits", "256"),
            ("fmnist", "1024"),
            ("minilm", "128"),
        ];
        for (model, target) in targets {
            let path = resolve_audit_config(&dir, ComplianceTest::Test01, model).unwrap();
            assert!(path.ends_with(format!("TEST01/{model}/audit.config")));
            let text = std::fs::read_to_string(&path).unwrap();
            ConfigFile::parse(&text, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
            for line in [
                "*.*.mode = 2".to_string(),
                "*.*.accuracy_log_rng_seed = 720381539243781796".to_string(),
                format!("*.*.accuracy_log_sampling_target = {target}"),
            ] {
                assert!(text.lines().any(|l| l == line), "{model}: {line}");
            }
        }
        let test04 = std::fs::read_to_string(dir.join("TEST04/audit.config")).unwrap();
        ConfigFile::parse(&test04, "TEST04").unwrap_or_else(|e| panic!("{e}"));
        for scenario in ["SingleStream", "MultiStream", "Server", "Offline"] {
            for (key, value) in [
                ("mode", "2"),
                ("performance_issue_unique", "0"),
                ("performance_issue_same", "1"),
                ("performance_issue_same_index", "3"),
            ] {
                let line = format!("*.{scenario}.{key} = {value}");
                assert!(test04.lines().any(|l| l == line), "{line}");
            }
        }
        let test06 = std::fs::read_to_string(dir.join("TEST06/audit.config")).unwrap();
        ConfigFile::parse(&test06, "TEST06").unwrap_or_else(|e| panic!("{e}"));
        for line in [
            "*.*.mode = 2",
            "*.*.accuracy_log_rng_seed = 720381539243781796",
            "*.*.accuracy_log_sampling_target = 100",
            "*.*.min_query_count = 100",
            "*.*.min_duration = 0",
            "*.*.sample_concatenate_permutation = 0",
        ] {
            assert!(test06.lines().any(|l| l == line), "{line}");
        }
    }
}
