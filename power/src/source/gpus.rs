//! The GPUs of a machine as NVML describes them (read by `describe_gpus` with the `meters`
//! feature), for a system description.

/// One NVIDIA GPU as NVML describes it, for a system description. A figure NVML will not
/// give (an older GPU, a restricted driver) is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDescription {
    pub name: String,
    /// Total installed device memory.
    pub memory_bytes: Option<u64>,
    /// The PCIe link the GPU and slot can reach: (generation, lanes).
    pub max_pcie_link: Option<(u32, u32)>,
    /// The highest graphics (SM) clock.
    pub max_clock_mhz: Option<u32>,
}

/// The GPUs NVML sees, with the driver and CUDA versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInventory {
    pub gpus: Vec<GpuDescription>,
    pub driver_version: Option<String>,
    /// As `MAJOR.MINOR`.
    pub cuda_version: Option<String>,
}
