//! Sending requests and handing answers back. issue_query queues each request, as pointers
//! to the host's sample memory (valid until each sample completes), on the node the balancer
//! picks; `concurrency` sender tasks per node on the plugin's tokio runtime take them in
//! turn, copy the samples into a request, send it and complete its samples from whichever
//! runtime thread receives the answer. So a large Offline query costs a few words per
//! request until it is sent. A request that fails or times out fails the run at once, naming
//! its endpoint; its samples are never completed. An OpenAI request is one sample's
//! generation: its first token is reported as it arrives, its answer with the token count.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use bytes::BytesMut;
use mlperf_plugin_api::sdk::{
    Completer, FailureKind, Level, Logger, PluginError, Response, Sample,
};
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, watch};

use crate::config::{Balance, PromptFormat};
use crate::prompt_layout::PromptLayout;
use crate::protocol::openai::{Generate, Generated, Piece, Prompt};
use crate::protocol::{Client, Failure, Infer, Target};
use crate::sessions::Sessions;
use mlperf_tokenizer::Tokenizer;

/// One server.
pub(crate) struct Node {
    pub name: String,
    pub client: Client,
    /// Requests handed to this node and not yet finished (queued or sent).
    outstanding: AtomicUsize,
    /// Requests answered, for the closing log line.
    answered: AtomicU64,
}

impl Node {
    pub(crate) fn new(name: String, client: Client) -> Node {
        Node {
            name,
            client,
            outstanding: AtomicUsize::new(0),
            answered: AtomicU64::new(0),
        }
    }
}

/// One request's samples: ids and where their bytes are in the host's memory.
pub(crate) struct Work {
    samples: Vec<SampleRef>,
    shape: Vec<i64>,
}

struct SampleRef {
    id: u64,
    data: *const u8,
    length: usize,
}

// SAFETY: the pointers are into host sample memory, which the ABI keeps valid and unchanged
// until each sample is completed; only this request's sender reads them, before completing.
unsafe impl Send for SampleRef {}
// SAFETY: as above; the bytes are only read.
unsafe impl Sync for SampleRef {}

impl Work {
    pub(crate) fn new(samples: &[Sample<'_>], shape: Vec<i64>) -> Work {
        let samples = samples
            .iter()
            .map(|s| SampleRef {
                id: s.id(),
                data: s.data().as_ptr(),
                length: s.data().len(),
            })
            .collect();
        Work { samples, shape }
    }

    /// The request: the samples' bytes, one after the other.
    fn request(&self) -> Infer {
        let total = self.samples.iter().map(|s| s.length).sum();
        let mut data = BytesMut::with_capacity(total);
        for sample in &self.samples {
            // SAFETY: see SampleRef: the sample is not completed yet.
            data.extend_from_slice(unsafe {
                std::slice::from_raw_parts(sample.data, sample.length)
            });
        }
        Infer {
            shape: self.shape.clone(),
            data: data.freeze(),
        }
    }
}

pub(crate) struct Dispatcher {
    /// Taken in Drop to shut down.
    runtime: Option<Runtime>,
    queues: Vec<mpsc::UnboundedSender<Work>>,
    shared: Arc<Shared>,
}

/// Token ids as the accuracy log holds them: int32, little-endian.
fn token_bytes(ids: &[u32]) -> Vec<u8> {
    ids.iter()
        .flat_map(|&id| (id as i32).to_le_bytes())
        .collect()
}

/// How a generation request reads its sample.
#[derive(Clone, Copy)]
struct Request<'a> {
    format: PromptFormat,
    layout: &'a PromptLayout,
    tokenizer: Option<&'a Tokenizer>,
}

/// What each request does.
pub(crate) enum Job {
    /// KServe: one inference over the request's samples; each gets its row of the output.
    Infer(Target),
    /// OpenAI: one generation from the request's one sample, its prompt.
    Generate {
        settings: Generate,
        prompt: PromptFormat,
        /// Where each sample's prompt lies, and its own output length.
        layout: PromptLayout,
        /// Answers completed as token ids of their text, rather than the text (boxed: the
        /// tokenizer is large and other jobs do not carry one).
        tokenizer: Option<Box<Tokenizer>>,
    },
}

