//! `extends = "base.toml"`: a definition that is another one with some keys changed (MLPerf's
//! variants of a model: an Interactive Server with tighter latency bounds, a 99.9 % accuracy
//! target). The base file is read beside the extending one, and the extending file's keys are
//! laid over it, tables key by key, any other value replacing the base's.

use std::path::Path;

use toml::{Table, Value};

/// Bases of bases, at most: a loop of `extends` is an error, not a hang.
const MOST_LEVELS: usize = 4;

/// The definition at `path` as one table, its `extends` chain merged; Err(message) names the
/// file at fault.
pub(super) fn read_merged(path: &Path, text: &str) -> Result<Table, String> {
    merged(path, text, 0)
}

fn merged(path: &Path, text: &str, level: usize) -> Result<Table, String> {
    let mut table: Table = toml::from_str(text).map_err(|e| format!("{}: {e}", path.display()))?;
    let Some(base) = table.remove("extends") else {
        return Ok(table);
    };
    let Value::String(base) = base else {
        return Err(format!("{}: extends must be a file name", path.display()));
    };
    if level == MOST_LEVELS {
        return Err(format!(
            "{}: extends {base:?}: more than {MOST_LEVELS} levels (a loop?)",
            path.display()
        ));
    }
    let base_path = path.parent().unwrap_or(Path::new(".")).join(&base);
    let base_text = std::fs::read_to_string(&base_path).map_err(|e| {
        format!(
            "{}: extends {base:?}: {}: {e}",
            path.display(),
            base_path.display()
        )
    })?;
    let mut merged_base = merged(&base_path, &base_text, level + 1)?;
    lay_over(&mut merged_base, table);
    Ok(merged_base)
}

fn lay_over(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(below)), Value::Table(above)) => lay_over(below, above),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_merge_key_by_key_and_values_replace() {
        let dir = std::env::temp_dir().join(format!("mlperf-extends-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("base.toml"),
            "name = \"a\"\n[settings]\nx = 1\n[settings.Server]\nqps = 2\nbound = 3\n",
        )
        .unwrap();
        let child = dir.join("child.toml");
        let table = read_merged(
            &child,
            "extends = \"base.toml\"\nname = \"b\"\n[settings.Server]\nbound = 1\n",
        )
        .unwrap();
        assert_eq!(table["name"].as_str(), Some("b"));
        assert_eq!(table["settings"]["x"].as_integer(), Some(1));
        assert_eq!(table["settings"]["Server"]["qps"].as_integer(), Some(2));
        assert_eq!(table["settings"]["Server"]["bound"].as_integer(), Some(1));
        assert!(!table.contains_key("extends"));

        std::fs::write(dir.join("loop.toml"), "extends = \"loop.toml\"\n").unwrap();
        let error = read_merged(&dir.join("loop.toml"), "extends = \"loop.toml\"\n").unwrap_err();
        assert!(error.contains("more than 4 levels"), "{error}");
        let error = read_merged(&child, "extends = \"missing.toml\"\n").unwrap_err();
        assert!(error.contains("extends \"missing.toml\""), "{error}");
        let error = read_merged(&child, "extends = 3\n").unwrap_err();
        assert!(error.contains("extends must be a file name"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
