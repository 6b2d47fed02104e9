//! Load as LLM serving benchmarks apply it: a fixed number of requests in flight (closed
//! loop), or arrivals at a rate (Poisson, gamma with a burstiness factor, constant) with an
//! optional cap on the requests in flight; run as one point on a dedicated thread against any
//! [`Target`], each request's times recorded without a lock, and summed up per point
//! (latency percentiles, rates, the concurrency reached, goodput under SLOs).
//!
//! Depends only on the LoadGen engine (its mt19937 and clock), so that the host can drive any
//! plugin with it.

mod arrivals;
mod driver;
mod gamma;
mod gaps;
mod lengths;
mod records;
mod regions;
mod saturation;
mod steady;
mod summary;

pub use arrivals::{ArrivalClock, Arrivals, LoadError, LoadMode};
pub use driver::{run_point, PointPlan, PointRun, Target, FAILED_IN_A_ROW_STOP};
pub use gaps::TokenGap;
pub use lengths::Lengths;
pub use records::{RequestRecord, RequestRecords};
pub use regions::{region_points, regions, Region, MOST_POINTS};
pub use saturation::SaturationRule;
pub use steady::{steady_window, SteadyRule, SteadyState};
pub use summary::{
    series, summarize, Distribution, EarlyStoppingEstimates, PointSummary, Series, Slo,
};
