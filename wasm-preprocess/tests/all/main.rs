//! The WebAssembly preprocessing tests, one binary: the sandbox's limits and failures, and the
//! shipped modules against their references.

mod modules;
mod sandbox;
