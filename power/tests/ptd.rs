//! The `ptd://` client against `mlperf-ptd-simulator`, through both phases of MLCommons'
//! procedure and with a fault injected at each protocol step. The simulator samples every
//! 50 ms and the client's settle waits are off, so the file runs in a few seconds.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime};

use mlperf_power::source::{self, Phase, PowerSource, Provenance, Scope};
use mlperf_power::{account, RunWindow, Trace};

const INTERVAL: Duration = Duration::from_millis(50);

/// A simulator child process, killed when dropped (also when a test fails).
struct Simulator {
    child: Child,
    port: u16,
    dir: PathBuf,
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Simulator {
    fn start(name: &str, options: &[&str]) -> Simulator {
        let dir = std::env::temp_dir().join(format!("mlperf-ptd-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_mlperf-ptd-simulator"))
            .args(["-p", "0", "--interval-ms", "50", "-l"])
            .arg(dir.join("samples.log"))
            .arg("--log-commands")
            .arg(dir.join("commands.log"))
            .args(options)
            // PTDaemon's <devtype> <devport>: the Dummy device (type 0) on no port.
            .args(["0", "none"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the simulator starts");
        let mut simulator = Simulator {
            child,
            port: 0,
            dir,
            stdout: Arc::default(),
        };
        let mut stdout = BufReader::new(simulator.child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        simulator.port = first
            .trim()
            .strip_prefix("listening on 127.0.0.1:")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("not the listening line: {first:?}"));
        // Read the rest as it comes, so the simulator never blocks on a full pipe.
        let lines = Arc::clone(&simulator.stdout);
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        simulator
    }

    fn spec(&self, options: &str) -> String {
        format!("ptd://127.0.0.1:{}?settle=0{options}", self.port)
    }

    fn open(&self) -> Box<dyn PowerSource> {
        source::open(&self.spec("")).unwrap()
    }

    /// The commands it received, in order.
    fn commands(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.join("commands.log")).unwrap_or_default();
        text.lines().map(str::to_owned).collect()
    }

    /// Its `-l` log lines with `mark`.
    fn logged_samples(&self, mark: &str) -> usize {
        let text = std::fs::read_to_string(self.dir.join("samples.log")).unwrap_or_default();
        let suffix = format!(",Mark,{mark}");
        text.lines().filter(|l| l.ends_with(&suffix)).count()
    }

    fn printed(&self, text: &str) -> bool {
        self.stdout.lock().unwrap().iter().any(|l| l.contains(text))
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a measurement that starts `margin` before a window of `length` and stops `margin`
/// after it, as the host does around a LoadGen run.
fn measure(meter: &mut dyn PowerSource, mark: &str, length: Duration) -> (Trace, RunWindow) {
    let margin = Duration::from_millis(120);
    meter.start(mark).unwrap();
    sleep(margin);
    let begin = SystemTime::now();
    sleep(length);
    let window = RunWindow {
        begin,
        end: SystemTime::now(),
    };
    sleep(margin);
    (meter.stop().unwrap(), window)
}

fn error_of<T>(result: Result<T, mlperf_power::SourceError>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn ranging_then_testing_against_the_simulator() {
    let simulator = Simulator::start("phases", &["--watts", "200", "--volts", "230"]);
    let mut meter = simulator.open();
    let info = meter.info();
    assert_eq!(info.scope, Scope::Wall);
    assert_eq!(info.provenance, Provenance::Simulated, "the Dummy device");
    assert!(info.identity.starts_with("Dummy,"), "{}", info.identity);
    assert_eq!(info.period, Duration::from_secs(1));
    assert!(meter.needs_ranging());

    meter.prepare(Phase::Ranging).unwrap();
    let (ranging, _) = measure(meter.as_mut(), "t_ranging", Duration::from_millis(300));
    assert!(ranging.samples.len() >= 5, "{}", ranging.samples.len());
    let amps = 200.0 / 230.0 / 0.95;
    for sample in &ranging.samples {
        assert_eq!(sample.volts, Some(230.0));
        assert!((sample.amps.unwrap() - amps).abs() < 1e-6, "{sample:?}");
    }
    let max_amps = ranging
        .samples
        .iter()
        .filter_map(|s| s.amps)
        .fold(0.0, f64::max);

    // Testing: the ranges are the ranging run's maxima, amps with 10 % headroom.
    meter.prepare(Phase::Testing).unwrap();
    let commands = simulator.commands();
    assert!(commands.contains(&"SR,V,230".to_owned()), "{commands:?}");
    let amps_range: f64 = commands
        .iter()
        .filter_map(|c| c.strip_prefix("SR,A,"))
        .rfind(|v| *v != "Auto")
        .and_then(|v| v.parse().ok())
        .expect("a testing SR,A");
    assert!(
        amps_range >= 1.1 * max_amps && amps_range - 1.1 * max_amps < 1e-5,
        "SR,A,{amps_range} for a maximum of {max_amps} A"
    );

    let (testing, window) = measure(meter.as_mut(), "t_testing", Duration::from_millis(700));
    meter.finish().unwrap();

    // Sampled at the simulator's interval, in time order.
    let times: Vec<SystemTime> = testing.samples.iter().map(|s| s.time).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    let span = times.last().unwrap().duration_since(times[0]).unwrap();
    let mean_gap = span / (times.len() as u32 - 1);
    assert!(
        mean_gap >= Duration::from_millis(45) && mean_gap <= Duration::from_millis(65),
        "{mean_gap:?} between samples"
    );
    // The checker's accounting gives the configured draw.
    let report = account(&testing, &window, INTERVAL);
    assert_eq!(report.mean_watts, Some(200.0), "{report:?}");
    assert_eq!(report.invalid_samples, 0);
    assert!(report.samples >= 9, "{report:?}");
    let energy = report.energy_joules.unwrap();
    assert!((energy - 200.0 * window.seconds()).abs() < 1e-9);

    // The meter's own statistics, as notes.
    let n = testing.samples.len();
    assert_eq!(
        testing.notes,
        [
            format!("PTDaemon Watts: avg 200.0 W, min 200.0 W, max 200.0 W, {n} samples, 0 errors"),
            format!("PTDaemon Uncertainty: not known ({n} of {n} samples unknown)"),
        ]
    );

    // Every sample logged reached the client, and the procedure went as MLCommons runs it.
    assert_eq!(simulator.logged_samples("t_ranging"), ranging.samples.len());
    assert_eq!(simulator.logged_samples("t_testing"), testing.samples.len());
    let amps_range = format!("SR,A,{amps_range}");
    let expected = [
        "Hello",
        "Identify",
        "RR",
        "SR,V,Auto",
        "SR,A,Auto",
        "Go,1000,0,t_ranging",
        "Stop",
        "RL,*,*",
        "RL",
        "Uncertainty",
        "Watts",
        "SR,V,230",
        amps_range.as_str(),
        "Go,1000,0,t_testing",
        "Stop",
        "RL,*,*",
        "RL",
        "Uncertainty",
        "Watts",
        // The initial ranges, put back.
        "SR,V,300",
        "SR,A,20",
    ];
    assert_eq!(simulator.commands(), expected);
    sleep(Duration::from_millis(50));
    assert!(simulator.printed("Go with mark 't_testing'") && simulator.printed("Completed test"));
}

#[test]
fn a_trace_file_sets_the_draw_sample_by_sample() {
    let dir = std::env::temp_dir().join(format!("mlperf-ptd-{}-trace-file", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace_file = dir.join("watts.txt");
    std::fs::write(&trace_file, "# watts\n100\n300\n").unwrap();
    let simulator = Simulator::start("trace", &["--trace", trace_file.to_str().unwrap()]);
    let mut meter = simulator.open();
    meter.prepare(Phase::Ranging).unwrap();
    let (trace, _) = measure(meter.as_mut(), "cycle", Duration::from_millis(200));
    meter.finish().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let watts: Vec<f64> = trace.samples.iter().map(|s| s.watts).collect();
    assert!(watts.len() >= 4, "{watts:?}");
    for (i, w) in watts.iter().enumerate() {
        assert_eq!(*w, [100.0, 300.0][i % 2], "{watts:?}");
    }
}

#[test]
fn invalid_and_nan_readings_are_left_out_of_the_mean() {
    let simulator = Simulator::start(
        "invalid",
        &["--fault", "invalid-samples=4", "--fault", "nan-samples=5"],
    );
    let mut meter = simulator.open();
    meter.prepare(Phase::Ranging).unwrap();
    let (trace, window) = measure(meter.as_mut(), "bad", Duration::from_millis(800));
    let invalid = trace.samples.iter().filter(|s| !s.is_valid()).count();
    assert!(trace.samples.iter().any(|s| s.watts == -1.0));
    assert!(trace.samples.iter().any(|s| s.watts.is_nan()));
    let report = account(&trace, &window, INTERVAL);
    assert_eq!(report.mean_watts, Some(200.0), "{report:?}");
    assert!(report.invalid_samples >= 4, "{report:?}");
    assert!(report.invalid_samples <= invalid);
    let errors = format!(", {} samples, {invalid} errors", trace.samples.len());
    assert!(
        trace.notes[0].starts_with("PTDaemon Watts: avg 200.0 W, min 200.0 W, max 200.0 W")
            && trace.notes[0].ends_with(&errors),
        "{:?}",
        trace.notes
    );
    // -1 and nan readings do not spoil the testing ranges either.
    meter.prepare(Phase::Testing).unwrap();
    assert!(simulator.commands().contains(&"SR,V,230".to_owned()));
    meter.finish().unwrap();
}

#[test]
fn a_meter_that_is_not_there_is_named() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let spec = format!("ptd://127.0.0.1:{port}?settle=0");
    let error = error_of(source::open(&spec));
    assert!(
        error.contains(&format!("cannot connect to PTDaemon at 127.0.0.1:{port}"))
            && error.to_lowercase().contains("refused"),
        "{error}"
    );
}

#[test]
fn a_daemon_refusing_hello_is_not_taken_for_ptdaemon() {
    let simulator = Simulator::start("hello", &["--fault", "refuse-hello"]);
    let error = error_of(source::open(&simulator.spec("")));
    assert!(
        error.contains("is not PTDaemon") && error.contains("`Hello`") && error.contains("Error:"),
        "{error}"
    );
}

#[test]
fn an_error_reply_to_set_range_fails_prepare_naming_command_and_reply() {
    let simulator = Simulator::start("sr", &["--fault", "error-reply=SR"]);
    let mut meter = simulator.open();
    let error = error_of(meter.prepare(Phase::Ranging));
    assert!(
        error.contains("`SR,V,Auto`")
            && error.contains("Error: Meter busy")
            && error.contains("Range V changed"),
        "{error}"
    );
}

#[test]
fn a_stalled_go_times_out_instead_of_hanging() {
    let simulator = Simulator::start("stall", &["--fault", "stall=Go"]);
    let mut meter = source::open(&simulator.spec("&timeout=0.5")).unwrap();
    meter.prepare(Phase::Ranging).unwrap();
    let asked = Instant::now();
    let error = error_of(meter.start("stalled"));
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert!(
        error.contains("no reply to `Go,1000,0,stalled` within 500ms"),
        "{error}"
    );
    // The connection is not trusted after a timeout: finish says the ranges stay changed.
    let error = error_of(meter.finish());
    assert!(
        error.contains("cannot put the initial ranges back"),
        "{error}"
    );
}

#[test]
fn a_meter_lost_during_the_run_fails_stop_clearly() {
    let simulator = Simulator::start("lost", &["--fault", "disconnect-after-go=3"]);
    let mut meter = simulator.open();
    meter.prepare(Phase::Ranging).unwrap();
    meter.start("lost").unwrap();
    sleep(Duration::from_millis(400));
    let error = error_of(meter.stop());
    assert!(
        error.contains(&format!(
            "PTDaemon at 127.0.0.1:{} went away during the run",
            simulator.port
        )),
        "{error}"
    );
    assert!(error_of(meter.finish()).contains("lost during a run"));
}

#[test]
fn testing_needs_a_ranging_run_and_the_next_client_is_served() {
    let simulator = Simulator::start("order", &[]);
    let mut meter = simulator.open();
    let error = error_of(meter.prepare(Phase::Testing));
    assert!(error.contains("needs a ranging run first"), "{error}");
    assert!(error_of(meter.stop()).contains("without a start"));
    meter.finish().unwrap();
    drop(meter);
    // One client at a time, then the next.
    let mut again = simulator.open();
    again.finish().unwrap();
    assert_eq!(
        simulator.commands(),
        ["Hello", "Identify", "RR", "Hello", "Identify", "RR"]
    );
}

#[test]
fn the_simulator_answers_as_ptdaemon_does() {
    let simulator = Simulator::start("replies", &[]);
    let mut client = RawClient::connect(simulator.port);
    for (command, reply) in [
        ("Hello", "Hello, PTDaemon here!"),
        ("Stop", "Error: no measurement to stop"),
        ("RL,*,*", "Invalid number of parameters"),
        ("RL", "Last 0 samples"),
        ("RR,0", "Ranges,0,20,0,300"),
        ("RR,2", "Invalid channel"),
        ("SR,V,-5", "Error in parameter"),
        ("SR,X,5", "Error in parameter"),
        ("SR,A,Auto", "Range A changed"),
        ("RR", "Ranges,1,20,0,300"),
        ("Go,abc,0", "Error in parameter"),
        ("Go", "Invalid number of parameters"),
        ("Frobnicate", "Unknown command"),
        ("Watts", "Watts,-1.000000,-1.000000,-1.000000,0,0,0"),
    ] {
        assert_eq!(client.ask(command), reply, "{command}");
    }
    assert!(client.ask("Identify").contains("version=0.0.0-sim"));
    assert!(client
        .ask("Go,1000,0,direct")
        .starts_with("Starting untimed measurement"));
    assert_eq!(client.ask("SR,V,Auto"), "Error: Meter busy");
    sleep(Duration::from_millis(180));
    assert_eq!(client.ask("Stop"), "Stopping untimed measurement");
    // RL,<n> hands over n samples and leaves the rest for the next RL.
    assert_eq!(client.ask("RL,1"), "Last 1 samples");
    let first = client.ask("Watts");
    assert!(
        first.starts_with("Time,") && first.ends_with(",PF,0.950000"),
        "{first:?}"
    );
    let watts = client.read();
    let rest = client.unread_samples();
    assert!(rest >= 2, "{rest}");
    let lines: Vec<String> = (0..rest).map(|_| client.read()).collect();
    assert!(lines.iter().all(|l| l.starts_with("Time,")));
    assert_eq!(
        watts,
        format!("Watts,200.000000,200.000000,200.000000,{0},0,{0}", rest + 1)
    );
    assert_eq!(
        client.ask("Uncertainty,*"),
        format!(
            "Uncertainty,-1.000000,-1.000000,-1.000000,{0},0,0,{0}",
            rest + 1
        )
    );
}

/// The simulator spoken to directly, line by line.
struct RawClient {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl RawClient {
    fn connect(port: u16) -> RawClient {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        RawClient {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    /// Sends `command` with a bare `\n` (accepted as well as `\r\n`) and reads a line.
    fn ask(&mut self, command: &str) -> String {
        self.writer
            .write_all(format!("{command}\n").as_bytes())
            .unwrap();
        self.read()
    }

    /// `RL`: how many unread samples follow (`Last N samples`).
    fn unread_samples(&mut self) -> usize {
        self.ask("RL")
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    }

    fn read(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        assert!(line.ends_with("\r\n"), "{line:?}");
        line.trim_end().to_owned()
    }
}

/// power-dev's server starts PTDaemon as `ptd -l LOG -p PORT [-b N] [-c CH] [dcFlag]
/// [interfaceFlag] DEVTYPE DEVPORT` with TZ=UTC added to its own environment, and keeps what
/// the daemon prints (stdout and stderr) as ptd_logs.txt: the simulator takes every such
/// argument, its load from the environment, and prints its start and stop lines at once.
#[test]
fn started_as_the_power_server_starts_ptdaemon() {
    let dir = std::env::temp_dir().join(format!("mlperf-ptd-{}-server-argv", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let load = dir.join("load.txt");
    std::fs::write(&load, "150\n250\n").unwrap();
    let log = dir.join("ptd_logfile_1.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mlperf-ptd-simulator"))
        .arg("-l")
        .arg(&log)
        .args(["-p", "0", "-b", "0", "-c", "1", "-D", "-g", "8", "COM1"])
        .env("TZ", "UTC")
        .env("MLPERF_PTD_SIMULATOR_LOAD", &load)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the simulator starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("listening on 127.0.0.1:")
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("not the listening line: {line:?}"));
    let mut client = RawClient::connect(port);
    assert_eq!(client.ask("Hello"), "Hello, PTDaemon here!");
    assert!(client
        .ask("Go,1000,0,session_ranging")
        .starts_with("Starting untimed measurement"));
    // The Go line is printed (and flushed) while the measurement runs, as PTDaemon's is.
    let mut printed = String::new();
    while !printed.contains("Go with mark 'session_ranging'") {
        printed.clear();
        stdout.read_line(&mut printed).unwrap();
        assert!(!printed.is_empty(), "the simulator's output ended");
    }
    sleep(Duration::from_millis(2300));
    assert_eq!(client.ask("Stop"), "Stopping untimed measurement");
    let count = client.unread_samples();
    assert!(count >= 2, "{count}");
    // The samples follow the load profile the environment named, from its first value.
    let watts: Vec<String> = (0..count)
        .map(|_| client.read().split(',').nth(3).unwrap().to_owned())
        .collect();
    assert_eq!(watts[..2], ["150.000000", "250.000000"], "{watts:?}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
