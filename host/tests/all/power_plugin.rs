//! Power meters through the plugin ABI (1.1): the null plugin's simulated meter (behind its
//! second entry, `mlperf_power_plugin_entry`) traced end to end, failing, panicking and stalled
//! reads, the C example's meter, and tiny C plugins compiled here against the real header: a
//! plain C meter, a SUT that is no meter, a power plugin of ABI 1.0 (refused) and a SUT plugin
//! of ABI 1.0 (still loads).

use crate::support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mlperf_host::plugin::power::{open_power_plugin, parse_plugin_power_spec, STOP_GRACE};
use mlperf_host::plugin::{Plugin, PluginSut};
use mlperf_power::{PowerSource, Provenance, Scope, SourceError, Trace};
use support::{compile_c_plugin, TempDir};

/// The built null plugin, refusing a stale one built before it had a meter.
fn null_plugin() -> PathBuf {
    let path = support::null_plugin();
    let bytes = std::fs::read(&path).unwrap();
    let needle = b"mlperf_power_plugin_entry";
    assert!(
        bytes.windows(needle.len()).any(|w| w == needle),
        "{} predates the null meter: rebuild it (cargo build -p mlperf-plugin-null)",
        path.display()
    );
    path
}

fn open(config: &str) -> Box<dyn PowerSource> {
    let path = null_plugin();
    open_power_plugin("plugin:null", path.to_str().unwrap(), config)
        .unwrap_or_else(|e| panic!("the null meter was refused: {e}"))
}

fn refusal(result: Result<Box<dyn PowerSource>, SourceError>) -> String {
    match result {
        Ok(source) => panic!("accepted: {:?}", source.info()),
        Err(error) => error.to_string(),
    }
}

/// Runs the meter for `window`, returning what stop says.
fn measure(source: &mut dyn PowerSource, window: Duration) -> Result<Trace, SourceError> {
    source.start("test").unwrap();
    std::thread::sleep(window);
    source.stop()
}

fn seconds_between(a: std::time::SystemTime, b: std::time::SystemTime) -> f64 {
    b.duration_since(a).unwrap().as_secs_f64()
}

#[test]
fn the_null_meter_traces_its_configured_draw_with_energy() {
    let mut source = open("watts = 120.0\nperiod_ms = 10");
    let info = source.info();
    assert_eq!(info.name, "plugin:null");
    assert_eq!(info.provenance, Provenance::Simulated);
    match &info.scope {
        Scope::Component(what) => assert!(what.contains("simulated draw of 120 W"), "{what}"),
        Scope::Wall => panic!("the null meter is a component unless told otherwise"),
    }
    assert_eq!(info.period, Duration::from_millis(10));
    for part in [
        "null",
        "power plugin, simulated",
        "libmlperf_plugin_null.so",
        "sha256",
    ] {
        assert!(info.identity.contains(part), "{part}: {}", info.identity);
    }

    // Twice, as a ranging and a testing run would.
    for _ in 0..2 {
        let trace = measure(source.as_mut(), Duration::from_millis(400)).unwrap();
        let samples = &trace.samples;
        // About 40 readings; a loaded 2-core machine may delay some.
        assert!(samples.len() >= 10, "{} samples", samples.len());
        assert!(samples.iter().all(|s| s.watts == 120.0), "{samples:?}");
        assert!(samples
            .iter()
            .all(|s| s.volts.is_none() && s.amps.is_none()));
        assert!(samples.windows(2).all(|w| w[0].time <= w[1].time));
        // Spacing: the median gap is the period (the host polls at it).
        let mut gaps: Vec<f64> = samples
            .windows(2)
            .map(|w| seconds_between(w[0].time, w[1].time))
            .collect();
        gaps.sort_by(f64::total_cmp);
        let median = gaps[gaps.len() / 2];
        assert!((0.005..0.030).contains(&median), "median gap {median} s");
        // The counter: one reading per sample, rising at 120 J/s.
        assert_eq!(trace.energy.len(), samples.len());
        assert!(trace.energy.windows(2).all(|w| w[0].1 <= w[1].1));
        let (first, last) = (trace.energy[0], *trace.energy.last().unwrap());
        let rate = (last.1 - first.1) / seconds_between(first.0, last.0);
        assert!(
            (rate - 120.0).abs() < 120.0 * 0.05,
            "{rate} W from the counter"
        );
    }
}

#[test]
fn the_spec_carries_the_meter_config() {
    let (target, config) =
        parse_plugin_power_spec("plugin:null?watts=90.5&period_ms=5&wall&energy_counter=false");
    assert_eq!(target, "null");
    assert_eq!(
        config,
        "watts = 90.5\nperiod_ms = 5\nwall = true\nenergy_counter = false\n"
    );
    // Found by name, beside the executable, as SUT plugins are.
    let mut source = open_power_plugin("plugin:null?…", &target, &config).unwrap();
    let info = source.info();
    assert_eq!(info.scope, Scope::Wall);
    assert_eq!(info.provenance, Provenance::Simulated);
    let trace = measure(source.as_mut(), Duration::from_millis(100)).unwrap();
    assert!(trace.samples.iter().all(|s| s.watts == 90.5));
    assert!(trace.energy.is_empty(), "no counter offered");

    let error = refusal(open_power_plugin("plugin:null", "null", "watts = \"many\""));
    for part in [
        "plugin:null",
        "libmlperf_plugin_null.so",
        "create failed",
        "invalid config",
        "watts",
    ] {
        assert!(error.contains(part), "{part}: {error}");
    }
}