struct Shared {
    nodes: Vec<Node>,
    job: Job,
    timeout: Duration,
    balance: Balance,
    next: AtomicUsize,
    completer: Completer,
    logger: Logger,
    failure: OnceLock<String>,
    /// Conversations, where the samples are turns of them.
    sessions: Sessions,
    /// Set at destroy: senders stop without sending or completing.
    stop: watch::Sender<bool>,
    /// Sender tasks not yet ended, and the signal that the last one has.
    senders: Mutex<usize>,
    senders_done: Condvar,
}

/// How a request ended.
enum Ended {
    Answered(Answer),
    Failed(Failure),
    /// The run already failed, or the plugin is being destroyed: not sent.
    Dropped,
}

/// A request's answer: the output (all samples' rows), and for a generation its tokens.
struct Answer {
    output: Vec<u8>,
    n_tokens: Option<i64>,
}

pub(crate) struct Settings {
    pub job: Job,
    pub timeout: Duration,
    pub balance: Balance,
    /// Sender tasks (requests in flight) per node.
    pub concurrency: usize,
}

impl Dispatcher {
    pub(crate) fn start(
        runtime: Runtime,
        nodes: Vec<Node>,
        settings: Settings,
        completer: Completer,
        logger: Logger,
    ) -> Dispatcher {
        let shared = Arc::new(Shared {
            nodes,
            job: settings.job,
            timeout: settings.timeout,
            balance: settings.balance,
            next: AtomicUsize::new(0),
            completer,
            logger,
            failure: OnceLock::new(),
            sessions: Sessions::default(),
            stop: watch::Sender::new(false),
            senders: Mutex::new(0),
            senders_done: Condvar::new(),
        });
        let mut queues = Vec::with_capacity(shared.nodes.len());
        for node in 0..shared.nodes.len() {
            let (sender, receiver) = mpsc::unbounded_channel();
            let receiver = Arc::new(tokio::sync::Mutex::new(receiver));
            for _ in 0..settings.concurrency {
                let sender = SenderAlive::new(Arc::clone(&shared));
                runtime.spawn(send_loop(sender, node, Arc::clone(&receiver)));
            }
            queues.push(sender);
        }
        Dispatcher {
            runtime: Some(runtime),
            queues,
            shared,
        }
    }

    /// The first failure, as an error for issue_query and flush_queries to return.
    pub(crate) fn check(&self) -> Result<(), PluginError> {
        match self.shared.failure.get() {
            None => Ok(()),
            Some(message) => Err(PluginError::device(format!(
                "an earlier request failed and its samples were not completed: {message}"
            ))),
        }
    }

