//! The draft of `systems/<system>.json`: every required field (and the power and network
//! fields when asked), from the machine's facts, the names the submitter gives and the
//! software stack. What the draft cannot know is marked [`FILL_IN`](super::FILL_IN), followed
//! by what to write.

mod accelerators;
mod power_network;

use serde_json::{json, Map, Value};

use super::fields::{known_fields, NETWORK_FIELDS, POWER_FIELDS, REQUIRED_FIELDS};
use super::machine::{Accelerators, MachineFacts, NetInterface};
use super::software::SoftwareStack;
use super::units;
use super::FILL_IN;
use crate::division::Division;

/// What the submitter tells the draft; `None` where it is to be filled in later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftRequest {
    /// `system_name`: the vendor's name for the system. `None`: the firmware's (DMI) vendor
    /// and product name, else to fill in.
    pub system_name: Option<String>,
    pub submitter: String,
    pub division: Division,
    /// `datacenter`, `edge`, `datacenter,edge` or `edge,datacenter`.
    pub system_type: Option<String>,
    /// `available`, `preview` or `rdi`.
    pub status: Option<String>,
    /// Add the fields of a power submission.
    pub power: bool,
    /// Add the fields of a system under test reached over the network (`is_network`).
    pub network: bool,
}

/// The system description drafted from `machine`, `request` and `software`. The map keeps
/// its keys by name; [`to_pretty_json`] writes them in the official order.
pub fn draft_system(
    request: &DraftRequest,
    machine: &MachineFacts,
    software: &SoftwareStack,
) -> Map<String, Value> {
    let mut fields = Map::new();
    names(&mut fields, request, machine);
    host(&mut fields, machine);
    accelerators::draft(&mut fields, &machine.accelerators);
    software_stack(&mut fields, machine, software);
    if request.power {
        power_network::power(&mut fields, machine);
    }
    // The network division is run over the network, whatever `network` says.
    let network = request.network || request.division == Division::Network;
    if network {
        power_network::network(&mut fields, machine);
    }
    debug_assert!(REQUIRED_FIELDS.iter().all(|k| fields.contains_key(*k)));
    debug_assert!(!request.power || POWER_FIELDS.iter().all(|k| fields.contains_key(*k)));
    debug_assert!(!network || NETWORK_FIELDS.iter().all(|k| fields.contains_key(*k)));
    fields
}

/// The description as pretty JSON (4-space indent, as the official samples), the official
/// fields in the official order (division, submitter, status, … ; then power, network), any
/// others after them by name.
pub fn to_pretty_json(fields: &Map<String, Value>) -> String {
    let mut ordered: Vec<&str> = known_fields()
        .filter(|key| fields.contains_key(*key))
        .collect();
    ordered.extend(
        fields
            .keys()
            .map(String::as_str)
            .filter(|key| !known_fields().any(|known| known == *key)),
    );
    let mut out = String::from("{\n");
    for (i, key) in ordered.iter().enumerate() {
        let value = serde_json::to_string(&fields[*key]).expect("JSON values serialise");
        let key = serde_json::to_string(key).expect("strings serialise");
        let comma = if i + 1 < ordered.len() { "," } else { "" };
        out += &format!("    {key}: {value}{comma}\n");
    }
    out + "}\n"
}

/// A value the submitter must supply: the marker, then what to write.
fn fill_in(what: &str) -> Value {
    Value::String(format!("{FILL_IN}{what}"))
}

fn known_or(value: Option<String>, what: &str) -> Value {
    value.map_or_else(|| fill_in(what), Value::String)
}

fn names(fields: &mut Map<String, Value>, request: &DraftRequest, machine: &MachineFacts) {
    fields.insert("division".into(), json!(request.division.as_str()));
    fields.insert("submitter".into(), json!(request.submitter));
    fields.insert(
        "status".into(),
        known_or(
            request.status.clone(),
            "available, preview or rdi (research, development or internal)",
        ),
    );
    fields.insert(
        "system_name".into(),
        known_or(
            request.system_name.clone().or(machine.platform.clone()),
            "the hardware vendor's name for the system, e.g. Supermicro AS-8125GS-TNMR2",
        ),
    );
    fields.insert(
        "system_type".into(),
        known_or(
            request.system_type.clone(),
            "datacenter, edge or datacenter,edge: the category the results are submitted in",
        ),
    );
    fields.insert("system_type_detail".into(), json!("N/A"));
}

