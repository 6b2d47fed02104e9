//! The sandbox a module runs in: the wasmtime engine's settings and the limits every call is
//! held to, plus the ticker that drives epoch interruption.

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::PreprocessError;

/// Limits on a module's calls.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// Largest linear memory a module may grow to, in bytes.
    pub memory_limit: usize,
    /// Wall-clock limit of one `mlperf_preprocess` call, enforced by epoch interruption.
    pub time_limit: Duration,
    /// A deterministic instruction budget per call instead of the clock (`None`: the clock).
    pub fuel: Option<u64>,
    /// Largest wasm stack, in bytes.
    pub max_stack: usize,
    /// Instances that may be alive at once (one per worker thread).
    pub max_instances: u32,
    /// Where compiled modules are cached; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
}

/// Resolution of the time limit.
pub const TICK: Duration = Duration::from_millis(10);

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox {
            memory_limit: 256 << 20,
            time_limit: Duration::from_secs(1),
            fuel: None,
            max_stack: 512 << 10,
            max_instances: 64,
            cache_dir: default_cache_dir(),
        }
    }
}

/// `$XDG_CACHE_HOME/mlperf-host/wasm`, else `~/.cache/mlperf-host/wasm`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("mlperf-host").join("wasm"))
}

impl Sandbox {
    /// Epoch ticks a call may run: the limit rounded up, plus the tick already under way.
    pub(crate) fn deadline_ticks(&self) -> u64 {
        (self.time_limit.as_nanos().div_ceil(TICK.as_nanos()) as u64).max(1) + 1
    }

    pub(crate) fn engine(&self) -> Result<Engine, PreprocessError> {
        let mut config = Config::new();
        config
            .max_wasm_stack(self.max_stack)
            // Keeps the memory base fixed, so compiled code need not reload it in loops.
            .memory_may_move(false);
        match self.fuel {
            Some(_) => config.consume_fuel(true),
            None => config.epoch_interruption(true),
        };
        let mut pool = PoolingAllocationConfig::new();
        pool.total_memories(self.max_instances)
            .total_core_instances(self.max_instances)
            .total_tables(self.max_instances)
            .max_memory_size(self.memory_limit)
            // Reused slots are zeroed in place rather than faulted in again.
            .linear_memory_keep_resident(4 << 20);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        Engine::new(&config).map_err(|e| PreprocessError::Runtime(format!("{e:#}")))
    }
}

/// Advances an engine's epoch every [`TICK`] until dropped, on its own thread (never the
/// issue path's).
pub(crate) struct Ticker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    pub(crate) fn start(engine: &Engine) -> Result<Ticker, PreprocessError> {
        let (stop, stopped) = mpsc::channel::<()>();
        let engine = engine.clone();
        let thread = std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    engine.increment_epoch();
                }
            })
            .map_err(|e| PreprocessError::Runtime(format!("cannot start the epoch ticker: {e}")))?;
        Ok(Ticker {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
