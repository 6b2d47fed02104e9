//! Accelerators: NVIDIA GPUs through NVML; anything else that looks like an accelerator on
//! the PCI bus is reported as unrecognised, so the draft asks rather than says "none".

use std::path::Path;

use mlperf_power::GpuInventory;

use super::{entries, read_optional, under};

/// What the machine's accelerators are, as far as the draft can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Accelerators {
    /// None: no NVIDIA driver, and no PCI device of an accelerator's class.
    #[default]
    None,
    /// NVIDIA GPUs, as NVML describes them.
    Nvidia(GpuInventory),
    /// Something is there that NVML did not describe: why the draft cannot say more.
    Unrecognised(String),
}

/// A PCI device whose class is an accelerator's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciDevice {
    /// `0000:41:00.0`.
    pub address: String,
    /// `0x10de`.
    pub vendor: String,
    /// `0x030200`.
    pub class: String,
}

/// PCI classes (the top 16 bits of `class`) of compute devices: 3D controller (datacenter
/// GPUs), processing accelerator, co-processor. A VGA controller is left out: every server
/// and virtual machine has one for its console.
const ACCELERATOR_CLASSES: &[u32] = &[0x0302, 0x1200, 0x0b40];

/// The PCI devices under /sys/bus/pci/devices whose class is an accelerator's.
pub(super) fn pci_accelerators(root: &Path) -> Vec<PciDevice> {
    let devices = under(root, "/sys/bus/pci/devices");
    entries(&devices)
        .into_iter()
        .filter_map(|address| {
            let dir = devices.join(&address);
            let class = read_optional(&dir.join("class"))?;
            let code = u32::from_str_radix(class.trim_start_matches("0x"), 16).ok()?;
            ACCELERATOR_CLASSES
                .contains(&(code >> 8))
                .then(|| PciDevice {
                    vendor: read_optional(&dir.join("vendor")).unwrap_or_else(|| "?".into()),
                    address,
                    class,
                })
        })
        .collect()
}

/// NVML's GPUs when it has any; else unrecognised when an NVIDIA driver is loaded or the PCI
/// bus shows accelerators; else none.
pub(super) fn classify(
    nvml: Result<GpuInventory, String>,
    pci: &[PciDevice],
    nvidia_driver: bool,
) -> Accelerators {
    let nvml_says = match nvml {
        Ok(inventory) if !inventory.gpus.is_empty() => return Accelerators::Nvidia(inventory),
        Ok(_) => "NVML sees no GPU".to_string(),
        Err(error) => error,
    };
    if nvidia_driver {
        return Accelerators::Unrecognised(format!("an NVIDIA driver is loaded, but {nvml_says}"));
    }
    if pci.is_empty() {
        return Accelerators::None;
    }
    let devices: Vec<String> = pci
        .iter()
        .map(|d| format!("{} (vendor {}, class {})", d.address, d.vendor, d.class))
        .collect();
    Accelerators::Unrecognised(format!(
        "PCI devices of an accelerator's class that NVML does not describe: {}",
        devices.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_power::GpuDescription;

    fn h100() -> GpuInventory {
        GpuInventory {
            gpus: vec![GpuDescription {
                name: "NVIDIA H100 80GB HBM3".into(),
                memory_bytes: Some(85_520_809_984),
                max_pcie_link: Some((5, 16)),
                max_clock_mhz: Some(1980),
            }],
            driver_version: Some("550.54.15".into()),
            cuda_version: Some("12.4".into()),
        }
    }

    fn amd_gpu() -> PciDevice {
        PciDevice {
            address: "0000:41:00.0".into(),
            vendor: "0x1002".into(),
            class: "0x120000".into(),
        }
    }

    #[test]
    fn nvml_gpus_win() {
        assert_eq!(
            classify(Ok(h100()), &[], true),
            Accelerators::Nvidia(h100())
        );
    }

    #[test]
    fn no_driver_and_no_accelerator_class_is_none() {
        assert_eq!(
            classify(Err("NVML not available".into()), &[], false),
            Accelerators::None
        );
    }

    #[test]
    fn a_driver_without_nvml_is_unrecognised() {
        let Accelerators::Unrecognised(why) =
            classify(Err("NVML not available: boom".into()), &[], true)
        else {
            panic!("expected unrecognised");
        };
        assert!(
            why.contains("NVIDIA driver") && why.contains("boom"),
            "{why}"
        );
    }

    #[test]
    fn another_vendors_accelerator_is_unrecognised() {
        let Accelerators::Unrecognised(why) =
            classify(Err("NVML not available".into()), &[amd_gpu()], false)
        else {
            panic!("expected unrecognised");
        };
        assert!(why.contains("0000:41:00.0 (vendor 0x1002"), "{why}");
    }
}
