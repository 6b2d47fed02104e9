//! The fields of a power submission and of a system under test reached over the network:
//! mostly the submitter's to fill in; the file system, firmware and disks from the machine.

use serde_json::{json, Map, Value};

use super::{fill_in, known_or, seen_interfaces};
use crate::system::fields::IS_NETWORK;
use crate::system::machine::MachineFacts;
use crate::system::units;

pub(super) fn power(fields: &mut Map<String, Value>, machine: &MachineFacts) {
    let seen = seen_interfaces(&machine.network);
    let disks: Vec<String> = machine
        .disks
        .iter()
        .map(|d| {
            format!(
                "{} {} ({})",
                units::disk_size(d.bytes),
                d.kind.describe(),
                d.name
            )
        })
        .collect();
    let entries: [(&str, Value); 16] = [
        (
            "power_management",
            fill_in("the power management settings, e.g. the BIOS power profile and OS governor"),
        ),
        (
            "filesystem",
            known_or(machine.root_filesystem.clone(), "the file system, e.g. ext4"),
        ),
        (
            "boot_firmware_version",
            known_or(machine.bios.clone(), "the BIOS or UEFI version"),
        ),
        (
            "management_firmware_version",
            fill_in("the BMC firmware's version"),
        ),
        (
            "other_hardware",
            fill_in("other hardware in the measured system, or N/A"),
        ),
        (
            "number_of_type_nics_installed",
            fill_in(&format!("the network cards installed, by type, e.g. 2x ConnectX-7{seen}")),
        ),
        (
            "nics_enabled_firmware",
            fill_in("the network ports enabled in the firmware"),
        ),
        (
            "nics_enabled_os",
            fill_in(&format!("the network ports enabled in the OS{seen}")),
        ),
        (
            "nics_enabled_connected",
            fill_in("the network ports connected"),
        ),
        (
            "network_speed_mbit",
            fill_in(&format!("the network speed in Mbit/s{seen}")),
        ),
        (
            "power_supply_quantity_and_rating_watts",
            fill_in("the power supplies and their rating, e.g. 2x 2000 W"),
        ),
        (
            "power_supply_details",
            fill_in("the power supplies' make and model"),
        ),
        (
            "disk_drives",
            known_or(
                (!disks.is_empty()).then(|| disks.join(", ")),
                "the disk drives, e.g. 2x 3.84 TB NVMe SSD",
            ),
        ),
        (
            "disk_controllers",
            fill_in("the disk controllers, e.g. NVMe, or the RAID controller's model"),
        ),
        (
            "system_power_only",
            fill_in("whether the measured power is the system's alone (no switches or external storage)"),
        ),
        (
            "system_power_capacity",
            fill_in("the nameplate power in watts (the capacities of the fewest PSUs the system needs, summed), or remove this field and fill in <system>_power.yaml beside this file"),
        ),
    ];
    for (key, value) in entries {
        fields.insert(key.into(), value);
    }
}

pub(super) fn network(fields: &mut Map<String, Value>, machine: &MachineFacts) {
    let seen = seen_interfaces(&machine.network);
    // A string, as the official checker reads it (`is_network.lower() == "true"`).
    fields.insert(IS_NETWORK.into(), json!("true"));
    let entries: [(&str, String); 12] = [
        (
            "network_type",
            "the network type, e.g. Ethernet or InfiniBand".into(),
        ),
        (
            "network_media",
            "the network media, e.g. fiber or copper (DAC)".into(),
        ),
        (
            "network_rate",
            "the network's line rate, e.g. 400 Gb/s".into(),
        ),
        ("nic_loadgen", "the LoadGen node's network card".into()),
        (
            "number_nic_loadgen",
            "how many network cards the LoadGen node uses".into(),
        ),
        (
            "net_software_stack_loadgen",
            "the LoadGen node's network software, e.g. the driver and its version".into(),
        ),
        (
            "network_protocol",
            "the protocol between LoadGen and the SUT, e.g. gRPC over TCP".into(),
        ),
        (
            "number_connections",
            "how many connections LoadGen opens to the SUT".into(),
        ),
        ("nic_sut", format!("the SUT's network card{seen}")),
        (
            "number_nic_sut",
            "how many network cards the SUT uses".into(),
        ),
        (
            "net_software_stack_sut",
            "the SUT's network software, e.g. the driver and its version".into(),
        ),
        (
            "network_topology",
            "how LoadGen and the SUT are connected, e.g. through one switch".into(),
        ),
    ];
    for (key, what) in entries {
        fields.insert(key.into(), fill_in(&what));
    }
}
