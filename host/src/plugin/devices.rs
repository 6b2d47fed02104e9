//! Devices (ABI 1.4): what a plugin lists, which of them a run uses (`--devices`), and the
//! copy of one each instance is created with.

use std::ffi::{c_char, CString};
use std::str::FromStr;

use mlperf_plugin_api::ffi;
use serde::{Deserialize, Serialize};

use super::error::PluginError;
use super::host_api::{host_api, take_error, HostContext};
use super::loader::{c_string, Plugin};

/// One device a plugin listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The plugin's own number for it (what `--devices 0,2` names).
    pub ordinal: u32,
    /// `cpu`, `gpu`, `npu` or `other`.
    pub kind: String,
    pub name: String,
    pub id: Option<String>,
    pub memory_bytes: u64,
}

impl DeviceInfo {
    /// "1 (sim1)", for messages.
    pub fn label(&self) -> String {
        format!("{} ({})", self.ordinal, self.name)
    }
}

fn kind_name(kind: u32) -> &'static str {
    match kind {
        ffi::DEVICE_CPU => "cpu",
        ffi::DEVICE_GPU => "gpu",
        ffi::DEVICE_NPU => "npu",
        _ => "other",
    }
}

fn kind_raw(name: &str) -> u32 {
    match name {
        "cpu" => ffi::DEVICE_CPU,
        "gpu" => ffi::DEVICE_GPU,
        "npu" => ffi::DEVICE_NPU,
        _ => ffi::DEVICE_OTHER,
    }
}

impl Plugin {
    /// The table has `devices` (ABI 1.4).
    pub fn has_devices_call(&self) -> bool {
        let table = self.table();
        table.struct_size > ffi::TABLE_SIZE_1_3 && table.devices.is_some()
    }

    /// The devices instances configured by `config` may be created for; none for a plugin
    /// without the call (before ABI 1.4) or that lists none.
    pub fn devices(&self, config: &str) -> Result<Vec<DeviceInfo>, PluginError> {
        if !self.has_devices_call() {
            return Ok(Vec::new());
        }
        let list = self.table().devices.expect("checked above");
        let context = HostContext::new(self.info.name.clone(), &[], None);
        let host = host_api(&context, None);
        let call_error = |(code, message)| PluginError::Call {
            plugin: self.info.name.clone(),
            function: "devices",
            code,
            message,
        };
        if let Some(init) = self.table().init {
            // SAFETY: the host table outlives the call.
            if let Some(error) = unsafe { take_error(init(&host)) } {
                return Err(call_error(error));
            }
        }
        let mut devices: *const ffi::mlperf_device = std::ptr::null();
        let mut count = 0usize;
        // SAFETY: per the ABI; the config bytes live across the call, and the list is copied
        // before anything else is called.
        let error = unsafe {
            list(
                &host,
                config.as_ptr() as *const c_char,
                config.len(),
                &mut devices,
                &mut count,
            )
        };
        // SAFETY: the plugin's error object, if any.
        if let Some(error) = unsafe { take_error(error) } {
            return Err(call_error(error));
        }
        if devices.is_null() || count == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: `count` devices strided by the first one's struct_size, per the ABI.
        let stride = unsafe { (*devices).struct_size };
        if stride < std::mem::size_of::<ffi::mlperf_device>() {
            return Err(call_error((
                ffi::ERROR_INVALID_ARGUMENT,
                format!("device struct_size {stride} is smaller than ABI 1.4's"),
            )));
        }
        let listed: Vec<DeviceInfo> = (0..count)
            .map(|k| {
                // SAFETY: entry k lies k * stride bytes in, per the ABI.
                let raw = unsafe { &*devices.byte_add(k * stride) };
                DeviceInfo {
                    ordinal: raw.ordinal,
                    kind: kind_name(raw.kind).to_string(),
                    name: c_string(raw.name),
                    id: (!raw.id.is_null()).then(|| c_string(raw.id)),
                    memory_bytes: raw.memory_bytes,
                }
            })
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = listed.iter().find(|d| !seen.insert(d.ordinal)) {
            return Err(call_error((
                ffi::ERROR_INVALID_ARGUMENT,
                format!("device ordinal {} is listed twice", twice.ordinal),
            )));
        }
        Ok(listed)
    }
}

/// Which of its devices a run uses (`--devices`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelection {
    /// `all`.
    All,
    /// `N`: the first N listed.
    First(usize),
    /// `0,2` (or `device=2` for one): these ordinals, in this order.
    Ordinals(Vec<u32>),
}

/// A `--devices` value, or a selection the plugin's list cannot meet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceSelectionError {
    #[error("--devices {0:?}: `all`, a count (`2`: the first two), ordinals (`0,2`), or one ordinal (`device=2`)")]
    Syntax(String),
    #[error("--devices: the plugin lists no devices (it is one instance; leave --devices out)")]
    NoDevices,
    #[error("--devices {wanted}: the plugin lists {listed} device(s): {names}")]
    TooMany {
        wanted: usize,
        listed: usize,
        names: String,
    },
    #[error("--devices: the plugin lists no device {ordinal} (it lists {names})")]
    Unknown { ordinal: u32, names: String },
    #[error("--devices: device {0} is named twice")]
    Twice(u32),
}

impl FromStr for DeviceSelection {
    type Err = DeviceSelectionError;

