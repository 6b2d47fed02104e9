//! A PTDaemon simulator (to be written).

fn main() {
    eprintln!("mlperf-ptd-simulator: not built yet");
    std::process::exit(1);
}
