//! The header's dictionary, `{'descr': '<f4', 'fortran_order': False, 'shape': (10, 3), }`,
//! read as NumPy's reader reads it (a Python literal with exactly those three keys), not by
//! searching for the keys: an unterminated dictionary, an unknown key, or a `fortran_order`
//! that is not a bool is refused, as NumPy 2.4 refuses it. A key given twice NumPy takes the
//! last of; it is refused here, since which one the writer meant cannot be known.

use super::{element_of, Element};

#[derive(Debug)]
pub(super) struct Header {
    pub(super) element: Element,
    pub(super) shape: Vec<i64>,
}

/// The keys NumPy writes and requires, no more.
const KEYS: [&str; 3] = ["descr", "fortran_order", "shape"];

impl Header {
    pub(super) fn parse(text: &str) -> Result<Header, String> {
        let entries = dictionary(text)?;
        let value = |key: &str| {
            entries
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("the header has no '{key}'"))
        };
        let element = match value("descr")? {
            Value::Str(descr) if descr.len() > 40 => {
                return Err(format!("unsupported element type '{}...'", snippet(descr)))
            }
            Value::Str(descr) => element_of(descr)?,
            Value::List => {
                return Err(
                    "descr is a structured dtype (a list of fields), which is not \
                            supported: save each field as an array of its own"
                        .into(),
                )
            }
            other => return Err(format!("expected a string: descr is {}", other.shown())),
        };
        match value("fortran_order")? {
            Value::Bool(false) => {}
            Value::Bool(true) => {
                return Err("fortran_order arrays are not supported (save in C order)".into())
            }
            other => {
                return Err(format!(
                    "fortran_order is {}, not True or False",
                    other.shown()
                ))
            }
        }
        let shape = match value("shape")? {
            Value::Tuple(entries) => entries
                .iter()
                .map(|s| {
                    s.trim_end_matches('L')
                        .parse::<i64>()
                        .map_err(|_| format!("shape entry {:?} is not a number", snippet(s)))
                })
                .collect::<Result<Vec<_>, _>>()?,
            other => return Err(format!("shape is not a tuple: {}", other.shown())),
        };
        Ok(Header { element, shape })
    }
}

/// A value of the dictionary, as far as a header's three keys need it.
#[derive(Debug)]
enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    /// The entries between the parentheses, trimmed, a trailing comma's empty one dropped.
    Tuple(Vec<&'a str>),
    List,
    /// Anything else, up to the next `,` or `}`.
    Other(&'a str),
}

impl Value<'_> {
    fn shown(&self) -> String {
        match self {
            Value::Str(s) => format!("'{}'", snippet(s)),
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Value::Tuple(_) => "a tuple".to_string(),
            Value::List => "a list".to_string(),
            Value::Other(s) => snippet(s).to_string(),
        }
    }
}

/// `{key: value, ...}` with string keys, each of the three once; whitespace (the header's
/// padding and newline) may follow.
fn dictionary(text: &str) -> Result<Vec<(&str, Value<'_>)>, String> {
    let mut rest = text
        .trim_start()
        .strip_prefix('{')
        .ok_or_else(|| format!("the header is not a dictionary: {}", snippet(text.trim())))?;
    let unclosed = || "the header's dictionary is not closed (no `}`)".to_string();
    let mut entries: Vec<(&str, Value<'_>)> = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('}') {
            if !after.trim().is_empty() {
                return Err(format!(
                    "text after the header's dictionary: {}",
                    snippet(after.trim())
                ));
            }
            return Ok(entries);
        }
        if rest.is_empty() {
            return Err(unclosed());
        }
        let (key, after) = string(rest)?;
        if !KEYS.contains(&key) {
            return Err(format!(
                "the header has a key '{}' NumPy does not write (only descr, fortran_order, shape)",
                snippet(key)
            ));
        }
        if entries.iter().any(|(k, _)| *k == key) {
            return Err(format!("the header gives '{key}' twice"));
        }
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| format!("the header's '{key}' has no value"))?;
        let (value, after) = value(after.trim_start())?;
        entries.push((key, value));
        rest = after.trim_start();
        match rest.chars().next() {
            Some(',') => rest = &rest[1..],
            Some('}') => {}
            None => return Err(unclosed()),
            Some(_) => {
                return Err(format!(
                    "the header's '{key}' is followed by {}, not `,` or `}}`",
                    snippet(rest)
                ))
            }
        }
    }
}

