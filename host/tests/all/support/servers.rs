//! Real servers for the network plugin's tests, started on 127.0.0.1 with free ports by
//! scripts/serve.sh: KServe v2 servers (from the venvs scripts/setup-servers.sh makes) serving
//! a benchmark's model.onnx through ONNX Runtime, and llama.cpp's OpenAI servers serving
//! smollm2: llama-cpp-python's (scripts/setup-llm.sh) and llama.cpp's own llama-server
//! (scripts/setup-llama-server.sh), which takes token-id prompts; killed (their whole process
//! group) when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{repo, TempDir};

/// How long a server may take to start: MLServer and Triton took 3-16 s on a quiet 2-core
/// machine, more under load.
const START_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    MlServer,
    Triton,
    /// llama.cpp's OpenAI-compatible server (llama-cpp-python), HTTP only.
    Llama,
    /// llama.cpp's own server (llama-server), HTTP only: prompts as token ids too.
    LlamaServer,
    /// A stand-in for a whisper server's transcription API (no speech model ships in a
    /// package): the librispeech fixture's clips answered with fixed texts, HTTP only.
    Transcriptions,
}

impl Kind {
    fn venv(self) -> &'static str {
        match self {
            Kind::MlServer => ".venv-mlserver",
            Kind::Triton => ".venv-triton",
            // Where the model's .gguf file is.
            Kind::Llama | Kind::LlamaServer => ".venv-llama",
            // Python's standard library only.
            Kind::Transcriptions => ".",
        }
    }

    /// Serves no model.onnx of data/.
    fn is_llm(self) -> bool {
        matches!(self, Kind::Llama | Kind::LlamaServer | Kind::Transcriptions)
    }

    fn setup(self) -> &'static str {
        match self {
            Kind::Llama => "scripts/setup-llm.sh",
            Kind::LlamaServer => "scripts/setup-llm.sh and scripts/setup-llama-server.sh",
            _ => "scripts/setup-servers.sh",
        }
    }
}

pub(crate) struct Server {
    pub kind: Kind,
    pub http_port: u16,
    pub grpc_port: u16,
    child: Child,
    log: PathBuf,
    dir: TempDir,
}

impl Server {
    /// Starts `kind` serving `data/<benchmark>/model.onnx` as model `benchmark`, and waits
    /// until it says the model is ready.
    pub(crate) fn start(kind: Kind, benchmark: &str) -> Server {
        if !kind.is_llm() {
            let model = repo().join("data").join(benchmark).join("model.onnx");
            assert!(model.is_file(), "{} is missing", model.display());
        }
        let dir = TempDir::new();
        let [http_port, grpc_port, metrics_port] = free_ports();
        let log = dir.path().join("server.log");
        let mut command = Command::new("bash");
        command
            .arg(repo().join("scripts/serve.sh"))
            .arg(match kind {
                Kind::MlServer => "mlserver",
                Kind::Triton => "triton",
                Kind::Llama => "llama",
                Kind::LlamaServer => "llama-server",
                Kind::Transcriptions => "transcriptions",
            })
            .arg(benchmark)
            .args([http_port, grpc_port, metrics_port].map(|p| p.to_string()))
            .env("SERVE_DIR", dir.path().join("mlserver"))
            .env("LLAMA_PROMPTS_DIR", dir.path().join("prompts"))
            .env("TRANSCRIPTION_LOG", dir.path().join("transcriptions.jsonl"));
        assert!(
            repo().join(kind.venv()).is_dir(),
            "{} is missing: run `bash {}` (scripts/test.sh does)",
            kind.venv(),
            kind.setup()
        );
        let output = std::fs::File::create(&log).unwrap();
        let child = command
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(output.try_clone().unwrap())
            .stderr(output)
            // Its own process group, so that kill() reaches the servers' child processes.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {kind:?}: {e}"));
        let mut server = Server {
            kind,
            http_port,
            grpc_port,
            child,
            log,
            dir,
        };
        server.wait_ready(benchmark);
        server
    }

    pub(crate) fn http(&self) -> String {
        format!("127.0.0.1:{}", self.http_port)
    }

    pub(crate) fn grpc(&self) -> String {
        format!("127.0.0.1:{}", self.grpc_port)
    }

    /// The token ids of every prompt llama-server was sent so far, in no order (its
    /// `--log-prompts-dir`, a file a millisecond: prompts that come in at once are one).
    pub(crate) fn prompts(&self) -> Vec<Vec<u32>> {
        assert_eq!(
            self.kind,
            Kind::LlamaServer,
            "only llama-server logs its prompts"
        );
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("prompts")) else {
            return Vec::new();
        };
        entries
            .map(|entry| {
                let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
                serde_json::from_str(&text).unwrap()
            })
            .collect()
    }

    /// The requests the transcription stand-in was sent so far, in order: each clip's sha256
    /// of its float32 samples and the form's text fields.
    pub(crate) fn transcriptions(&self) -> Vec<serde_json::Value> {
        assert_eq!(
            self.kind,
            Kind::Transcriptions,
            "only the stand-in logs its requests"
        );
        std::fs::read_to_string(self.dir.path().join("transcriptions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// What the server has printed so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_ready(&mut self, model: &str) {
        let started = Instant::now();
        let path = match self.kind {
            Kind::Llama | Kind::Transcriptions => "/v1/models".to_string(),
            // 503 until the model is loaded.
            Kind::LlamaServer => "/health".to_string(),
            _ => format!("/v2/models/{model}/ready"),
        };
        while started.elapsed() < START_LIMIT {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{:?} exited ({status}) before it was ready:\n{}",
                    self.kind,
                    self.log()
                );
            }
            if http_status(self.http_port, &path) == Some(200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!(
            "{:?} not ready within {START_LIMIT:?}:\n{}",
            self.kind,
            self.log()
        );
    }

    /// Sends `signal` (KILL, STOP, CONT) to the server's process group.
    pub(crate) fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args(["-s", signal, "--"])
            .arg(format!("-{}", self.child.id()))
            .stderr(Stdio::null())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {:?}", self.kind);
    }

    /// Kills the server and waits for it.
    pub(crate) fn kill(&mut self) {
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--"])
            .arg(format!("-{}", self.child.id()))
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Three ports free now (bound and released at once).
fn free_ports() -> [u16; 3] {
    let listeners: Vec<TcpListener> = (0..3)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// A port nothing listens on.
pub(crate) fn closed_port() -> u16 {
    free_ports()[0]
}

/// The status of `GET path` on 127.0.0.1:port, or None when there is no answer.
pub(crate) fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}
