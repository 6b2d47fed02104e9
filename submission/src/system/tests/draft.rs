//! The draft: facts read from the fake tree land in their fields; what is unknown is left
//! to fill in.

use serde_json::{json, Map, Value};

use super::*;
use crate::system::fields::{NETWORK_FIELDS, POWER_FIELDS, REQUIRED_FIELDS};
use crate::Division;

#[test]
fn machine_facts_come_from_the_tree() {
    let tree = server();
    let facts = MachineFacts::read(&tree.0);
    assert_eq!(facts.problems, vec![]);
    assert_eq!(
        facts.cpu.model_name.as_deref(),
        Some("Intel(R) Xeon(R) Gold 6430")
    );
    assert_eq!(facts.cpu.sockets, Some(2));
    assert_eq!(facts.cpu.cores_per_socket, Some(4));
    assert_eq!(facts.cpu.threads, Some(16));
    assert_eq!(facts.cpu.max_mhz, Some(3400));
    assert_eq!(facts.memory_bytes, Some(131_698_000 * 1024));
    let disks: Vec<&str> = facts.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        disks,
        ["nvme0n1", "nvme1n1", "sda"],
        "loop and removable left out"
    );
    assert_eq!(facts.root_filesystem.as_deref(), Some("ext4"));
    assert_eq!(facts.os.as_deref(), Some("Ubuntu 24.04.1 LTS"));
    assert_eq!(facts.kernel.as_deref(), Some("6.8.0-45-generic"));
    assert_eq!(facts.platform.as_deref(), Some("Supermicro SYS-221H-TNR"));
    assert_eq!(
        facts.bios.as_deref(),
        Some("American Megatrends International, LLC. 2.1 (03/15/2024)")
    );
    assert_eq!(facts.network.len(), 1, "lo has no device");
    assert_eq!(facts.network[0].speed_mbit, Some(25000));
    assert_eq!(
        facts.accelerators,
        Accelerators::None,
        "a VGA console is no accelerator"
    );
}

#[test]
fn values_land_in_their_fields() {
    let tree = server();
    let fields = draft_system(&request(), &MachineFacts::read(&tree.0), &no_backend());
    let expected = [
        ("division", json!("closed")),
        ("submitter", json!("ExampleCo")),
        ("status", json!("available")),
        ("system_type", json!("datacenter")),
        ("system_name", json!("Supermicro SYS-221H-TNR")),
        ("number_of_nodes", json!(1)),
        (
            "host_processor_model_name",
            json!("Intel(R) Xeon(R) Gold 6430"),
        ),
        ("host_processors_per_node", json!(2)),
        ("host_processor_core_count", json!(4)),
        ("host_processor_frequency", json!("3400 MHz")),
        (
            "host_processor_caches",
            json!("L1d 48 KiB, L1i 32 KiB, L2 2 MiB, L3 60 MiB"),
        ),
        ("host_memory_capacity", json!("128 GB")),
        ("host_storage_capacity", json!("2x 3.84 TB, 480 GB")),
        ("host_storage_type", json!("NVMe SSD, SSD")),
        (
            "operating_system",
            json!("Ubuntu 24.04.1 LTS, kernel 6.8.0-45-generic"),
        ),
        ("accelerators_per_node", json!("0")),
        ("accelerator_model_name", json!("N/A")),
        ("accelerator_memory_capacity", json!("N/A")),
        ("accelerator_host_interconnect", json!("N/A")),
        (
            "other_software_stack",
            json!(format!("mlperf-host {}", env!("CARGO_PKG_VERSION"))),
        ),
    ];
    for (key, value) in expected {
        assert_eq!(fields[key], value, "{key}");
    }
    assert!(
        !fields.contains_key("is_network"),
        "a closed system says nothing of the network"
    );
    assert!(str_field(&fields, "host_networking").contains("seen here: eth0 25000 Mb/s"));
}