/// The string literal at the start of `text`, and what follows it.
fn string(text: &str) -> Result<(&str, &str), String> {
    let quote = text
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or_else(|| format!("expected a string: {}", snippet(text)))?;
    let inner = &text[1..];
    let end = inner
        .find(quote)
        .ok_or_else(|| format!("unterminated string: {}", snippet(text)))?;
    Ok((&inner[..end], &inner[end + 1..]))
}

fn value(text: &str) -> Result<(Value<'_>, &str), String> {
    match text.chars().next() {
        Some('\'' | '"') => string(text).map(|(s, rest)| (Value::Str(s), rest)),
        Some('(') => {
            let end = text
                .find(')')
                .ok_or_else(|| format!("shape is not a tuple: {}", snippet(text)))?;
            let entries = text[1..end]
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            Ok((Value::Tuple(entries), &text[end + 1..]))
        }
        Some('[') => {
            // A structured dtype's fields: refused by its key, whatever they hold.
            let end = text.rfind(']').map_or(text.len(), |at| at + 1);
            Ok((Value::List, &text[end..]))
        }
        _ => {
            let end = text.find([',', '}']).unwrap_or(text.len());
            let word = text[..end].trim_end();
            let value = match word {
                "True" => Value::Bool(true),
                "False" => Value::Bool(false),
                _ => Value::Other(word),
            };
            Ok((value, &text[end..]))
        }
    }
}

/// At most 40 characters of `text`: a hostile header can be megabytes long.
fn snippet(text: &str) -> &str {
    text.char_indices()
        .nth(40)
        .map_or(text, |(at, _)| &text[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_headers_numpy_writes() {
        let header =
            Header::parse("{'descr': '<f4', 'fortran_order': False, 'shape': (10000, 28, 28), }")
                .unwrap();
        assert_eq!(header.element, Element::F32);
        assert_eq!(header.shape, vec![10000, 28, 28]);
        let one = Header::parse("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }    \n")
            .unwrap();
        assert_eq!(one.element, Element::U8);
        assert_eq!(one.shape, vec![5]);
        let scalar =
            Header::parse("{\"shape\": (), \"fortran_order\": False, \"descr\": \"<i8\"}").unwrap();
        assert_eq!(scalar.shape, Vec::<i64>::new());
    }

    #[test]
    fn refuses_what_numpy_refuses_or_it_cannot_read_in_place() {
        for (text, expected) in [
            (
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                "fortran_order arrays",
            ),
            (
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                "big-endian",
            ),
            (
                "{'descr': '<U8', 'fortran_order': False, 'shape': (2,), }",
                "<U8",
            ),
            ("{'descr': '<f4'}", "no 'fortran_order'"),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
                "not closed",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (9,)}",
                "'shape' twice",
            ),
            (
                "{'descr': '<f4', 'fortran_order': 'maybe', 'shape': (2,)}",
                "fortran_order is 'maybe', not True or False",
            ),
            (
                "{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (2,)}",
                "structured dtype",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
                "key 'extra' NumPy does not write",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
                "text after",
            ),
            ("'descr': '<f4'", "not a dictionary"),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': 2}",
                "shape is not a tuple: 2",
            ),
        ] {
            let error = Header::parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
        let long = format!(
            "{{'descr': '<{}', 'fortran_order': False, 'shape': (2,)}}",
            "x".repeat(10_000_000)
        );
        assert!(Header::parse(&long).unwrap_err().len() < 200);
    }
}
