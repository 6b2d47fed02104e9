//! One instance of a module, and what a module's instances share: the engine, the pre-linked
//! module, the sandbox's limits and the guest ABI's exports, typed.

use wasmtime::{Engine, Instance, InstancePre, Memory, ResourceLimiter, Store, TypedFunc};

use crate::metadata::{Metadata, ModuleIdentity};
use crate::sandbox::{Sandbox, Ticker};

/// The ABI version this host speaks.
pub const ABI_VERSION: i32 = 1;

/// What workers share: the engine, the pre-linked module and the ticker that times calls.
pub(crate) struct Shared {
    pub(crate) engine: Engine,
    pub(crate) pre: InstancePre<StoreState>,
    pub(crate) sandbox: Sandbox,
    pub(crate) identity: ModuleIdentity,
    pub(crate) _ticker: Option<Ticker>,
}

/// Per-store state: the memory cap, and whether a call ran into it.
pub(crate) struct StoreState {
    pub(crate) memory_limit: usize,
    pub(crate) memory_cap_hit: bool,
}

impl ResourceLimiter for StoreState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_limit {
            // An error (not `false`) traps the guest, so a memory bomb stops at once.
            self.memory_cap_hit = true;
            return Err(wasmtime::Error::msg("memory cap reached"));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 16)
    }

    fn instances(&self) -> usize {
        1
    }

    fn memories(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        1
    }
}

pub(crate) struct Exports {
    pub(crate) abi: TypedFunc<(), i32>,
    pub(crate) metadata: TypedFunc<(), i32>,
    pub(crate) metadata_len: TypedFunc<(), i32>,
    pub(crate) shape: TypedFunc<(), i32>,
    pub(crate) input: TypedFunc<i32, i32>,
    pub(crate) preprocess: TypedFunc<i32, i32>,
    pub(crate) output: TypedFunc<(), i32>,
}

/// An instance and its store.
pub(crate) struct Live {
    pub(crate) store: Store<StoreState>,
    pub(crate) memory: Memory,
    pub(crate) exports: Exports,
}

impl Live {
    pub(crate) fn new(shared: &Shared) -> Result<Live, String> {
        let mut store = Store::new(
            &shared.engine,
            StoreState {
                memory_limit: shared.sandbox.memory_limit,
                memory_cap_hit: false,
            },
        );
        store.limiter(|state| state);
        arm(&mut store, shared);
        let instance: Instance = shared
            .pre
            .instantiate(&mut store)
            .map_err(|e| format!("cannot instantiate: {e:#}"))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or("no `memory` export")?;
        let mut func = |name: &str| {
            instance
                .get_func(&mut store, name)
                .ok_or_else(|| format!("no `{name}` export"))
        };
        let (abi, metadata, metadata_len, shape, input, preprocess, output) = (
            func("mlperf_preprocess_abi")?,
            func("mlperf_preprocess_metadata")?,
            func("mlperf_preprocess_metadata_len")?,
            func("mlperf_preprocess_shape")?,
            func("mlperf_preprocess_input")?,
            func("mlperf_preprocess")?,
            func("mlperf_preprocess_output")?,
        );
        let typed = |e: wasmtime::Error| format!("{e:#}");
        let exports = Exports {
            abi: abi.typed(&store).map_err(typed)?,
            metadata: metadata.typed(&store).map_err(typed)?,
            metadata_len: metadata_len.typed(&store).map_err(typed)?,
            shape: shape.typed(&store).map_err(typed)?,
            input: input.typed(&store).map_err(typed)?,
            preprocess: preprocess.typed(&store).map_err(typed)?,
            output: output.typed(&store).map_err(typed)?,
        };
        Ok(Live {
            store,
            memory,
            exports,
        })
    }

    pub(crate) fn bytes(&self, at: i32, len: usize) -> Option<&[u8]> {
        let start = u32::try_from(at).ok()? as usize;
        self.memory
            .data(&self.store)
            .get(start..start.checked_add(len)?)
    }
}

/// Gives the next call its full time or fuel.
pub(crate) fn arm(store: &mut Store<StoreState>, shared: &Shared) {
    match shared.sandbox.fuel {
        Some(fuel) => {
            let _ = store.set_fuel(fuel);
        }
        None => store.set_epoch_deadline(shared.sandbox.deadline_ticks()),
    }
}

/// Instantiates the module once to read its ABI version and metadata.
pub(crate) fn read_metadata(shared: &Shared) -> Result<Metadata, String> {
    let mut live = Live::new(shared)?;
    let abi = live
        .exports
        .abi
        .call(&mut live.store, ())
        .map_err(|e| format!("`mlperf_preprocess_abi` failed: {e:#}"))?;
    if abi != ABI_VERSION {
        return Err(format!(
            "it speaks guest ABI version {abi}; this host speaks version {ABI_VERSION}"
        ));
    }
    let at = live.exports.metadata.call(&mut live.store, ());
    let len = live.exports.metadata_len.call(&mut live.store, ());
    let (at, len) = match (at, len) {
        (Ok(at), Ok(len)) => (at, len),
        (Err(e), _) | (_, Err(e)) => return Err(format!("reading its metadata: {e:#}")),
    };
    let text = usize::try_from(len)
        .ok()
        .and_then(|len| live.bytes(at, len))
        .ok_or_else(|| format!("its metadata ({len} bytes at {at}) is outside its memory"))?;
    let text = std::str::from_utf8(text).map_err(|_| "its metadata is not UTF-8")?;
    Metadata::parse(text)
}
