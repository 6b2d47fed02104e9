//! The field lists and allowed values of the official submission checker
//! (`tools/submission/submission_checker/constants.py` and `checks/system_check.py`, newest
//! rules), and the whole-number fields its results table multiplies.

/// `SYSTEM_DESC_REQUIRED_FIELDS`: present in every system description, in the official order.
pub const REQUIRED_FIELDS: &[&str] = &[
    "division",
    "submitter",
    "status",
    "system_name",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_per_node",
    "host_processor_core_count",
    "host_memory_capacity",
    "host_storage_capacity",
    "host_storage_type",
    "accelerators_per_node",
    "accelerator_model_name",
    "accelerator_memory_capacity",
    "framework",
    "operating_system",
    "system_type",
    "other_software_stack",
    "host_processor_frequency",
    "host_processor_caches",
    "host_memory_configuration",
    "host_processor_interconnect",
    "host_networking",
    "host_networking_topology",
    "accelerator_frequency",
    "accelerator_host_interconnect",
    "accelerator_interconnect",
    "accelerator_interconnect_topology",
    "accelerator_memory_configuration",
    "accelerator_on-chip_memories",
    "cooling",
    "hw_notes",
    "sw_notes",
    "host_network_card_count",
    "system_type_detail",
];

/// `SYSTEM_DESC_MEANINGFUL_RESPONSE_REQUIRED_FIELDS`: required fields that may not be empty
/// (Python's falsiness: `""`, `0`, `false`, `null`, `[]`, `{}`).
pub const MEANINGFUL_FIELDS: &[&str] = &[
    "division",
    "submitter",
    "system_type",
    "status",
    "system_name",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_per_node",
    "host_processor_core_count",
    "host_memory_capacity",
    "host_memory_configuration",
    "host_storage_capacity",
    "host_storage_type",
    "host_networking",
    "host_network_card_count",
    "host_networking_topology",
    "accelerators_per_node",
    "accelerator_model_name",
    "accelerator_memory_capacity",
    "accelerator_host_interconnect",
    "accelerator_memory_configuration",
    "accelerator_interconnect",
    "cooling",
    "framework",
    "operating_system",
    "other_software_stack",
];

/// `SYSTEM_DESC_NUMERIC_RESPONSE_REQUIRED_FIELDS`: empty in the newest rules
/// (`network_speed_mbit` is commented out there).
pub const NUMERIC_FIELDS: &[&str] = &[];

/// Fields the official tools turn into whole numbers with Python's `int()`: the results
/// table multiplies `number_of_nodes` by `accelerators_per_node`, the final report reads
/// `host_processors_per_node`. A value `int()` refuses stops those tools.
pub const WHOLE_NUMBER_FIELDS: &[&str] = &[
    "number_of_nodes",
    "host_processors_per_node",
    "accelerators_per_node",
];

/// `SYSTEM_DESC_REQUIRED_FIELDS_POWER`: the fields of a submission with power results.
pub const POWER_FIELDS: &[&str] = &[
    "power_management",
    "filesystem",
    "boot_firmware_version",
    "management_firmware_version",
    "other_hardware",
    "number_of_type_nics_installed",
    "nics_enabled_firmware",
    "nics_enabled_os",
    "nics_enabled_connected",
    "network_speed_mbit",
    "power_supply_quantity_and_rating_watts",
    "power_supply_details",
    "disk_drives",
    "disk_controllers",
    "system_power_only",
];

/// `SYSTEM_DESC_IS_NETWORK_MODE`: `"true"` for a system under test reached over the network.
pub const IS_NETWORK: &str = "is_network";

/// `SYSTEM_DESC_REQUIRED_FIELDS_NETWORK_MODE`: required when `is_network` is set.
pub const NETWORK_FIELDS: &[&str] = &[
    IS_NETWORK,
    "network_type",
    "network_media",
    "network_rate",
    "nic_loadgen",
    "number_nic_loadgen",
    "net_software_stack_loadgen",
    "network_protocol",
    "number_connections",
    "nic_sut",
    "number_nic_sut",
    "net_software_stack_sut",
    "network_topology",
];

/// Read by the official checker's nameplate-power check when present (the design power in
/// watts); not required.
pub const OPTIONAL_FIELDS: &[&str] = &["system_power_capacity"];

/// `VALID_AVAILABILITIES`: the `status` values (compared lower-cased).
pub const VALID_AVAILABILITIES: &[&str] = &["available", "preview", "rdi"];

/// The `system_type` values `system_check.py` accepts (compared as written).
pub const VALID_SYSTEM_TYPES: &[&str] =
    &["datacenter", "edge", "datacenter,edge", "edge,datacenter"];

/// Every field the official rules name, in the official order: required, power, network,
/// optional. Used to lay the draft out and to spot unknown (misspelt) fields.
pub fn known_fields() -> impl Iterator<Item = &'static str> {
    REQUIRED_FIELDS
        .iter()
        .chain(POWER_FIELDS)
        .chain(NETWORK_FIELDS)
        .chain(OPTIONAL_FIELDS)
        .copied()
}
