//! The plugin ABI's tests, one binary: the C header's layout against Rust's, the layout check,
//! and the Rust SDK through the raw ABI. (sdk_power.rs is a binary of its own: each exports a
//! plugin's entry symbol, which a binary can hold once.)

mod layout;
mod layout_check;
mod sdk;