#[test]
fn what_the_machine_cannot_tell_is_left_to_fill_in() {
    let tree = server();
    let fields = draft_system(&request(), &MachineFacts::read(&tree.0), &no_backend());
    assert_eq!(
        unfilled(&fields),
        [
            "cooling",
            "framework",
            "host_memory_configuration",
            "host_network_card_count",
            "host_networking",
            "host_networking_topology",
        ]
    );
    assert!(str_field(&fields, "cooling").starts_with(FILL_IN));
}

#[test]
fn an_empty_tree_leaves_the_machine_to_fill_in() {
    let tree = Tree::new();
    let facts = MachineFacts::read(&tree.0);
    let unread: Vec<String> = facts
        .problems
        .iter()
        .map(|p| p.path.strip_prefix(&tree.0).unwrap().display().to_string())
        .collect();
    assert_eq!(
        unread,
        [
            "proc/cpuinfo",
            "proc/meminfo",
            "etc/os-release",
            "proc/sys/kernel/osrelease"
        ]
    );
    let mut request = request();
    request.status = None;
    request.system_type = None;
    let fields = draft_system(&request, &facts, &no_backend());
    let unfilled = unfilled(&fields);
    for key in [
        "status",
        "system_type",
        "system_name",
        "host_processor_model_name",
        "host_processors_per_node",
        "host_processor_core_count",
        "host_memory_capacity",
        "host_storage_capacity",
        "host_storage_type",
        "operating_system",
    ] {
        assert!(unfilled.contains(&key.to_string()), "{key}: {unfilled:?}");
    }
    // Facts nobody asks for stay empty, as the official samples leave them.
    assert_eq!(fields["host_processor_frequency"], json!(""));
    assert_eq!(fields["host_processor_caches"], json!(""));
}

#[test]
fn a_malformed_meminfo_is_a_problem_naming_the_file() {
    let tree = server();
    tree.file("proc/meminfo", "MemTotal: lots\n");
    let facts = MachineFacts::read(&tree.0);
    assert_eq!(facts.memory_bytes, None);
    assert_eq!(facts.problems.len(), 1, "{:?}", facts.problems);
    let problem = facts.problems[0].to_string();
    assert!(
        problem.contains("proc/meminfo") && problem.contains("MemTotal: lots"),
        "{problem}"
    );
}

#[test]
fn arm_topology_comes_from_sysfs() {
    let tree = server();
    tree.file(
        "proc/cpuinfo",
        "processor\t: 0\nCPU part\t: 0xd4f\n\nprocessor\t: 1\nCPU part\t: 0xd4f\n\n",
    );
    for cpu in 0..2 {
        tree.file(
            &format!("sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"),
            "0\n",
        )
        .file(
            &format!("sys/devices/system/cpu/cpu{cpu}/topology/core_id"),
            &format!("{cpu}\n"),
        );
    }
    let facts = MachineFacts::read(&tree.0);
    assert_eq!(facts.cpu.sockets, Some(1));
    assert_eq!(facts.cpu.cores_per_socket, Some(2));
    let fields = draft_system(&request(), &facts, &no_backend());
    assert!(unfilled(&fields).contains(&"host_processor_model_name".to_string()));
}

#[test]
fn every_required_power_and_network_field_is_drafted() {
    let tree = server();
    let mut request = request();
    request.power = true;
    request.network = true;
    request.division = Division::Network;
    let fields = draft_system(&request, &MachineFacts::read(&tree.0), &no_backend());
    for key in REQUIRED_FIELDS
        .iter()
        .chain(POWER_FIELDS)
        .chain(NETWORK_FIELDS)
    {
        assert!(fields.contains_key(*key), "{key} missing");
    }
    // And the nameplate power, which a YAML file may give instead.
    assert_eq!(
        fields.len(),
        REQUIRED_FIELDS.len() + POWER_FIELDS.len() + NETWORK_FIELDS.len() + 1
    );
    assert!(unfilled(&fields).contains(&"system_power_capacity".to_string()));
    assert_eq!(fields["is_network"], json!("true"));
    assert_eq!(fields["filesystem"], json!("ext4"));
    assert_eq!(
        fields["boot_firmware_version"],
        json!("American Megatrends International, LLC. 2.1 (03/15/2024)")
    );
    assert_eq!(
        fields["disk_drives"],
        json!("3.84 TB NVMe SSD (nvme0n1), 3.84 TB NVMe SSD (nvme1n1), 480 GB SSD (sda)")
    );
    let unfilled = unfilled(&fields);
    for key in [
        "power_supply_quantity_and_rating_watts",
        "network_type",
        "nic_sut",
    ] {
        assert!(unfilled.contains(&key.to_string()), "{key}");
    }
}

