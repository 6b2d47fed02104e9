//! The accelerator fields: NVIDIA GPUs from NVML, `N/A` and `"0"` for none, to fill in for an
//! accelerator the draft does not recognise.

use serde_json::{json, Map, Value};

use super::{fill_in, known_or};
use crate::system::machine::{Accelerators, GpuInventory};
use crate::system::units;

pub(super) fn draft(fields: &mut Map<String, Value>, accelerators: &Accelerators) {
    match accelerators {
        Accelerators::None => {
            // As the official CPU-only descriptions write it. `"0"`, not 0: the official
            // checker reads a number 0 as an empty answer (Python's falsiness).
            fields.insert("accelerators_per_node".into(), json!("0"));
            for key in [
                "accelerator_model_name",
                "accelerator_memory_capacity",
                "accelerator_memory_configuration",
                "accelerator_frequency",
                "accelerator_host_interconnect",
                "accelerator_interconnect",
                "accelerator_interconnect_topology",
                "accelerator_on-chip_memories",
            ] {
                fields.insert(key.into(), json!("N/A"));
            }
        }
        Accelerators::Nvidia(inventory) => nvidia(fields, inventory),
        Accelerators::Unrecognised(why) => {
            let ask = |what: &str| fill_in(&format!("{what} ({why})"));
            fields.insert(
                "accelerators_per_node".into(),
                ask("the accelerators of one node, 0 for none"),
            );
            fields.insert(
                "accelerator_model_name".into(),
                ask("the accelerator's model, N/A for none"),
            );
            fields.insert(
                "accelerator_memory_capacity".into(),
                ask("one accelerator's memory, e.g. 192 GB, N/A for none"),
            );
            fields.insert(
                "accelerator_memory_configuration".into(),
                ask("the accelerator memory's type, e.g. HBM3, N/A for none"),
            );
            fields.insert(
                "accelerator_host_interconnect".into(),
                ask("the accelerators' link to the host, e.g. PCIe Gen5 x16, N/A for none"),
            );
            fields.insert(
                "accelerator_interconnect".into(),
                ask("the link between accelerators, e.g. XGMI, N/A for none"),
            );
            for key in [
                "accelerator_frequency",
                "accelerator_interconnect_topology",
                "accelerator_on-chip_memories",
            ] {
                fields.insert(key.into(), json!(""));
            }
        }
    }
}

fn nvidia(fields: &mut Map<String, Value>, inventory: &GpuInventory) {
    let gpus = &inventory.gpus;
    let distinct = |values: Vec<String>| {
        let mut seen: Vec<String> = Vec::new();
        for value in values {
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
        seen.join(", ")
    };
    fields.insert("accelerators_per_node".into(), json!(gpus.len()));
    fields.insert(
        "accelerator_model_name".into(),
        json!(distinct(gpus.iter().map(|g| g.name.clone()).collect())),
    );
    let memory: Option<Vec<String>> = gpus
        .iter()
        .map(|g| g.memory_bytes.map(units::device_memory))
        .collect();
    fields.insert(
        "accelerator_memory_capacity".into(),
        known_or(memory.map(distinct), "one accelerator's memory, e.g. 80 GB"),
    );
    // The memory type when the model name carries it (`NVIDIA H100 80GB HBM3`).
    let memory_type = gpus[0]
        .name
        .split_whitespace()
        .find(|word| ["HBM", "GDDR", "LPDDR"].iter().any(|t| word.starts_with(t)))
        .map(str::to_string);
    fields.insert(
        "accelerator_memory_configuration".into(),
        known_or(memory_type, "the accelerator memory's type, e.g. HBM3"),
    );
    let links: Option<Vec<String>> = gpus
        .iter()
        .map(|g| {
            g.max_pcie_link
                .map(|(generation, lanes)| format!("PCIe Gen{generation} x{lanes}"))
        })
        .collect();
    fields.insert(
        "accelerator_host_interconnect".into(),
        known_or(
            links.map(distinct),
            "the accelerators' link to the host, e.g. PCIe Gen5 x16",
        ),
    );
    fields.insert(
        "accelerator_interconnect".into(),
        fill_in("the link between the GPUs, e.g. NVLink 4 (see nvidia-smi topo -m), or N/A"),
    );
    let clocks: Option<Vec<String>> = gpus
        .iter()
        .map(|g| g.max_clock_mhz.map(|mhz| format!("{mhz} MHz")))
        .collect();
    fields.insert(
        "accelerator_frequency".into(),
        json!(clocks.map(distinct).unwrap_or_default()),
    );
    fields.insert("accelerator_interconnect_topology".into(), json!(""));
    fields.insert("accelerator_on-chip_memories".into(), json!(""));
}