fn host(fields: &mut Map<String, Value>, machine: &MachineFacts) {
    let cpu = &machine.cpu;
    // One node: this machine. A multi-node system is the submitter's to describe.
    fields.insert("number_of_nodes".into(), json!(1));
    fields.insert(
        "host_processor_model_name".into(),
        known_or(
            cpu.model_name.clone(),
            "the host processor's model, e.g. AMD EPYC 9575F (see lscpu)",
        ),
    );
    fields.insert(
        "host_processors_per_node".into(),
        cpu.sockets.map_or_else(
            || fill_in("the number of host processors (sockets)"),
            |n| json!(n),
        ),
    );
    fields.insert(
        "host_processor_core_count".into(),
        cpu.cores_per_socket
            .map_or_else(|| fill_in("the cores of one host processor"), |n| json!(n)),
    );
    fields.insert(
        "host_processor_frequency".into(),
        json!(cpu
            .max_mhz
            .map(|mhz| format!("{mhz} MHz"))
            .unwrap_or_default()),
    );
    let caches: Vec<String> = cpu
        .caches
        .iter()
        .map(|cache| {
            let kind = match cache.kind.as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            format!("L{}{kind} {}", cache.level, units::cache_size(&cache.size))
        })
        .collect();
    fields.insert("host_processor_caches".into(), json!(caches.join(", ")));
    fields.insert("host_processor_interconnect".into(), json!(""));
    fields.insert(
        "host_memory_capacity".into(),
        known_or(
            machine.memory_bytes.map(units::installed_memory),
            "the installed memory, e.g. 512 GB",
        ),
    );
    fields.insert(
        "host_memory_configuration".into(),
        fill_in("the memory modules, e.g. 16x 32GB DDR5-4800 (see dmidecode -t memory)"),
    );
    let (capacity, kind) = storage(machine);
    fields.insert("host_storage_capacity".into(), capacity);
    fields.insert("host_storage_type".into(), kind);
    let seen = seen_interfaces(&machine.network);
    fields.insert(
        "host_networking".into(),
        fill_in(&format!(
            "the host's networking, e.g. 2x 100 Gb/s Ethernet, or N/A when the benchmark does not use it{seen}"
        )),
    );
    fields.insert(
        "host_network_card_count".into(),
        fill_in(&format!(
            "the network cards of one node, e.g. 2, or N/A{seen}"
        )),
    );
    fields.insert(
        "host_networking_topology".into(),
        fill_in("how the nodes are connected, or N/A for a single node"),
    );
    fields.insert(
        "cooling".into(),
        fill_in("how the system is cooled, e.g. air-cooled or liquid-cooled"),
    );
    fields.insert("hw_notes".into(), json!(""));
}

/// Capacity and type: `275 GB`, or `2x 3.84 TB, 480 GB` for several disks.
fn storage(machine: &MachineFacts) -> (Value, Value) {
    if machine.disks.is_empty() {
        return (
            fill_in("the storage capacity, e.g. 2x 3.84 TB"),
            fill_in("the storage type, e.g. NVMe SSD"),
        );
    }
    let mut sizes: Vec<(String, usize)> = Vec::new();
    for disk in &machine.disks {
        let size = units::disk_size(disk.bytes);
        match sizes.iter_mut().find(|(s, _)| *s == size) {
            Some((_, count)) => *count += 1,
            None => sizes.push((size, 1)),
        }
    }
    let capacity: Vec<String> = sizes
        .iter()
        .map(|(size, count)| match count {
            1 => size.clone(),
            n => format!("{n}x {size}"),
        })
        .collect();
    let mut kinds: Vec<_> = machine.disks.iter().map(|d| d.kind).collect();
    kinds.sort();
    kinds.dedup();
    let kinds: Vec<&str> = kinds.iter().map(|k| k.describe()).collect();
    (json!(capacity.join(", ")), json!(kinds.join(", ")))
}

fn software_stack(
    fields: &mut Map<String, Value>,
    machine: &MachineFacts,
    software: &SoftwareStack,
) {
    let backend = software.backend.as_ref();
    fields.insert(
        "framework".into(),
        known_or(
            backend.map(|b| b.framework()),
            "the inference framework and its version, e.g. ONNX Runtime 1.20.1 (or draft with --plugin or --benchmark)",
        ),
    );
    let operating_system = match (&machine.os, &machine.kernel) {
        (Some(os), Some(kernel)) => Some(format!("{os}, kernel {kernel}")),
        (Some(os), None) => Some(os.clone()),
        (None, Some(kernel)) => Some(format!("Linux {kernel}")),
        (None, None) => None,
    };
    fields.insert(
        "operating_system".into(),
        known_or(
            operating_system,
            "the operating system and version, e.g. Ubuntu 24.04 LTS",
        ),
    );
    let mut stack = vec![software.host.clone()];
    stack.extend(backend.map(|b| b.stack_entry()));
    if let Accelerators::Nvidia(inventory) = &machine.accelerators {
        stack.extend(
            inventory
                .driver_version
                .as_ref()
                .map(|v| format!("NVIDIA driver {v}")),
        );
        stack.extend(inventory.cuda_version.as_ref().map(|v| format!("CUDA {v}")));
    }
    fields.insert("other_software_stack".into(), json!(stack.join(", ")));
    fields.insert(
        "sw_notes".into(),
        json!(backend.map(|b| b.notes()).unwrap_or_default()),
    );
}

/// ` (seen here: eth0 25000 Mb/s, eth1)`, or nothing.
fn seen_interfaces(interfaces: &[NetInterface]) -> String {
    if interfaces.is_empty() {
        return String::new();
    }
    let seen: Vec<String> = interfaces
        .iter()
        .map(|i| match i.speed_mbit {
            Some(speed) => format!("{} {speed} Mb/s", i.name),
            None => i.name.clone(),
        })
        .collect();
    format!(" (seen here: {})", seen.join(", "))
}