#[test]
fn nvidia_gpus_fill_the_accelerator_fields() {
    let tree = server();
    let facts = MachineFacts::read_with_nvml(&tree.0, Ok(eight_h100()));
    let fields = draft_system(&request(), &facts, &no_backend());
    assert_eq!(fields["accelerators_per_node"], json!(8));
    assert_eq!(
        fields["accelerator_model_name"],
        json!("NVIDIA H100 80GB HBM3")
    );
    assert_eq!(fields["accelerator_memory_capacity"], json!("80 GB"));
    assert_eq!(fields["accelerator_memory_configuration"], json!("HBM3"));
    assert_eq!(
        fields["accelerator_host_interconnect"],
        json!("PCIe Gen5 x16")
    );
    assert_eq!(fields["accelerator_frequency"], json!("1980 MHz"));
    assert!(
        str_field(&fields, "other_software_stack").ends_with("NVIDIA driver 550.54.15, CUDA 12.4")
    );
    assert!(unfilled(&fields).contains(&"accelerator_interconnect".to_string()));
}

#[test]
fn an_accelerator_nvml_does_not_describe_is_asked_for() {
    let tree = server();
    tree.file("sys/bus/pci/devices/0000:41:00.0/class", "0x120000\n")
        .file("sys/bus/pci/devices/0000:41:00.0/vendor", "0x1002\n");
    let facts = MachineFacts::read(&tree.0);
    let fields = draft_system(&request(), &facts, &no_backend());
    let count = str_field(&fields, "accelerators_per_node");
    assert!(
        count.starts_with(FILL_IN) && count.contains("0000:41:00.0"),
        "{count}"
    );
    assert!(str_field(&fields, "accelerator_model_name").starts_with(FILL_IN));
}

#[test]
fn the_backend_names_the_framework_and_the_stack() {
    let tree = server();
    let facts = MachineFacts::read(&tree.0);
    let onnx = draft_system(
        &request(),
        &facts,
        &SoftwareStack::with_backend(Some(onnxruntime_backend())),
    );
    assert_eq!(
        onnx["framework"],
        json!("ONNX Runtime 1.20.1 (cpu execution provider)")
    );
    assert_eq!(
        onnx["sw_notes"],
        json!("onnxruntime plugin: device cpu, provider cpu, precision fp32")
    );
    let null = draft_system(
        &request(),
        &facts,
        &SoftwareStack::with_backend(Some(null_backend())),
    );
    assert_eq!(null["framework"], json!("null plugin 0.1.0"));
    assert_eq!(
        null["other_software_stack"],
        json!(format!(
            "mlperf-host {}, mlperf-host plugin null 0.1.0",
            env!("CARGO_PKG_VERSION")
        )),
        "a driver_version of `none` is left out"
    );
    assert!(!unfilled(&null).contains(&"framework".to_string()));
}

#[test]
fn pretty_json_keeps_the_official_order() {
    let tree = server();
    let mut fields = draft_system(&request(), &MachineFacts::read(&tree.0), &no_backend());
    fields.insert("zz_extra".into(), json!(["a"]));
    let text = to_pretty_json(&fields);
    let parsed: Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed, fields);
    let keys: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|line| line.trim().strip_prefix('"')?.split('"').next())
        .collect();
    assert_eq!(
        keys[..4],
        ["division", "submitter", "status", "system_name"]
    );
    assert_eq!(keys.last(), Some(&"zz_extra"));
    assert!(text.starts_with("{\n    \"division\": \"closed\",\n"));
}
