//! What makes a tree unsafe to read or misleading before any rule: symlinks anywhere in it
//! (the checker and the upload would read through them to files outside the tree, and a
//! symlinked submitter folder is skipped by a directory walk, passing with nothing checked),
//! and a tree that holds no result at all.

use std::path::Path;

use super::super::tree::subdirectories;
use super::Context;
use crate::division::Division;
use crate::rule::Rule;

/// `[symlink]`: every symlink under `dir` is an error; nothing is followed.
pub(super) fn check_no_symlinks(context: &mut Context, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_symlink() {
            let target = std::fs::read_link(&path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            context.error(
                &path,
                Rule::Symlink,
                format!("a symlink (to {target}); a submission tree holds the files themselves"),
            );
        } else if kind.is_dir() {
            check_no_symlinks(context, &path);
        }
    }
}

/// `[no-results]`: a tree without a single scenario folder
/// (`<division>/<submitter>/results/<system>/<benchmark>/<scenario>/`) passes nothing.
pub(super) fn check_has_results(context: &mut Context, root: &Path, divisions: &[Division]) {
    let any_scenario = divisions.iter().any(|division| {
        let division = root.join(division.as_str());
        subdirectories(&division).iter().any(|submitter| {
            let results = division.join(submitter).join("results");
            subdirectories(&results).iter().any(|system| {
                subdirectories(&results.join(system))
                    .iter()
                    .any(|benchmark| {
                        !subdirectories(&results.join(system).join(benchmark)).is_empty()
                    })
            })
        })
    });
    if !any_scenario {
        context.error(
            root,
            Rule::NoResults,
            "no results in the tree (no <division>/<submitter>/results/<system>/<benchmark>/<scenario>/ folder)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check_tree, CheckOptions};

    fn temp_tree(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mlperf-tree-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn rules(root: &std::path::Path) -> Vec<String> {
        check_tree(
            root,
            CheckOptions::default(),
            &crate::round::Round::find(None).unwrap(),
        )
        .errors()
        .map(|f| format!("{} {}", f.rule, f.file.display()))
        .collect()
    }

    #[test]
    fn a_symlinked_submitter_folder_is_an_error_not_a_pass() {
        let root = temp_tree("symlink");
        let elsewhere = temp_tree("elsewhere");
        std::fs::create_dir_all(root.join("closed")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("closed/MyOrg")).unwrap();
        let errors = rules(&root);
        assert!(
            errors.contains(&"symlink closed/MyOrg".to_string()),
            "{errors:?}"
        );
        assert!(errors.contains(&"no-results ".to_string()), "{errors:?}");
        std::fs::remove_dir_all(&root).unwrap();
        std::fs::remove_dir_all(&elsewhere).unwrap();
    }

    #[test]
    fn a_tree_without_any_result_fails() {
        let root = temp_tree("empty");
        std::fs::create_dir_all(root.join("closed/MyOrg/results")).unwrap();
        std::fs::create_dir_all(root.join("closed/MyOrg/src")).unwrap();
        let errors = rules(&root);
        assert!(
            errors.iter().any(|e| e.starts_with("no-results")),
            "{errors:?}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