#[test]
fn the_c_examples_meter_is_read_through_its_second_entry() {
    let example_c = support::plugin_library("libmlperf_example_c.so");
    let mut source = open_power_plugin(
        "plugin:example-c",
        example_c.to_str().unwrap(),
        "watts = 60\ndevice = \"npu0\"",
    )
    .unwrap();
    let info = source.info();
    assert_eq!(
        info.scope,
        Scope::Component("npu0 board power (simulated)".into())
    );
    assert_eq!(info.provenance, Provenance::Simulated);
    assert_eq!(info.period, Duration::from_millis(100));
    let trace = measure(source.as_mut(), Duration::from_millis(250)).unwrap();
    assert!(trace.samples.len() >= 2, "{:?}", trace.samples);
    assert!(trace.samples.iter().all(|s| s.watts == 60.0));
    assert_eq!(trace.energy.len(), trace.samples.len());
    // Its first entry is still the SUT.
    let plugin = Plugin::open(&example_c).unwrap();
    assert_eq!(plugin.info.kind, "sut");
    // The null plugin too.
    let plugin = Plugin::open(&null_plugin()).unwrap();
    assert_eq!(plugin.info.kind, "sut");
    PluginSut::create(&plugin, "", None).unwrap();
}

#[test]
fn a_failing_or_panicking_read_fails_the_measurement_with_the_plugins_message() {
    let cases = [
        (
            "fail_after_reads = 3",
            [
                "read_power failed (error 6, device)",
                "fail_after_reads = 3 reached",
                "after 3 reading(s)",
            ],
        ),
        (
            "panic_after_reads = 2",
            [
                "read_power failed (error 8, panic)",
                "panic_after_reads = 2 reached",
                "after 2 reading(s)",
            ],
        ),
    ];
    for (fault, expected) in cases {
        let mut source = open(&format!("period_ms = 5\n{fault}"));
        let error = measure(source.as_mut(), Duration::from_millis(100))
            .map(|trace| trace.samples.len())
            .unwrap_err()
            .to_string();
        assert!(error.contains("plugin:null"), "{error}");
        assert!(error.contains("libmlperf_plugin_null.so"), "{error}");
        for part in expected {
            assert!(error.contains(part), "{fault}: {part}: {error}");
        }
    }
    // A panicked meter refuses further reads rather than go on half-updated.
    let mut source = open("period_ms = 5\npanic_after_reads = 0");
    assert!(measure(source.as_mut(), Duration::from_millis(20)).is_err());
    let error = measure(source.as_mut(), Duration::from_millis(20))
        .unwrap_err()
        .to_string();
    assert!(error.contains("panicked in an earlier call"), "{error}");
}

#[test]
fn a_stalled_read_does_not_hang_stop() {
    let mut source = open("period_ms = 10\nstall_after_reads = 1\nstall_ms = 60000");
    source.start("test").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let asked = Instant::now();
    let error = source.stop().unwrap_err().to_string();
    let waited = asked.elapsed();
    assert!(waited >= STOP_GRACE, "{waited:?}");
    assert!(waited < STOP_GRACE + Duration::from_secs(3), "{waited:?}");
    assert!(
        error.contains("read_power did not return within 5.0 s"),
        "{error}"
    );
    // The thread still inside the plugin owns the instance; no second one may call it.
    let error = source.start("again").unwrap_err().to_string();
    assert!(error.contains("never returned"), "{error}");
}

// ---- C plugins ------------------------------------------------------------------------------

