//! Python's `str` semantics where the reference's results depend on them: `isspace`,
//! `split()`, `strip()`, `lower()` and `repr(float)`.

use unicode_general_category::{get_general_category, GeneralCategory};

/// `str.isspace()` for one character: Python's whitespace (its `split()` and `strip()` set),
/// which adds \x1c-\x1f and \x85 to Unicode's White_Space.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\x1c'..='\x1f'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// `text.split()`.
pub fn split(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_space).filter(|part| !part.is_empty())
}

/// `text.strip()`.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// `" ".join(text.split())`.
pub fn join_split(text: &str) -> String {
    split(text).collect::<Vec<_>>().join(" ")
}

/// `c.lower()` of one character alone (no final-sigma context): Unicode's full lowercase
/// mapping (`İ` becomes `i̇`, two characters).
pub fn push_lower_char(c: char, out: &mut String) {
    out.extend(c.to_lowercase());
}

/// `text.lower()` of a whole string: the full mappings, and final sigma.
pub fn lower(text: &str) -> String {
    text.to_lowercase()
}

pub(crate) fn category(c: char) -> GeneralCategory {
    get_general_category(c)
}

/// Unicode category C* (Cc, Cf, Cs, Co, Cn).
pub(crate) fn is_other(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        category(c),
        Control | Format | Surrogate | PrivateUse | Unassigned
    )
}

/// Unicode category P*.
pub(crate) fn is_punctuation_category(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        category(c),
        ConnectorPunctuation
            | DashPunctuation
            | OpenPunctuation
            | ClosePunctuation
            | InitialPunctuation
            | FinalPunctuation
            | OtherPunctuation
    )
}

/// A character of Python's `\w` in a `str` pattern: alphanumeric (letters L*, numbers N*)
/// or the underscore. Combining marks are not word characters there.
pub(crate) fn is_word(c: char) -> bool {
    use GeneralCategory::*;
    c == '_'
        || matches!(
            category(c),
            UppercaseLetter
                | LowercaseLetter
                | TitlecaseLetter
                | ModifierLetter
                | OtherLetter
                | DecimalNumber
                | LetterNumber
                | OtherNumber
        )
}

/// `repr(x)` of a Python float: the shortest digits that read back, as `json.dumps` writes
/// them (`100.0`, `83.31196581196582`, `1e-05`, `1e+16`).
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives as few digits as Python's repr, but where two such digit strings
    // are equally near x it takes the upper one and Python the even one
    // (99785313904536.625: Rust ...63, Python ...62). Rounding x itself to that many digits
    // (`{:.Ne}` rounds the exact value half to even) gives Python's digits.
    let shortest = format!("{x:e}");
    let digits = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.bytes().filter(u8::is_ascii_digit).count());
    let sci = format!("{x:.*e}", digits.saturating_sub(1));
    let (mantissa, exponent) = sci.split_once('e').expect("an exponent");
    let exponent: i32 = exponent.parse().expect("a number");
    if (-4..16).contains(&exponent) {
        positional(mantissa, exponent)
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// `d.ddd` × 10^exponent written out without an exponent, with at least one decimal.
fn positional(mantissa: &str, exponent: i32) -> String {
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let point = exponent + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors;

    /// json.dumps(x) of 600 floats: random bits, scores, the exponent edges, ties.
    #[test]
    fn floats_print_as_json_dumps() {
        let entries = vectors::load("floats");
        let mut wrong = Vec::new();
        for entry in &entries {
            let x = f64::from_bits(entry["bits"].as_u64().unwrap());
            let want = vectors::str_of(entry, "json");
            if float_repr(x) != want {
                wrong.push(format!("{x:e}: {}, reference {want}", float_repr(x)));
            }
        }
        vectors::assert_none_wrong("repr(float)", entries.len(), &wrong);
    }

    #[test]
    fn floats_print_as_python_repr() {
        for (x, repr) in [
            (100.0, "100.0"),
            (0.0, "0.0"),
            (76.92307692307692, "76.92307692307692"),
            (83.31196581196582, "83.31196581196582"),
            (3.1049359996728416, "3.1049359996728416"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e15, "1000000000000000.0"),
            (1e23, "1e+23"),
            (5e-324, "5e-324"),
            // Exactly halfway between two 16-digit strings: Python takes the even one.
            (99785313904536.0 + 0.625, "99785313904536.62"),
            (-(796829537996113.0 + 0.25), "-796829537996113.2"),
        ] {
            assert_eq!(float_repr(x), repr, "{x}");
        }
    }

    #[test]
    fn whitespace_is_pythons() {
        assert_eq!(
            split(" a\x1cb\u{85}c\u{2028}d\u{3000}e\u{200b}f ").collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e\u{200b}f"]
        );
        assert_eq!(strip("\x1f x \u{a0}"), "x");
        let mut lowered = String::new();
        for c in "İΣ".chars() {
            push_lower_char(c, &mut lowered);
        }
        assert_eq!(lowered, "i\u{307}σ");
        assert_eq!(lower("ΟΔΟΣ"), "οδο\u{3c2}");
    }
}