    /// Queues one request on the node the balancer picks.
    pub(crate) fn send(&self, work: Work) {
        let shared = &self.shared;
        let node = shared.pick();
        shared.nodes[node]
            .outstanding
            .fetch_add(1, Ordering::Relaxed);
        if self.queues[node].send(work).is_err() {
            // The senders are gone only while destroying.
            shared.nodes[node]
                .outstanding
                .fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Counts a sender task as alive from its spawning until its future is dropped, whether it
/// ended or the runtime dropped it.
struct SenderAlive(Arc<Shared>);

impl SenderAlive {
    fn new(shared: Arc<Shared>) -> SenderAlive {
        *shared.senders.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        SenderAlive(shared)
    }
}

impl Drop for SenderAlive {
    fn drop(&mut self) {
        let mut senders = self.0.senders.lock().unwrap_or_else(|p| p.into_inner());
        *senders -= 1;
        if *senders == 0 {
            self.0.senders_done.notify_all();
        }
    }
}

/// One of a node's senders: takes its requests one at a time until the plugin is destroyed.
async fn send_loop(
    alive: SenderAlive,
    node: usize,
    queue: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Work>>>,
) {
    let shared = &alive.0;
    let mut stop = shared.stop.subscribe();
    loop {
        let work = tokio::select! {
            biased;
            _ = stop.wait_for(|stopped| *stopped) => return,
            work = async { queue.lock().await.recv().await } => match work {
                Some(work) => work,
                None => return,
            },
        };
        let ended = tokio::select! {
            biased;
            _ = stop.wait_for(|stopped| *stopped) => Ended::Dropped,
            ended = shared.request(node, &work) => ended,
        };
        match ended {
            Ended::Answered(answer) => {
                shared.nodes[node].answered.fetch_add(1, Ordering::Relaxed);
                shared.complete(node, &work, &answer)
            }
            Ended::Failed(failure) => shared.fail(node, &work, &failure),
            Ended::Dropped => {}
        }
        shared.nodes[node]
            .outstanding
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Shared {
    fn pick(&self) -> usize {
        let count = self.nodes.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % count;
        match self.balance {
            Balance::RoundRobin => start,
            // Scanning from a rotating start spreads ties instead of piling on the first.
            Balance::LeastOutstanding => (0..count)
                .map(|step| (start + step) % count)
                .min_by_key(|&i| self.nodes[i].outstanding.load(Ordering::Relaxed))
                .unwrap_or(start),
        }
    }

    async fn request(&self, node: usize, work: &Work) -> Ended {
        if self.failure.get().is_some() {
            return Ended::Dropped;
        }
        let client = &self.nodes[node].client;
        let answer = async {
            match (&self.job, client) {
                (Job::Infer(target), _) => client
                    .infer(target, work.request())
                    .await
                    .map(|output| Answer {
                        output,
                        n_tokens: None,
                    })
                    .map_err(Failure::from),
                (
                    Job::Generate {
                        settings,
                        prompt,
                        layout,
                        tokenizer,
                    },
                    Client::OpenAi(client),
                ) => {
                    let request = Request {
                        format: *prompt,
                        layout,
                        tokenizer: tokenizer.as_deref(),
                    };
                    self.generate(client, settings, &request, work).await
                }
                (Job::Generate { .. }, _) => {
                    Err(Failure::from("not an OpenAI endpoint".to_string()))
                }
            }
        };
        let ended = tokio::time::timeout(self.timeout, answer).await;
        if !matches!(ended, Ok(Ok(_))) {
            self.end_failed_turn(work);
        }
        match ended {
            Ok(Ok(answer)) => Ended::Answered(answer),
            Ok(Err(failure)) => Ended::Failed(failure),
            Err(_) => Ended::Failed(Failure::of(
                FailureKind::Timeout,
                format!(
                    "no answer within {} ms (timeout_ms)",
                    self.timeout.as_millis()
                ),
            )),
        }
    }

    async fn generate(
        &self,
        client: &crate::protocol::openai::OpenAiClient,
        settings: &Generate,
        request: &Request<'_>,
        work: &Work,
    ) -> Result<Answer, Failure> {
        let Request {
            format,
            layout,
            tokenizer,
        } = *request;
        let [sample] = work.samples.as_slice() else {
            return Err(Failure::from(format!(
                "{} samples in one generation request",
                work.samples.len()
            )));
        };
        // SAFETY: see SampleRef: the sample is not completed yet.
        let bytes = unsafe { std::slice::from_raw_parts(sample.data, sample.length) };
        let mut prompt = read_prompt(format, layout.prompt(bytes))?;
        if let Prompt::Audio(audio) = &prompt {
            // Whole texts, logged as the reference SUT logs them: int64 label indices.
            let max_tokens = layout.max_tokens(bytes).unwrap_or(settings.max_tokens);
            let transcribed = client.transcribe(settings, audio, max_tokens).await?;
            let output = mlperf_whisper::labels::answer_labels(&transcribed.text)
                .into_iter()
                .flat_map(|label| i64::from(label).to_le_bytes())
                .collect();
            return Ok(Answer {
                output,
                n_tokens: transcribed.n_tokens,
            });
        }
        let max_tokens = layout.max_tokens(bytes).unwrap_or(settings.max_tokens);
        if let (Some((session, turn)), Prompt::Text(text)) = (layout.session(bytes), &prompt) {
            prompt = Prompt::Conversation {
                history: self.sessions.history(session, turn).await,
                text: text.clone(),
            };
        }
        let id = sample.id;
        let Some(tokenizer) = tokenizer else {
            let mut on_piece = |piece: Piece<'_>| match piece.first {
                true => self.completer.first_token(&[Response::new(id, piece.text)]),
                false => self.next_tokens(id, piece.tokens),
            };
            let Generated { text, n_tokens, .. } = client
                .generate(settings, &prompt, max_tokens, &mut on_piece)
                .await?;
            self.end_turn(layout, bytes, &prompt, &text);
            return Ok(Answer {
                output: text,
                n_tokens: Some(n_tokens),
            });
        };
        // In token ids: the server's own when it sends them, else those of the text. A first
        // token that fails to encode (cut inside a character) is left empty: the answer's own
        // encoding below reports the failure.
        let mut on_piece = |piece: Piece<'_>| {
            if !piece.first {
                return self.next_tokens(id, piece.tokens);
            }
            let ids = match piece.ids {
                Some(ids) => ids.to_vec(),
                None => std::str::from_utf8(piece.text)
                    .ok()
                    .and_then(|text| tokenizer.encode(text).ok())
                    .unwrap_or_default(),
            };
            self.completer
                .first_token(&[Response::new(id, &token_bytes(&ids))]);
        };
        let generated = client
            .generate(settings, &prompt, max_tokens, &mut on_piece)
            .await?;
        self.end_turn(layout, bytes, &prompt, &generated.text);
        let ids = match generated.token_ids {
            Some(ids) => ids,
            None => {
                let text = std::str::from_utf8(&generated.text).map_err(|e| {
                    format!("the answer is not UTF-8 text ({e}), so it has no token ids")
                })?;
                tokenizer.encode(text).map_err(|e| e.to_string())?
            }
        };
        Ok(Answer {
            output: token_bytes(&ids),
            n_tokens: Some(ids.len() as i64),
        })
    }

    /// A failed turn still ends, answered with nothing, so that its session goes on.
    fn end_failed_turn(&self, work: &Work) {
        let (
            Job::Generate {
                prompt: format,
                layout,
                ..
            },
            [sample],
        ) = (&self.job, work.samples.as_slice())
        else {
            return;
        };
        // SAFETY: see SampleRef: the sample is not completed yet.
        let bytes = unsafe { std::slice::from_raw_parts(sample.data, sample.length) };
        if let (Some((session, turn)), Ok(Prompt::Text(text))) = (
            layout.session(bytes),
            read_prompt(*format, layout.prompt(bytes)),
        ) {
            self.sessions.end(session, turn, text, String::new());
        }
    }

    /// Turns that waited for the turn before them (their wait is in their latency).
    pub(crate) fn turns_waited(&self) -> u64 {
        self.sessions.waited()
    }

    /// A turn of a conversation was answered with `answer` (or failed: empty): the session's
    /// next turn may go.
    fn end_turn(&self, layout: &PromptLayout, sample: &[u8], prompt: &Prompt, answer: &[u8]) {
        let (Some((session, turn)), Prompt::Conversation { text, .. }) =
            (layout.session(sample), prompt)
        else {
            return;
        };
        let answer = String::from_utf8_lossy(answer).into_owned();
        self.sessions.end(session, turn, text.clone(), answer);
    }

    /// `tokens` more tokens of sample `id`'s streamed answer arrived (the host times them).
    fn next_tokens(&self, id: u64, tokens: i64) {
        self.completer
            .next_tokens(&[Response::new(id, &[]).with_tokens(tokens)]);
    }

    fn complete(&self, node: usize, work: &Work, answer: &Answer) {
        let output = answer.output.as_slice();
        if let (Some(n_tokens), [sample]) = (answer.n_tokens, work.samples.as_slice()) {
            let response = Response::new(sample.id, output).with_tokens(n_tokens);
            self.completer.complete(&[response]);
            return;
        }
        let count = work.samples.len();
        if !output.len().is_multiple_of(count) {
            let message = format!(
                "the answer's output has {} bytes, which do not split into {count} samples",
                output.len(),
            );
            return self.fail(node, work, &Failure::from(message));
        }
        let row = output.len() / count;
        if let [sample] = work.samples.as_slice() {
            self.completer.complete(&[Response::new(sample.id, output)]);
            return;
        }
        let responses: Vec<Response<'_>> = work
            .samples
            .iter()
            .enumerate()
            .map(|(i, sample)| Response::new(sample.id, &output[i * row..(i + 1) * row]))
            .collect();
        self.completer.complete(&responses);
    }

    /// A request failed: its samples fail on their own where the host takes that (ABI 1.5: a
    /// sweep goes on, a LoadGen run ends), else the run fails and later requests are dropped.
    fn fail(&self, node: usize, work: &Work, failure: &Failure) {
        let text = format!(
            "endpoint {}: {} ({} sample(s) of this request not completed)",
            self.nodes[node].name,
            failure.message,
            work.samples.len()
        );
        if self.completer.can_fail_samples() {
            for sample in &work.samples {
                self.completer
                    .fail_sample(sample.id, failure.kind, failure.status, &text);
            }
            return;
        }
        if self.failure.set(text.clone()).is_ok() {
            self.completer.fail(&text);
        }
    }

    /// Waits until every sender task has ended, or `limit` passes; false if some have not.
    fn wait_senders_ended(&self, limit: Duration) -> bool {
        let senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
        let (_senders, result) = self
            .senders_done
            .wait_timeout_while(senders, limit, |alive| *alive > 0)
            .unwrap_or_else(|p| p.into_inner());
        !result.timed_out()
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        // Normally nothing is in flight here: the host waited for every completion. What is
        // left (a drained run) is dropped unsent, and no callback may follow destroy, so the
        // senders must be done before the runtime goes.
        let waited = self.shared.turns_waited();
        if waited > 0 {
            self.shared.logger.log(
                Level::Info,
                &format!(
                    "network plugin: {waited} conversation turn(s) waited for the turn before \
                     them (the wait is in their latency; run fewer in flight than sessions)"
                ),
            );
        }
        self.shared.stop.send_replace(true);
        self.queues.clear();
        if !self.shared.wait_senders_ended(Duration::from_secs(10)) {
            self.shared.logger.log(
                Level::Warn,
                "network plugin: requests still running 10 s after destroy; shutting down anyway",
            );
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
        for node in &self.shared.nodes {
            self.shared.logger.log(
                Level::Info,
                &format!(
                    "network plugin: endpoint {}: {} request(s) answered",
                    node.name,
                    node.answered.load(Ordering::Relaxed)
                ),
            );
        }
    }
}

/// A sample's prompt: UTF-8 text without its trailing NUL padding, or int32 token ids without
/// their trailing negative padding.
fn read_prompt(format: PromptFormat, bytes: &[u8]) -> Result<Prompt, String> {
    match format {
        PromptFormat::Text => {
            let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            let text = std::str::from_utf8(&bytes[..end]).map_err(|e| {
                format!("the sample's prompt is not UTF-8 text (prompt = \"text\"): {e}")
            })?;
            Ok(Prompt::Text(text.to_owned()))
        }
        PromptFormat::TokenIds => {
            if !bytes.len().is_multiple_of(4) {
                return Err(format!(
                    "the sample has {} bytes, not a whole number of int32 token ids \
                     (prompt = \"token_ids\")",
                    bytes.len()
                ));
            }
            let mut ids: Vec<i32> = bytes
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            while ids.last().is_some_and(|&id| id < 0) {
                ids.pop();
            }
            Ok(Prompt::TokenIds(ids))
        }
        PromptFormat::Audio => {
            if !bytes.len().is_multiple_of(4) {
                return Err(format!(
                    "the sample has {} bytes, not a whole number of float32 samples (prompt = \"audio\")",
                    bytes.len()
                ));
            }
            Ok(Prompt::Audio(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_lose_their_padding() {
        let text = read_prompt(PromptFormat::Text, b"Hi there\0\0\0").unwrap();
        assert_eq!(text, Prompt::Text("Hi there".into()));
        let ids: Vec<u8> = [5i32, 9, -1, -1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            read_prompt(PromptFormat::TokenIds, &ids).unwrap(),
            Prompt::TokenIds(vec![5, 9])
        );
        let error = read_prompt(PromptFormat::Text, b"\xff\0").unwrap_err();
        assert!(error.contains("not UTF-8"), "{error}");
        let error = read_prompt(PromptFormat::TokenIds, &[1, 2, 3]).unwrap_err();
        assert!(error.contains("3 bytes"), "{error}");
    }
}
