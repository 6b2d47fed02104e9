//! `EnglishNumberNormalizer`: spelled-out numbers to digits (`twenty five` → `25`, `one
//! hundred and fifty dollars` → `$150`, `one point five percent` → `1.5%`), suffixes kept
//! (`1960s`, `21st`), currencies spelled out after a number written before it, and `one`
//! written back as a word. Its quirks are kept, since the score depends on them: `point`
//! before a number word that is no decimal is dropped, `nineth` is the ordinal of nine, a
//! `minus` before a word that is no number is glued to it.
//!
//! Python's integers have no bound (`ten decillion` is 10^34, and a long run of digits is one
//! number), so values are big integers.

use std::collections::HashMap;
use std::sync::LazyLock;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use regex::Regex;

/// The number being built: an integer, or text when it took digits one by one (`one oh one`
/// is `101`, `one point five` is `1.5`), as the Python code switches between `int` and `str`.
#[derive(Debug, Clone)]
enum Value {
    Int(BigUint),
    Text(String),
}

impl Value {
    fn text(&self) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::Text(s) => s.clone(),
        }
    }

    /// Python's `str(value or "")`: empty for no value and for the integer 0.
    fn text_or_empty(value: &Option<Value>) -> String {
        match value {
            None => String::new(),
            Some(Value::Int(n)) if n.is_zero() => String::new(),
            Some(v) => v.text(),
        }
    }
}

