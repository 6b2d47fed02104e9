//! Power measurement for mlperf-host: meters (`source/`), each sampled on its own thread into a
//! [`Trace`] of wall-clock-stamped samples; the LoadGen run's [`RunWindow`]; and the energy
//! arithmetic of MLPerf's power checker ([`account`], [`metrics`]). Knows nothing of the
//! LoadGen engine: the host hands it the window and the performance figures.

pub mod account;
pub mod clock;
pub mod metrics;
pub mod source;
pub mod spl;
pub mod trace;

pub use account::{account, EnergyReport};
pub use clock::RunWindow;
pub use metrics::{metrics, PerformanceFigures, PowerMetrics, PowerScenario};
#[cfg(feature = "meters")]
pub use source::describe_gpus;
pub use source::{GpuDescription, GpuInventory};
pub use source::{Phase, PowerSource, Provenance, Scope, SourceError, SourceInfo};
pub use trace::{sum_traces, PowerSample, Trace};
