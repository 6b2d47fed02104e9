//! Answering samples: each with its index as 4 little-endian bytes (so accuracy logs can be
//! compared with the official LoadGen's), after the configured latency.

use std::thread;
use std::time::{Duration, Instant};

use mlperf_plugin_api::sdk::{Completer, Response};

use crate::config::Config;

/// One issued sample and how often to complete it (1; 2 or 0 only when a fault is asked for).
#[derive(Debug, Clone, Copy)]
pub struct Item {
    pub id: u64,
    pub index: u64,
    pub copies: u8,
}

/// Answers `items`, issued at `issued`: first tokens at once in a token run, then completions
/// as their latency runs out, those due together in one call.
pub fn answer(config: &Config, items: &mut [Item], issued: Instant, completer: &Completer) {
    if config.tokens {
        send(items, None, |responses| completer.first_token(responses));
    }
    let tokens = config.tokens;
    if !config.has_latency() {
        send(items, Some(tokens), |responses| {
            completer.complete(responses)
        });
        return;
    }
    items.sort_by_key(|item| item.index);
    let mut rest = &items[..];
    while let Some(first) = rest.first() {
        let due = issued + config.latency(first.index);
        wait_until(due);
        let now = Instant::now();
        let ready = rest
            .iter()
            .take_while(|item| issued + config.latency(item.index) <= now)
            .count()
            .max(1);
        send(&rest[..ready], Some(tokens), |responses| {
            completer.complete(responses)
        });
        rest = &rest[ready..];
    }
}

/// Builds the responses for `items` and hands them to `deliver`. `tokens`: None for first
/// tokens (every item once), Some(token run?) for completions (each item `copies` times).
fn send(items: &[Item], tokens: Option<bool>, deliver: impl FnOnce(&[Response<'_>])) {
    let bytes: Vec<[u8; 4]> = items
        .iter()
        .map(|item| (item.index as u32).to_le_bytes())
        .collect();
    let mut responses = Vec::with_capacity(items.len());
    for (item, bytes) in items.iter().zip(&bytes) {
        let response = Response::new(item.id, bytes);
        match tokens {
            None => responses.push(response),
            Some(token_run) => {
                let response = if token_run {
                    response.with_tokens(2 + (item.index % 7) as i64)
                } else {
                    response
                };
                for _ in 0..item.copies {
                    responses.push(response);
                }
            }
        }
    }
    deliver(&responses);
}

/// Sleeps most of the way, then spins: thread::sleep alone overshoots by tens of
/// microseconds, too coarse for microsecond latencies.
fn wait_until(due: Instant) {
    const SPIN: Duration = Duration::from_micros(100);
    loop {
        let now = Instant::now();
        if now >= due {
            return;
        }
        let left = due - now;
        if left > SPIN {
            thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}
