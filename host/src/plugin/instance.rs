//! The plugin instance a run drives: in this process, or in a process of its own.

use std::sync::Arc;
use std::time::Duration;

use super::isolated::{IsolatedSut, Isolation};
use super::{PluginError, PluginSut, RunDescription};
use crate::loadgen::{Completer, QuerySample, SystemUnderTest};
use crate::samples::{Preprocessing, SampleArena};

/// How an instance's `destroy` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Destroyed {
    /// It returned within the limit.
    pub returned: bool,
    /// Callbacks from the plugin after it returned (a thread it did not join); counted only
    /// for an isolated plugin, whose process keeps the host's table alive to see them.
    pub late_callbacks: u64,
}

// One per run, never moved about: the in-process instance stays inline (no pointer to chase
// on each issue).
#[allow(clippy::large_enum_variant)]
pub enum Instance {
    InProcess(PluginSut),
    Isolated(IsolatedSut),
}

impl Instance {
    /// Opens the plugin `spec` with `config` for the test `run` describes: in this process,
    /// or (with `isolation`) in a child process; `samples`: issued samples carry data.
    pub fn open(
        spec: &str,
        config: &str,
        samples: bool,
        isolation: Option<&Isolation>,
        run: Option<&RunDescription>,
    ) -> Result<Instance, PluginError> {
        match isolation {
            None => super::open_sut(spec, config, run).map(Instance::InProcess),
            Some(isolation) => {
                IsolatedSut::spawn(spec, config, samples, isolation, run).map(Instance::Isolated)
            }
        }
    }

    /// See [`PluginSut::load_samples`].
    pub fn load_samples(&self, indices: &[usize]) -> Result<(), String> {
        match self {
            Instance::InProcess(sut) => sut.load_samples(indices),
            Instance::Isolated(sut) => sut.sample_set(true, indices),
        }
    }

    /// See [`PluginSut::unload_samples`].
    pub fn unload_samples(&self, indices: &[usize]) -> Result<(), String> {
        match self {
            Instance::InProcess(sut) => sut.unload_samples(indices),
            Instance::Isolated(sut) => sut.sample_set(false, indices),
        }
    }

    pub fn attributes(&self) -> &[(String, String)] {
        match self {
            Instance::InProcess(sut) => sut.attributes(),
            Instance::Isolated(sut) => sut.attributes(),
        }
    }

    /// The plugin's MLPERF_CAP_* bits.
    pub fn capabilities(&self) -> u64 {
        match self {
            Instance::InProcess(sut) => sut.capabilities(),
            Instance::Isolated(sut) => sut.capabilities(),
        }
    }

    pub fn provenance(&self) -> Vec<(String, String)> {
        match self {
            Instance::InProcess(sut) => sut.provenance(),
            Instance::Isolated(sut) => sut.provenance(),
        }
    }

    /// See [`PluginSut::reserve_samples`].
    pub fn reserve_samples(&self, samples: usize) -> bool {
        match self {
            Instance::InProcess(sut) => sut.reserve_samples(samples),
            Instance::Isolated(sut) => sut.reserve_samples(samples),
        }
    }

    pub fn read_samples_from(&mut self, arena: Arc<SampleArena>) {
        match self {
            Instance::InProcess(sut) => sut.read_samples_from(arena),
            Instance::Isolated(sut) => sut.read_samples_from(arena),
        }
    }

    /// See [`PluginSut::preprocess_timed`]; an isolated instance has none (refused when the
    /// run is planned).
    pub fn preprocess_timed(&mut self, preprocessing: Arc<Preprocessing>) {
        if let Instance::InProcess(sut) = self {
            sut.preprocess_timed(preprocessing)
        }
    }

    /// Destroys the instance, waiting at most `limit` for the plugin's `destroy`; not
    /// `returned` when it had not by then (an in-process one is left to finish, or not, until
    /// the process ends; an isolated one is killed).
    pub fn destroy_within(self, limit: Duration) -> Destroyed {
        match self {
            Instance::InProcess(sut) => Destroyed {
                returned: destroy_in_process(sut, limit),
                late_callbacks: 0,
            },
            Instance::Isolated(sut) => sut.destroy_within(limit),
        }
    }
}

fn destroy_in_process(sut: PluginSut, limit: Duration) -> bool {
    let (done, destroyed) = std::sync::mpsc::channel();
    let destroying = std::thread::Builder::new()
        .name("mlperf-plugin-destroy".into())
        .spawn(move || {
            drop(sut);
            let _ = done.send(());
        });
    // Without a thread, the closure (and so the instance) was dropped here already.
    destroying.is_err() || destroyed.recv_timeout(limit).is_ok()
}

impl SystemUnderTest for Instance {
    fn name(&self) -> &str {
        match self {
            Instance::InProcess(sut) => sut.name(),
            Instance::Isolated(sut) => sut.name(),
        }
    }

    #[inline]
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        match self {
            Instance::InProcess(sut) => sut.issue_query(samples, completer),
            Instance::Isolated(sut) => sut.issue_query(samples, completer),
        }
    }

    fn prepare_query(&self, samples: &[QuerySample]) {
        match self {
            Instance::InProcess(sut) => sut.prepare_query(samples),
            Instance::Isolated(sut) => sut.prepare_query(samples),
        }
    }

    fn flush_queries(&self) {
        match self {
            Instance::InProcess(sut) => sut.flush_queries(),
            Instance::Isolated(sut) => sut.flush_queries(),
        }
    }

    fn issuer_idle(&self) {
        match self {
            Instance::InProcess(sut) => sut.issuer_idle(),
            Instance::Isolated(sut) => sut.issuer_idle(),
        }
    }

    fn issuer_idle_until(&self, deadline: std::time::Instant) {
        match self {
            Instance::InProcess(sut) => sut.issuer_idle_until(deadline),
            Instance::Isolated(sut) => sut.issuer_idle_until(deadline),
        }
    }
}
