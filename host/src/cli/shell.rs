//! Command lines as a POSIX shell reads them back: what `campaign plan --commands` prints, the
//! power client's workload, and the hints that are meant to be pasted.

/// Arguments joined into one command line.
pub(super) fn words(args: &[String]) -> String {
    args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

/// One argument, single-quoted unless it is plain.
pub(super) fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_read_back_as_given() {
        let args = ["run", "--set", "a=1", "it's", "", "two words"].map(String::from);
        assert_eq!(words(&args), r"run --set a=1 'it'\''s' '' 'two words'");
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\n' {}", words(&args)))
            .output()
            .unwrap();
        let back: Vec<String> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        assert_eq!(back, args);
    }
}
