//! Multi-turn conversations: each turn of a session is sent with the session's history (the
//! user's earlier turns and the server's own answers to them), once the turn before it ended.
//! A turn that failed ends too, with an empty answer, so that the session goes on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::sync::Notify;

/// One exchange: what the user sent, and what the server answered.
pub(crate) type Exchange = (String, String);

#[derive(Default)]
pub(crate) struct Sessions {
    open: Mutex<HashMap<u64, Vec<Exchange>>>,
    ended: Notify,
    /// Turns that had to wait for the turn before them (their wait counts into their TTFT).
    waited: AtomicU64,
}

impl Sessions {
    /// The exchanges before turn `turn` of `session`, once turn `turn - 1` has ended. Turn 0
    /// begins the session afresh (a sweep that goes round its samples starts it again).
    pub(crate) async fn history(&self, session: u64, turn: u32) -> Vec<Exchange> {
        let turn = turn as usize;
        let mut counted = false;
        loop {
            // Made before the check: an end between the check and the wait still wakes it.
            let ended = self.ended.notified();
            {
                let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
                if turn == 0 {
                    open.insert(session, Vec::new());
                    return Vec::new();
                }
                if let Some(exchanges) = open.get(&session).filter(|e| e.len() >= turn) {
                    return exchanges[..turn].to_vec();
                }
            }
            if !counted {
                self.waited.fetch_add(1, Ordering::Relaxed);
                counted = true;
            }
            ended.await;
        }
    }

    /// Turn `turn` of `session` ended with `answer` (empty when it failed); a turn already
    /// ended is left as it is.
    pub(crate) fn end(&self, session: u64, turn: u32, user: String, answer: String) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let exchanges = open.entry(session).or_default();
        if exchanges.len() == turn as usize {
            exchanges.push((user, answer));
        }
        drop(open);
        self.ended.notify_waiters();
    }

    /// Turns that waited for the turn before them.
    pub(crate) fn waited(&self) -> u64 {
        self.waited.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_turn_waits_for_the_one_before_and_gets_the_history() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let sessions = Arc::new(Sessions::default());
            assert!(sessions.history(4, 0).await.is_empty());
            sessions.end(4, 0, "Hi".into(), "Hello".into());
            // Turn 2 comes before turn 1 has ended: it waits.
            let early = {
                let sessions = Arc::clone(&sessions);
                tokio::spawn(async move { sessions.history(4, 2).await })
            };
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert!(!early.is_finished());
            assert_eq!(
                sessions.history(4, 1).await,
                [("Hi".into(), "Hello".into())]
            );
            sessions.end(4, 1, "And?".into(), String::new());
            let history = early.await.unwrap();
            assert_eq!(history.len(), 2);
            assert_eq!(history[1], ("And?".to_string(), String::new()));
            assert_eq!(sessions.waited(), 1);
            // An end told twice keeps the first; turn 0 starts the session again.
            sessions.end(4, 1, "Other".into(), "x".into());
            assert_eq!(sessions.history(4, 2).await[1].0, "And?");
            assert!(sessions.history(4, 0).await.is_empty());
        });
    }
}
