//! The layout descriptor that SDK-built plugins export next to their entry symbol, and the
//! host's check of it. abi_stable walks the whole graph reachable from `mlperf_plugin_api`
//! (the callbacks' argument types included), so a Rust plugin built against a plugin-api whose
//! structs differ from the host's is refused before any of its functions run. C plugins export
//! no descriptor; for them the host relies on `struct_size` and the version.

use std::fmt::Write as _;

use abi_stable::abi_stability::abi_checking::{
    check_layout_compatibility, AbiInstability, AbiInstabilityError,
};
use abi_stable::type_layout::{TLField, TLFieldOrFunction, TypeLayout};
use abi_stable::StableAbi;

use crate::ffi::mlperf_plugin_api;

/// The second symbol of SDK-built plugins, NUL-terminated for `dlsym`.
pub const LAYOUT_SYMBOL: &[u8] = b"mlperf_plugin_layout\0";

/// The type of [`LAYOUT_SYMBOL`].
pub type LayoutFn = extern "C" fn() -> &'static TypeLayout;

/// The layout of `mlperf_plugin_api` as this copy of plugin-api was compiled. In a plugin this
/// is the plugin's view; in the host, the host's.
pub fn expected() -> &'static TypeLayout {
    <mlperf_plugin_api as StableAbi>::LAYOUT
}

/// Checks a plugin's descriptor (`found`) against the host's own layout. The error names the
/// mismatching type and field of each problem, separated by `; `.
///
/// The check is exact: a plugin whose plugin-api appended fields in a later minor also differs.
/// The host should therefore apply it when the plugin answers the host's own ABI version and
/// fall back to `struct_size` otherwise.
pub fn check_layout(found: &'static TypeLayout) -> Result<(), String> {
    check_layout_compatibility(expected(), found).map_err(|errors| {
        let mut message = String::new();
        for error in errors.errors.iter() {
            describe(&mut message, error, found);
        }
        message
    })
}

/// Our own package name, as abi_stable records it: the types of the ABI carry it.
const PACKAGE: &str = env!("CARGO_PKG_NAME");

/// One line per shallow error: the ABI struct (and field) where it lies, how it is reached from
/// `mlperf_plugin_api`, and what differs.
fn describe(out: &mut String, error: &AbiInstabilityError, found: &'static TypeLayout) {
    let fields: Vec<_> = error
        .stack_trace
        .iter()
        .filter_map(|step| match (&step.expected, &step.found) {
            (TLFieldOrFunction::Field(expected), TLFieldOrFunction::Field(found)) => {
                Some((expected, found))
            }
            _ => None,
        })
        .collect();
    // The innermost ABI struct on the path owns the problem; the field after it names where.
    let owner_at = fields
        .iter()
        .rposition(|(expected, _)| expected.layout().package().as_str() == PACKAGE);
    let (owner, field) = match owner_at {
        Some(i) => (
            fields[i].0.layout(),
            fields[i + 1..].iter().find(|(f, _)| f.name() != "0"),
        ),
        None => (expected(), fields.first()),
    };
    let found_owner = owner_at.map_or(found, |i| fields[i].1.layout());
    let mut place = format!("`{}", owner.name());
    if let Some((field, _)) = field {
        let _ = write!(place, ".{}", field.name());
    }
    place.push('`');
    let route = route(&fields[..owner_at.unwrap_or(0)]);
    for instability in error.errs.iter() {
        if !out.is_empty() {
            out.push_str("; ");
        }
        let _ = write!(out, "{place}");
        if !route.is_empty() {
            let _ = write!(out, " (via {route})");
        }
        let _ = write!(out, ": {}", what(instability));
        if let AbiInstability::FieldCountMismatch(_) = instability {
            out.push_str(&field_difference(owner, found_owner));
        }
    }
}

/// How an inner struct is reached, e.g. `mlperf_plugin_api.issue_query(argument 2)`.
fn route(fields: &[(&TLField, &TLField)]) -> String {
    let mut route = String::new();
    for (field, _) in fields {
        let name = field.name();
        if name == "0" {
            continue; // through a pointer or an Option
        }
        if route.is_empty() {
            route.push_str(expected().name());
        }
        // abi_stable names function parameters `param_N` (from 0), or by the names it parsed (with a
        // trailing comma); results `__returns`.
        if let Some(n) = name
            .strip_prefix("param_")
            .and_then(|n| n.parse::<usize>().ok())
        {
            let _ = write!(route, "(argument {})", n + 1);
        } else if name.contains(',') {
            let _ = write!(route, "(argument `{}`)", name.trim_end_matches(','));
        } else if name == "__returns" {
            route.push_str("(result)");
        } else {
            let _ = write!(route, ".{name}");
        }
    }
    route
}

fn what(instability: &AbiInstability) -> String {
    use AbiInstability as AI;
    match instability {
        AI::Name(v) => format!("type `{}` where `{}` was expected", v.found, v.expected),
        AI::Size(v) => format!("size {} where {} was expected", v.found, v.expected),
        AI::Alignment(v) => format!("alignment {} where {} was expected", v.found, v.expected),
        AI::FieldCountMismatch(v) => {
            format!("{} fields where {} were expected", v.found, v.expected)
        }
        AI::UnexpectedField(v) => format!(
            "field `{}: {}` where `{}: {}` was expected",
            v.found.name(),
            v.found.full_type(),
            v.expected.name(),
            v.expected.full_type()
        ),
        AI::MismatchedPrimitive(v) => {
            format!("{:?} where {:?} was expected", v.found, v.expected)
        }
        AI::PackageVersion(v) => format!(
            "plugin-api {} where one compatible with {} was expected",
            v.found, v.expected
        ),
        AI::Package(v) => format!("package `{}` where `{}` was expected", v.found, v.expected),
        other => format!("{other:?}"),
    }
}

/// Names the fields one side has and the other lacks.
fn field_difference(expected: &'static TypeLayout, found: &'static TypeLayout) -> String {
    let names = |layout: &'static TypeLayout| -> Vec<&'static str> {
        layout
            .get_fields()
            .map(|fields| fields.iter().map(|field| field.name()).collect())
            .unwrap_or_default()
    };
    let (expected, found) = (names(expected), names(found));
    let added: Vec<_> = found.iter().filter(|n| !expected.contains(n)).collect();
    let missing: Vec<_> = expected.iter().filter(|n| !found.contains(n)).collect();
    let mut text = String::new();
    if !added.is_empty() {
        let _ = write!(text, "; unexpected field(s) {added:?}");
    }
    if !missing.is_empty() {
        let _ = write!(text, "; missing field(s) {missing:?}");
    }
    text
}