/// A plain C power meter: 42 W at 12 V and 3.5 A, except the second reading, which has no
/// watts; no energy counter. `tweak` (C statements on `api`) changes one thing.
pub(crate) fn c_meter(tweak: &str) -> String {
    format!(
        r#"#include <math.h>
#include "mlperf_plugin.h"
static int reads;
static mlperf_error *create(const mlperf_host_api *h, const char *c, size_t n, void **i) {{
    (void)h; (void)c; (void)n; reads = 0; *i = &reads; return 0; }}
static void destroy(void *i) {{ (void)i; }}
static mlperf_error *issue(void *i, const mlperf_sample *s, size_t n) {{ (void)i; (void)s; (void)n; return 0; }}
static mlperf_error *flush(void *i) {{ (void)i; return 0; }}
static mlperf_error *info(void *i, mlperf_power_info *info) {{
    (void)i;
    info->scope = MLPERF_POWER_SCOPE_COMPONENT;
    info->flags = 0;
    info->description = "C test meter";
    info->period_ns = 5000000;
    return 0;
}}
static mlperf_error *read_power(void *i, mlperf_power_reading *r) {{
    int n = (*(int *)i)++;
    r->watts = n == 1 ? NAN : 42.0;
    r->volts = 12.0;
    r->amps = 3.5;
    return 0;
}}
static mlperf_plugin_api api;
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t major, uint32_t minor) {{
    (void)minor;
    api.struct_size = sizeof api;
    api.abi_major = MLPERF_PLUGIN_ABI_MAJOR;
    api.abi_minor = MLPERF_PLUGIN_ABI_MINOR;
    api.kind = MLPERF_PLUGIN_KIND_POWER;
    api.name = "cmeter";
    api.version = "0";
    api.create = create;
    api.destroy = destroy;
    api.power_info = info;
    api.read_power = read_power;
    (void)issue; (void)flush;
    if (major != MLPERF_PLUGIN_ABI_MAJOR) return 0;
    {tweak}
    return &api;
}}
"#
    )
}

/// Makes the C meter's table a SUT's.
const SUT: &str = "api.kind = MLPERF_PLUGIN_KIND_SUT; api.issue_query = issue; \
                   api.flush_queries = flush; api.power_info = 0; api.read_power = 0;";

/// What a 1.0 plugin's table is: minor 0, and it ends before the power functions.
const ABI_1_0: &str =
    "api.abi_minor = 0; api.struct_size = offsetof(mlperf_plugin_api, power_info);";

#[test]
fn c_meters_and_plugins_of_abi_1_0() {
    let dir = TempDir::new();

    let meter = compile_c_plugin(dir.path(), "cmeter", &c_meter(""));
    let mut source = open_power_plugin("plugin:cmeter", meter.to_str().unwrap(), "").unwrap();
    let info = source.info();
    assert_eq!(info.scope, Scope::Component("C test meter".into()));
    assert_eq!(info.provenance, Provenance::OnHost);
    assert_eq!(info.period, Duration::from_millis(5));
    let trace = measure(source.as_mut(), Duration::from_millis(60)).unwrap();
    assert!(trace.samples.len() >= 3, "{:?}", trace.samples);
    // The reading without watts is kept as PTDaemon marks a missing one.
    assert_eq!(trace.samples[1].watts, -1.0);
    assert!(!trace.samples[1].is_valid());
    let rest: Vec<_> = trace
        .samples
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .collect();
    assert!(rest
        .iter()
        .all(|(_, s)| s.watts == 42.0 && s.volts == Some(12.0) && s.amps == Some(3.5)));
    assert!(rest.iter().all(|(_, s)| s.power_factor.is_none()));
    assert!(trace.energy.is_empty());

    // A SUT is no meter.
    let sut = compile_c_plugin(dir.path(), "csut", &c_meter(SUT));
    let error = refusal(open_power_plugin("plugin:csut", sut.to_str().unwrap(), ""));
    for part in [
        "plugin:csut",
        "libcsut.so",
        "(\"cmeter\") is a sut plugin, not a power meter",
        "exports no `mlperf_power_plugin_entry`",
    ] {
        assert!(error.contains(part), "{part}: {error}");
    }
    let error = refusal(open_power_plugin("plugin:nowhere", "no-such-meter", ""));
    assert!(
        error.contains("plugin `no-such-meter` not found"),
        "{error}"
    );

    let cases = [
        (
            "old_meter",
            ABI_1_0,
            "a power plugin of ABI 1.0 whose table (104 bytes) has no power functions",
        ),
        (
            "no_read",
            "api.read_power = 0;",
            "does not provide the required function `read_power`",
        ),
        ("zero_period", "", "power_info gave a period of 0 ns"),
    ];
    for (name, tweak, expected) in cases {
        let mut text = c_meter(tweak);
        if name == "zero_period" {
            text = text.replace("info->period_ns = 5000000;", "info->period_ns = 0;");
        }
        let library = compile_c_plugin(dir.path(), name, &text);
        let error = refusal(open_power_plugin("plugin:c", library.to_str().unwrap(), ""));
        assert!(error.contains(expected), "{name}: {error}");
        assert!(error.contains(&format!("lib{name}.so")), "{name}: {error}");
    }

    // A SUT plugin built against ABI 1.0 still loads and creates an instance.
    let old_sut = compile_c_plugin(dir.path(), "old_sut", &c_meter(&format!("{SUT} {ABI_1_0}")));
    let plugin = Plugin::open(&old_sut).unwrap();
    assert_eq!(
        (plugin.info.abi.as_str(), plugin.info.kind.as_str()),
        ("1.0", "sut")
    );
    PluginSut::create(&plugin, "", None).unwrap();
    let error = refusal(open_power_plugin(
        "plugin:old_sut",
        old_sut.to_str().unwrap(),
        "",
    ));
    assert!(
        error.contains("is a sut plugin, not a power meter"),
        "{error}"
    );
}
