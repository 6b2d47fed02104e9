//! Where each sample's latency went (ABI 1.4's `report_timing`): the host notes when it hands
//! each sample to the plugin, the plugin reports when its own work began and ended, and after
//! a series the two are put beside LoadGen's scheduled, issued and completed times to divide
//! the latencies at the percentiles LoadGen reports (result.json's `latency_breakdown`) and
//! in each sample's trace event.

mod breakdown;
mod observer;
mod table;

pub use breakdown::{BreakdownAt, LatencyBreakdown, Parts, SampleParts};
pub use observer::TimingObserver;
pub use table::{SampleTimingTable, TimingSink, TimingSinkSlot};
