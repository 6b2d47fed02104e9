//! Python's `repr(float)`, which is how pandas writes float64 cells in
//! `summary.csv`. Rust and Python both pick the shortest digit string that
//! round-trips; only the layout (where the exponent starts, `1.0` vs `1`,
//! `e-05`) differs, and that is what this reproduces.

pub fn python_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // "{:e}" gives the shortest round-trip digits as d[.ddd]e<exp>
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("exponent present");
    let exp: i32 = exp.parse().expect("integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if !(-4..16).contains(&exp) {
        let m = if digits.len() == 1 {
            digits.clone()
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
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
    use super::python_repr;

    #[test]
    fn matches_python_layout() {
        let cases = [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (2.6219192441998116e-10, "2.6219192441998116e-10"),
            (0.8199088963568117, "0.8199088963568117"),
            (1e16, "1e+16"),
            (123456789012345.6, "123456789012345.6"),
            (-3.5e-7, "-3.5e-07"),
            (100.0, "100.0"),
        ];
        for (x, want) in cases {
            assert_eq!(python_repr(x), want);
        }
    }
}