/// The word lists, built once.
struct Words {
    zeros: [&'static str; 3],
    ones: HashMap<String, u32>,
    ones_suffixed: HashMap<String, (u32, &'static str)>,
    tens: HashMap<String, u32>,
    tens_suffixed: HashMap<String, (u32, &'static str)>,
    /// Exponents of ten.
    multipliers: HashMap<String, u32>,
    multipliers_suffixed: HashMap<String, (u32, &'static str)>,
    preceding_prefixers: HashMap<&'static str, &'static str>,
    following_prefixers: HashMap<&'static str, &'static str>,
    all: std::collections::HashSet<String>,
}

const ONES: [&str; 19] = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [(&str, u32); 8] = [
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
];
const MULTIPLIERS: [(&str, u32); 12] = [
    ("hundred", 2),
    ("thousand", 3),
    ("million", 6),
    ("billion", 9),
    ("trillion", 12),
    ("quadrillion", 15),
    ("quintillion", 18),
    ("sextillion", 21),
    ("septillion", 24),
    ("octillion", 27),
    ("nonillion", 30),
    ("decillion", 33),
];
const SPECIALS: [&str; 4] = ["and", "double", "triple", "point"];
/// Signs and currencies a number may start with (`$5`, and what the prefixers write).
const PREFIXES: [char; 6] = ['-', '+', '£', '€', '$', '¢'];

impl Words {
    fn new() -> Words {
        let ones: HashMap<String, u32> = ONES
            .iter()
            .zip(1..)
            .map(|(name, value)| (name.to_string(), value))
            .collect();
        let mut ones_suffixed = HashMap::new();
        for (name, &value) in &ones {
            let plural = if name == "six" {
                "sixes".to_string()
            } else {
                format!("{name}s")
            };
            ones_suffixed.insert(plural, (value, "s"));
        }
        for (name, value, suffix) in [
            ("zeroth", 0, "th"),
            ("first", 1, "st"),
            ("second", 2, "nd"),
            ("third", 3, "rd"),
            ("fifth", 5, "th"),
            ("twelfth", 12, "th"),
        ] {
            ones_suffixed.insert(name.to_string(), (value, suffix));
        }
        for (name, &value) in &ones {
            if value > 3 && value != 5 && value != 12 {
                let ordinal = if name.ends_with('t') {
                    format!("{name}h")
                } else {
                    format!("{name}th")
                };
                ones_suffixed.insert(ordinal, (value, "th"));
            }
        }
        let tens: HashMap<String, u32> = TENS.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        let mut tens_suffixed = HashMap::new();
        for (name, value) in TENS {
            tens_suffixed.insert(name.replace('y', "ies"), (value, "s"));
            tens_suffixed.insert(name.replace('y', "ieth"), (value, "th"));
        }
        let multipliers: HashMap<String, u32> = MULTIPLIERS
            .iter()
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        let mut multipliers_suffixed = HashMap::new();
        for (name, exponent) in MULTIPLIERS {
            multipliers_suffixed.insert(format!("{name}s"), (exponent, "s"));
            multipliers_suffixed.insert(format!("{name}th"), (exponent, "th"));
        }
        let preceding_prefixers = HashMap::from([
            ("minus", "-"),
            ("negative", "-"),
            ("plus", "+"),
            ("positive", "+"),
        ]);
        let following_prefixers = HashMap::from([
            ("pound", "£"),
            ("pounds", "£"),
            ("euro", "€"),
            ("euros", "€"),
            ("dollar", "$"),
            ("dollars", "$"),
            ("cent", "¢"),
            ("cents", "¢"),
        ]);
        let zeros = ["o", "oh", "zero"];
        let mut all = std::collections::HashSet::new();
        all.extend(zeros.iter().map(|s| s.to_string()));
        all.extend(ones.keys().cloned());
        all.extend(ones_suffixed.keys().cloned());
        all.extend(tens.keys().cloned());
        all.extend(tens_suffixed.keys().cloned());
        all.extend(multipliers.keys().cloned());
        all.extend(multipliers_suffixed.keys().cloned());
        all.extend(preceding_prefixers.keys().map(|s| s.to_string()));
        all.extend(following_prefixers.keys().map(|s| s.to_string()));
        all.extend(["per", "percent"].map(String::from));
        all.extend(SPECIALS.map(String::from));
        Words {
            zeros,
            ones,
            ones_suffixed,
            tens,
            tens_suffixed,
            multipliers,
            multipliers_suffixed,
            preceding_prefixers,
            following_prefixers,
            all,
        }
    }

    fn is_zero(&self, word: &str) -> bool {
        self.zeros.contains(&word)
    }

    fn is_decimal(&self, word: &str) -> bool {
        self.ones.contains_key(word) || self.tens.contains_key(word) || self.is_zero(word)
    }
}

static WORDS: LazyLock<Words> = LazyLock::new(Words::new);

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the normaliser's patterns are valid")
}

// ASCII digits: the scorer's text holds no other (Python's `\d` would take any).
static NUMERIC: LazyLock<Regex> = LazyLock::new(|| regex(r"^[0-9]+(\.[0-9]+)?$"));
static AND_A_HALF: LazyLock<Regex> = LazyLock::new(|| regex(r"\band\s+a\s+half\b"));
static LETTER_DIGIT: LazyLock<Regex> = LazyLock::new(|| regex(r"([a-z])([0-9])"));
static DIGIT_LETTER: LazyLock<Regex> = LazyLock::new(|| regex(r"([0-9])([a-z])"));
static DIGIT_SUFFIX: LazyLock<Regex> = LazyLock::new(|| regex(r"([0-9])\s+(st|nd|rd|th|s)\b"));
static CENTS_AFTER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"([€£$])([0-9]+) (?:and )?¢([0-9]{1,2})\b"));
static CENTS_ONLY: LazyLock<Regex> = LazyLock::new(|| regex(r"[€£$]0.([0-9]{1,2})\b"));
static ONE: LazyLock<Regex> = LazyLock::new(|| regex(r"\b1(s?)\b"));

/// `Fraction(text)` for the texts a value can hold (digits and points): `None` where Python
/// raises ValueError (`1.5.3`, `.`).
fn fraction(text: &str) -> Option<(BigUint, u32)> {
    let (whole, decimals) = match text.split_once('.') {
        Some((whole, decimals)) => (whole, decimals),
        None => (text, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !all_digits(decimals) || (whole.is_empty() && decimals.is_empty()) {
        return None;
    }
    let digits = format!("{whole}{decimals}");
    let numerator = digits.parse::<BigUint>().ok()?;
    Some((numerator, u32::try_from(decimals.len()).ok()?))
}

/// `Fraction(value) * 10**exponent` when it is an integer.
fn integral_product(value: &Value, exponent: u32) -> Option<BigUint> {
    let (numerator, decimals) = match value {
        Value::Int(n) => (n.clone(), 0),
        Value::Text(text) => fraction(text)?,
    };
    let product = numerator * BigUint::from(10u32).pow(exponent);
    let denominator = BigUint::from(10u32).pow(decimals);
    let (quotient, remainder) = product.div_rem(&denominator);
    remainder.is_zero().then_some(quotient)
}

fn ten_to(exponent: u32) -> BigUint {
    BigUint::from(10u32).pow(exponent)
}

/// `int % modulus` for the small moduli the code tests (10, 100).
fn rem(n: &BigUint, modulus: u32) -> u32 {
    (n % modulus).to_u32().unwrap_or(0)
}

/// The Python `process_words` generator's state.
struct Process {
    prefix: Option<String>,
    value: Option<Value>,
    out: Vec<String>,
}

impl Process {
    /// `yield output(result)`: the result with the prefix, which is cleared with the value.
    fn output(&mut self, result: String) {
        let result = match self.prefix.take() {
            Some(prefix) => prefix + &result,
            None => result,
        };
        self.value = None;
        self.out.push(result);
    }

    fn output_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.output(value.text());
        }
    }
}

/// `process_words`: the words with their numbers converted.
fn process_words(words: &[&str]) -> Vec<String> {
    let w = &*WORDS;
    let mut state = Process {
        prefix: None,
        value: None,
        out: Vec::new(),
    };
    let mut skip = false;
    for (index, &current) in words.iter().enumerate() {
        let prev = index.checked_sub(1).map(|i| words[i]);
        let next = words.get(index + 1).copied();
        if skip {
            skip = false;
            continue;
        }
        let in_words = |word: Option<&str>| word.is_some_and(|word| w.all.contains(word));
        let next_is_numeric = next.is_some_and(|next| NUMERIC.is_match(next));
        let prev_in = |map: &HashMap<String, u32>| prev.is_some_and(|p| map.contains_key(p));
        let first = current.chars().next().unwrap_or(' ');
        let has_prefix = PREFIXES.contains(&first);
        let without_prefix = if has_prefix {
            &current[first.len_utf8()..]
        } else {
            current
        };
        if NUMERIC.is_match(without_prefix) {
            // Arabic numbers, possibly with a sign or currency and decimals.
            let (numerator, decimals) = fraction(without_prefix).expect("matched as a number");
            if let Some(value) = &state.value {
                if let Value::Text(text) = value {
                    if text.ends_with('.') {
                        // Decimals and address parts: `1.` then `5`.
                        state.value = Some(Value::Text(format!("{text}{current}")));
                        continue;
                    }
                }
                state.output_value();
            }
            if has_prefix {
                state.prefix = Some(first.to_string());
            }
            // Stored as an integer where the fraction is one (`5`, `2.0`), as Python does.
            let (whole, fraction_part) = numerator.div_rem(&ten_to(decimals));
            state.value = Some(if fraction_part.is_zero() {
                Value::Int(whole)
            } else {
                Value::Text(without_prefix.to_string())
            });
        } else if !w.all.contains(current) {
            state.output_value();
            state.output(current.to_string());
        } else if w.is_zero(current) {
            state.value = Some(Value::Text(Value::text_or_empty(&state.value) + "0"));
        } else if let Some(&ones) = w.ones.get(current) {
            state.value = Some(match state.value.take() {
                None => Value::Int(BigUint::from(ones)),
                Some(value @ Value::Text(_)) => {
                    Value::Text(join_digit(&value, ones, prev_in(&w.tens)))
                }
                Some(value) if prev_in(&w.ones) => {
                    Value::Text(join_digit(&value, ones, prev_in(&w.tens)))
                }
                Some(Value::Int(n)) => add_or_append(n, ones),
            });
        } else if let Some(&(ones, suffix)) = w.ones_suffixed.get(current) {
            let text = match state.value.clone() {
                None => format!("{ones}{suffix}"),
                Some(value @ Value::Text(_)) => join_digit(&value, ones, prev_in(&w.tens)) + suffix,
                Some(value) if prev_in(&w.ones) => {
                    join_digit(&value, ones, prev_in(&w.tens)) + suffix
                }
                Some(Value::Int(n)) => add_or_append(n, ones).text() + suffix,
            };
            state.output(text);
        } else if let Some(&tens) = w.tens.get(current) {
            state.value = Some(match state.value.take() {
                None => Value::Int(BigUint::from(tens)),
                Some(Value::Text(text)) => Value::Text(format!("{text}{tens}")),
                Some(Value::Int(n)) if rem(&n, 100) == 0 => Value::Int(n + tens),
                Some(Value::Int(n)) => Value::Text(format!("{n}{tens}")),
            });
        } else if let Some(&(tens, suffix)) = w.tens_suffixed.get(current) {
            let text = match state.value.clone() {
                None => format!("{tens}{suffix}"),
                Some(Value::Text(text)) => format!("{text}{tens}{suffix}"),
                Some(Value::Int(n)) if rem(&n, 100) == 0 => format!("{}{suffix}", n + tens),
                Some(Value::Int(n)) => format!("{n}{tens}{suffix}"),
            };
            state.output(text);
        } else if let Some(&exponent) = w.multipliers.get(current) {
            match state.value.take() {
                None => state.value = Some(Value::Int(ten_to(exponent))),
                Some(value) if matches!(&value, Value::Text(_)) || is_int_zero(&value) => {
                    match integral_product(&value, exponent) {
                        Some(product) => state.value = Some(Value::Int(product)),
                        None => {
                            state.output(value.text());
                            state.value = Some(Value::Int(ten_to(exponent)));
                        }
                    }
                }
                Some(Value::Int(n)) => state.value = Some(Value::Int(scale(n, exponent))),
                Some(Value::Text(_)) => unreachable!("text is handled above"),
            }
        } else if let Some(&(exponent, suffix)) = w.multipliers_suffixed.get(current) {
            match state.value.take() {
                None => state.output(format!("{}{suffix}", ten_to(exponent))),
                Some(value @ Value::Text(_)) => match integral_product(&value, exponent) {
                    Some(product) => state.output(format!("{product}{suffix}")),
                    None => {
                        state.output(value.text());
                        state.output(format!("{}{suffix}", ten_to(exponent)));
                    }
                },
                Some(Value::Int(n)) => {
                    let scaled = scale(n, exponent);
                    state.output(format!("{scaled}{suffix}"));
                }
            }
            state.value = None;
        } else if let Some(&sign) = w.preceding_prefixers.get(current) {
            // A sign applies only where a number follows.
            state.output_value();
            if in_words(next) || next_is_numeric {
                state.prefix = Some(sign.to_string());
            } else {
                state.output(current.to_string());
            }
        } else if let Some(&currency) = w.following_prefixers.get(current) {
            // A currency applies only after a number.
            if state.value.is_some() {
                state.prefix = Some(currency.to_string());
                state.output_value();
            } else {
                state.output(current.to_string());
            }
        } else if current == "per" || current == "percent" {
            match state.value.take() {
                Some(value) if current == "percent" => state.output(value.text() + "%"),
                Some(value) if next == Some("cent") => {
                    state.output(value.text() + "%");
                    skip = true;
                }
                Some(value) => {
                    state.output(value.text());
                    state.output(current.to_string());
                }
                None => state.output(current.to_string()),
            }
        } else if SPECIALS.contains(&current) {
            if !in_words(next) && !next_is_numeric {
                // Only where the next word can be a number.
                state.output_value();
                state.output(current.to_string());
            } else if current == "and" {
                // `and` after hundreds, thousands... is dropped.
                if !prev_in(&w.multipliers) {
                    state.output_value();
                    state.output(current.to_string());
                }
            } else if current == "double" || current == "triple" {
                let next_word = next.unwrap_or("");
                if w.ones.contains_key(next_word) || w.is_zero(next_word) {
                    let repeats = if current == "double" { 2 } else { 3 };
                    let ones = w.ones.get(next_word).copied().unwrap_or(0);
                    let digits = ones.to_string().repeat(repeats);
                    state.value = Some(Value::Text(Value::text_or_empty(&state.value) + &digits));
                    skip = true;
                } else {
                    state.output_value();
                    state.output(current.to_string());
                }
            } else if next.is_some_and(|n| w.is_decimal(n)) || next_is_numeric {
                // `point`; before a number word that is no decimal it is dropped.
                state.value = Some(Value::Text(Value::text_or_empty(&state.value) + "."));
            }
        }
    }
    state.output_value();
    state.out
}

fn is_int_zero(value: &Value) -> bool {
    matches!(value, Value::Int(n) if n.is_zero())
}

/// A one-to-nineteen word after a value built digit by digit: after a tens word the ten's
/// zero is replaced (`one twenty three` → `123`), else the digits are appended.
fn join_digit(value: &Value, ones: u32, after_tens: bool) -> String {
    let text = value.text();
    if after_tens && ones < 10 {
        // The tens word always left a trailing zero (the reference asserts it).
        format!("{}{ones}", &text[..text.len().saturating_sub(1)])
    } else {
        format!("{text}{ones}")
    }
}

/// A one-to-nineteen word after an integer: added where the integer's last one (or two)
/// digits are zero (`twenty five`, `one hundred twelve`), else appended (`twenty one five`).
fn add_or_append(n: BigUint, ones: u32) -> Value {
    let modulus = if ones < 10 { 10 } else { 100 };
    if rem(&n, modulus) == 0 {
        Value::Int(n + ones)
    } else {
        Value::Text(format!("{n}{ones}"))
    }
}

/// An integer times a multiplier, as the reference scales it: the part below a thousand is
/// multiplied, the thousands above it kept (`two thousand five hundred` is 2,500).
fn scale(n: BigUint, exponent: u32) -> BigUint {
    let thousand = BigUint::from(1000u32);
    let (before, residual) = n.div_rem(&thousand);
    before * thousand + residual * ten_to(exponent)
}

/// `preprocess`: `<number> and a half` to `<number> point five`, then a space at each
/// letter/digit boundary, except before a suffix (`1960 s` → `1960s`).
fn preprocess(s: &str) -> String {
    let w = &*WORDS;
    let segments: Vec<&str> = AND_A_HALF.split(s).collect();
    let mut results: Vec<&str> = Vec::new();
    for (index, segment) in segments.iter().enumerate() {
        if segment.trim().is_empty() {
            continue;
        }
        results.push(segment);
        if index + 1 < segments.len() {
            let last_word = segment.split_whitespace().last().unwrap_or("");
            if w.is_decimal(last_word) || w.multipliers.contains_key(last_word) {
                results.push("point five");
            } else {
                results.push("and a half");
            }
        }
    }
    let s = results.join(" ");
    let s = LETTER_DIGIT.replace_all(&s, "${1} ${2}");
    let s = DIGIT_LETTER.replace_all(&s, "${1} ${2}");
    DIGIT_SUFFIX.replace_all(&s, "${1}${2}").into_owned()
}

/// `postprocess`: `$2 and ¢7` → `$2.07`, `$0.07` → `¢7`, `1` → `one`.
fn postprocess(s: &str) -> String {
    let s = CENTS_AFTER.replace_all(s, |c: &regex::Captures| {
        let cents: u32 = c[3].parse().unwrap_or(0);
        format!("{}{}.{cents:02}", &c[1], &c[2])
    });
    let s = CENTS_ONLY.replace_all(&s, |c: &regex::Captures| {
        let cents: u32 = c[1].parse().unwrap_or(0);
        format!("¢{cents}")
    });
    ONE.replace_all(&s, "one${1}").into_owned()
}

/// `EnglishNumberNormalizer.__call__`.
pub(crate) fn standardize_numbers(s: &str) -> String {
    let s = preprocess(s);
    let words: Vec<&str> = s.split_whitespace().collect();
    let s = process_words(&words).join(" ");
    postprocess(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;

    #[test]
    fn numbers_as_the_reference_writes_them() {
        for (text, expected) in [
            ("one point five percent", "one.5%"),
            ("twenty five past seven", "25 past 7"),
            ("one hundred and fifty dollars", "$150"),
            ("nineteen sixty", "1960"),
            ("two and a half", "2.5"),
            ("one oh one", "101"),
            ("double seven", "77"),
            ("the ninth and nineth", "the ninth and 9th"),
            ("point hundred", "100"),
            ("minus and cats", "-and cats"),
            ("1960 s", "1960s"),
            (
                "nine hundred ninety nine decillion",
                "999000000000000000000000000000000000",
            ),
        ] {
            assert_eq!(standardize_numbers(text), expected, "{text:?}");
        }
    }

    #[test]
    fn fractions_parse_as_pythons_do() {
        assert_eq!(fraction("1.5"), Some((BigUint::from(15u32), 1)));
        assert_eq!(fraction("1."), Some((BigUint::one(), 0)));
        assert_eq!(fraction(".5"), Some((BigUint::from(5u32), 1)));
        assert_eq!(fraction("."), None);
        assert_eq!(fraction("1.5.3"), None);
        assert_eq!(fraction(""), None);
    }
}
