//! Numbers as the official LoadGen prints them: a default C++ `std::ostream` (`%g`, 6
//! significant digits) and `DoubleToString` (`%.Nf`).

/// A double as a default-configured C++ `std::ostream` prints it: `%g` with 6 significant
/// digits (`1000`, `36499.8`, `1e+06`, `0.0001`, `1e-05`), `inf`/`nan` for non-finite values.
pub fn format_g6(value: f64) -> String {
    format_general(value, 6)
}

/// `%g` with `precision` significant digits, as glibc prints it.
fn format_general(value: f64, precision: usize) -> String {
    debug_assert!(precision > 0);
    if let Some(text) = non_finite_or_zero(value) {
        return text;
    }
    // Rust's `{:e}` rounds exactly (ties to even) like glibc, so the exponent of the rounded
    // value decides between fixed and scientific notation, as C's `%g` specifies.
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("Rust's {:e} output has an exponent");
    let exponent: i32 = exponent.parse().expect("Rust's exponent is an integer");
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_fraction_zeros(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (precision as i32 - 1 - exponent) as usize;
        strip_fraction_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

/// `DoubleToString(value, decimals)`: `std::fixed` with `decimals` digits (`%.2f`).
pub(crate) fn format_fixed(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        non_finite_or_zero(value).unwrap_or_default()
    }
}

/// What glibc prints for NaN, infinities and zeros under `%g` (a NaN keeps its sign bit).
fn non_finite_or_zero(value: f64) -> Option<String> {
    let negative = value.is_sign_negative();
    let text = if value.is_nan() {
        if negative {
            "-nan"
        } else {
            "nan"
        }
    } else if value.is_infinite() {
        if negative {
            "-inf"
        } else {
            "inf"
        }
    } else if value == 0.0 {
        if negative {
            "-0"
        } else {
            "0"
        }
    } else {
        return None;
    };
    Some(text.to_string())
}

/// `%g` drops trailing zeros of the fraction, and the point when nothing is left after it.
fn strip_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}
