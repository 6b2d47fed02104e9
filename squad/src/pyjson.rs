//! Python's `json.dumps` where the reference writes JSON: `ensure_ascii` strings, and an
//! object of strings with `indent=4`.

/// A string as `json.dumps` writes it: everything outside printable ASCII escaped, as
/// `\uXXXX` (lowercase hex, surrogate pairs above the BMP).
pub(crate) fn dumps_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// `json.dumps(dict_of_strings, indent=4)`.
pub(crate) fn dumps_object_indent4(entries: &[(&str, &str)]) -> String {
    if entries.is_empty() {
        return "{}".into();
    }
    let body: Vec<String> = entries
        .iter()
        .map(|(key, value)| format!("    {}: {}", dumps_str(key), dumps_str(value)))
        .collect();
    format!("{{\n{}\n}}", body.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_python_does() {
        assert_eq!(
            dumps_str("a\"\\\n\t\u{7f}é😀\u{1}"),
            "\"a\\\"\\\\\\n\\t\\u007f\\u00e9\\ud83d\\ude00\\u0001\""
        );
        assert_eq!(
            dumps_object_indent4(&[("q1", "x"), ("q2", "y")]),
            "{\n    \"q1\": \"x\",\n    \"q2\": \"y\"\n}"
        );
        assert_eq!(dumps_object_indent4(&[]), "{}");
    }
}
