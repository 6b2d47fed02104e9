//! `--isolate process`: the plugin runs in a child process of `mlperf-host` (the same
//! executable, a hidden subcommand), so that its crash, `exit()` or hang cannot take the run's
//! logs with it. The two processes share memory: the loaded samples (mapped read-only into
//! the child), an issue ring, a completion ring and an arena the responses are copied into;
//! a Unix socket carries the rest (start, failures, sample images, destroy). The plugin ABI is
//! unchanged: the same library runs in-process or isolated. A power-meter plugin
//! (`--power plugin:…`) gets a process of its own too, driven over its stdin and stdout.

mod child;
mod host;
mod meter;
mod meter_child;
mod protocol;
mod region;
mod shm;

pub use child::main as child_main;
pub use host::{IsolatedSut, Isolation, SUBCOMMAND};
pub use meter::{IsolatedMeter, METER_SUBCOMMAND};
pub use meter_child::main as meter_main;
pub use protocol::TimedModule;
