//! [`SutPlugin`]: what a system-under-test backend implements.

use super::{Completer, Device, Host, PluginError, Sample};

/// A system-under-test backend. One value per `create`; dropping it is `destroy`, so `Drop`
/// must complete what is in flight and stop and join every thread the instance started: no
/// callback may follow destroy.
///
/// The host may call `issue_query` and `flush_queries` from any thread (concurrently only if
/// the plugin declares `CAP_CONCURRENT_ISSUE`), hence `Send + Sync`.
pub trait SutPlugin: Send + Sync + Sized + 'static {
    /// An instance configured by TOML text (empty when there is none). Parse it with any
    /// TOML crate; report bad settings with [`PluginError::invalid_config`]. Keep `host`'s
    /// [`Completer`] or [`Logger`](super::Logger) if threads need them.
    fn create(config: &str, host: &Host) -> Result<Self, PluginError>;

    /// Starts work on `samples`. Each sample's id must be completed exactly once through
    /// `completer`, inline or later from any thread; sample data is valid until then.
    /// Returning an error (or panicking) tells the host that none of these samples were
    /// accepted, so fail before completing any of them.
    fn issue_query(&self, samples: &[Sample<'_>], completer: &Completer)
        -> Result<(), PluginError>;

    /// LoadGen loaded `samples` (untimed, before a series of queries; ids are 0): their data
    /// stays put until [`SutPlugin::unload_samples`], so stage it on the device here if that
    /// helps; issued samples of the set point at the same memory. Indices may repeat
    /// (MultiStream pads the set). An error ends the run before any query. Hosts older than
    /// ABI 1.3 never call it.
    fn load_samples(&self, _samples: &[Sample<'_>]) -> Result<(), PluginError> {
        Ok(())
    }

    /// The set of the last `load_samples` is released: drop what was staged for it.
    fn unload_samples(&self, _samples: &[Sample<'_>]) -> Result<(), PluginError> {
        Ok(())
    }

    /// No more queries in this series: finish what is batched.
    fn flush_queries(&self) -> Result<(), PluginError> {
        Ok(())
    }

    /// The devices instances configured by `config` may be created for (ABI 1.4): the host
    /// makes one instance per device a run uses, each told its device in
    /// [`RunDescription::device`](super::RunDescription::device), and spreads the queries
    /// over them. None (the default): one instance, as before.
    fn devices(_config: &str) -> Result<Vec<Device>, PluginError> {
        Ok(Vec::new())
    }

    /// Key/value facts for the detail log and result.json (vendor, device, driver_version,
    /// firmware_version, precision, ...). Asked once per instance.
    fn attributes(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