    fn from_str(text: &str) -> Result<DeviceSelection, DeviceSelectionError> {
        let syntax = || DeviceSelectionError::Syntax(text.to_string());
        let ordinals = |list: &str| -> Result<Vec<u32>, DeviceSelectionError> {
            list.split(',')
                .map(|o| o.trim().parse::<u32>().map_err(|_| syntax()))
                .collect()
        };
        let text = text.trim();
        if text == "all" {
            Ok(DeviceSelection::All)
        } else if let Some(list) = text.strip_prefix("device=") {
            Ok(DeviceSelection::Ordinals(ordinals(list)?))
        } else if text.contains(',') {
            Ok(DeviceSelection::Ordinals(ordinals(text)?))
        } else {
            match text.parse::<usize>() {
                Ok(0) | Err(_) => Err(syntax()),
                Ok(count) => Ok(DeviceSelection::First(count)),
            }
        }
    }
}

impl DeviceSelection {
    /// The devices of `listed` it names, in the order the run uses them.
    pub fn select(&self, listed: &[DeviceInfo]) -> Result<Vec<DeviceInfo>, DeviceSelectionError> {
        if listed.is_empty() {
            return Err(DeviceSelectionError::NoDevices);
        }
        let names = || {
            listed
                .iter()
                .map(DeviceInfo::label)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            DeviceSelection::All => Ok(listed.to_vec()),
            DeviceSelection::First(count) if *count > listed.len() => {
                Err(DeviceSelectionError::TooMany {
                    wanted: *count,
                    listed: listed.len(),
                    names: names(),
                })
            }
            DeviceSelection::First(count) => Ok(listed[..*count].to_vec()),
            DeviceSelection::Ordinals(ordinals) => {
                let mut chosen: Vec<DeviceInfo> = Vec::with_capacity(ordinals.len());
                for &ordinal in ordinals {
                    if chosen.iter().any(|d| d.ordinal == ordinal) {
                        return Err(DeviceSelectionError::Twice(ordinal));
                    }
                    let device = listed
                        .iter()
                        .find(|d| d.ordinal == ordinal)
                        .ok_or_else(|| DeviceSelectionError::Unknown {
                            ordinal,
                            names: names(),
                        })?;
                    chosen.push(device.clone());
                }
                Ok(chosen)
            }
        }
    }
}

/// The device an instance is created for, and its place among the run's instances.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunDevice {
    pub device: DeviceInfo,
    pub index: u32,
    pub count: u32,
}

/// The host's copy of a device, which the run description points at until destroy.
pub(crate) struct DeviceCopy {
    raw: Box<ffi::mlperf_device>,
    _strings: Vec<CString>,
}

impl DeviceCopy {
    pub(crate) fn new(device: &DeviceInfo) -> DeviceCopy {
        // A NUL inside a name the plugin gave cannot come back: it was read up to the NUL.
        let text = |s: &str| CString::new(s.replace('\0', "")).expect("NULs removed");
        let name = text(&device.name);
        let id = device.id.as_deref().map(text);
        let raw = Box::new(ffi::mlperf_device {
            struct_size: std::mem::size_of::<ffi::mlperf_device>(),
            next: std::ptr::null(),
            ordinal: device.ordinal,
            kind: kind_raw(&device.kind),
            name: name.as_ptr(),
            id: id.as_ref().map_or(std::ptr::null(), |id| id.as_ptr()),
            memory_bytes: device.memory_bytes,
        });
        let mut strings = vec![name];
        strings.extend(id);
        DeviceCopy {
            raw,
            _strings: strings,
        }
    }

    pub(crate) fn as_ptr(&self) -> *const ffi::mlperf_device {
        &*self.raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(ordinal: u32) -> DeviceInfo {
        DeviceInfo {
            ordinal,
            kind: "gpu".into(),
            name: format!("sim{ordinal}"),
            id: None,
            memory_bytes: 0,
        }
    }

    #[test]
    fn selections_read_as_documented_and_refuse_what_the_list_cannot_meet() {
        let listed = [device(0), device(1), device(3)];
        let pick = |text: &str| {
            text.parse::<DeviceSelection>()
                .and_then(|s| s.select(&listed))
                .map(|d| d.iter().map(|d| d.ordinal).collect::<Vec<_>>())
        };
        assert_eq!(pick("all"), Ok(vec![0, 1, 3]));
        assert_eq!(pick("2"), Ok(vec![0, 1]));
        assert_eq!(pick("3,0"), Ok(vec![3, 0]));
        assert_eq!(pick("device=3"), Ok(vec![3]));
        assert!(matches!(
            pick("4"),
            Err(DeviceSelectionError::TooMany { .. })
        ));
        assert_eq!(
            pick("0,2").unwrap_err().to_string(),
            "--devices: the plugin lists no device 2 (it lists 0 (sim0), 1 (sim1), 3 (sim3))"
        );
        assert_eq!(pick("0,0"), Err(DeviceSelectionError::Twice(0)));
        for bad in ["0", "none", "1,x", "device="] {
            assert!(
                matches!(pick(bad), Err(DeviceSelectionError::Syntax(_))),
                "{bad}"
            );
        }
        assert_eq!(
            DeviceSelection::All.select(&[]),
            Err(DeviceSelectionError::NoDevices)
        );
    }
}
