//! Multi-turn input tokens. A turn is sent with its session's history (the user's earlier
//! turns and the server's answers to them) before its own message, so what the server reads
//! is all of that, not the new message alone. A point's requests go round the samples in order
//! and sample k is turn k / N of session k % N, so the turn before request r's is request
//! r - N: r's input is r - N's input, r - N's answer and r's own message. Counted as the
//! single-turn prompts are, in the text's tokens (the chat template's own tokens are not).

use mlperf_serving::RequestRecord;

/// Sets each turn's `input_tokens` to its whole history's, in a point's `records` (in request
/// order, request r on sample r % `samples`) of `sessions` sessions. A first turn keeps its
/// own count; a request whose previous turn has no count is left as it was. An answer counts
/// by the client's tokenizer where it counted, else as the target reported it (a failed turn
/// answered nothing, as the plugin's history has it).
pub(super) fn count_histories(records: &mut [RequestRecord], samples: usize, sessions: usize) {
    if sessions == 0 || samples == 0 {
        return;
    }
    for r in sessions..records.len() {
        if r % samples < sessions {
            continue; // a first turn: its session starts afresh
        }
        let before = records[r - sessions];
        let answer = match before.failed {
            true => 0,
            false => before.counted_tokens.unwrap_or(before.output_tokens),
        };
        let record = &mut records[r];
        if let (Some(history), Some(own)) = (before.input_tokens, record.input_tokens) {
            record.input_tokens = Some(history + answer + own);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(input: u64, answer: u64, failed: bool) -> RequestRecord {
        RequestRecord {
            scheduled_ns: 0,
            sent_ns: 0,
            first_token_ns: None,
            completed_ns: Some(1),
            output_tokens: answer + 100,
            input_tokens: Some(input),
            counted_tokens: Some(answer),
            failed,
        }
    }

    #[test]
    fn each_turn_counts_its_sessions_history_and_a_new_pass_starts_afresh() {
        // 2 sessions of 2 turns (samples 0-3), gone round once and a half: requests 4 and 5
        // are first turns again.
        let mut records = vec![
            record(5, 10, false), // session 0, turn 0
            record(6, 20, true),  // session 1, turn 0: failed, answered nothing
            record(7, 30, false), // session 0, turn 1
            record(8, 40, false), // session 1, turn 1
            record(5, 11, false), // session 0, turn 0 again
            record(6, 21, false), // session 1, turn 0 again
            record(7, 31, false), // session 0, turn 1 again
        ];
        count_histories(&mut records, 4, 2);
        let inputs: Vec<u64> = records.iter().map(|r| r.input_tokens.unwrap()).collect();
        assert_eq!(inputs, [5, 6, 5 + 10 + 7, 6 + 8, 5, 6, 5 + 11 + 7]);
    }

    #[test]
    fn a_third_turn_carries_both_earlier_exchanges_and_uncounted_answers_use_the_targets_count() {
        // One session of three turns; the second answer was not counted by the client.
        let mut records = vec![
            record(3, 4, false),
            record(5, 6, false),
            record(7, 8, false),
        ];
        records[1].counted_tokens = None;
        count_histories(&mut records, 3, 1);
        let inputs: Vec<u64> = records.iter().map(|r| r.input_tokens.unwrap()).collect();
        assert_eq!(inputs, [3, 3 + 4 + 5, 3 + 4 + 5 + 106 + 7]);
    }

    #[test]
    fn without_counts_nothing_changes() {
        let mut records = vec![record(3, 4, false), record(5, 6, false)];
        records[0].input_tokens = None;
        count_histories(&mut records, 2, 1);
        assert_eq!(records[1].input_tokens, Some(5));
        count_histories(&mut records, 0, 0);
        assert_eq!(records[1].input_tokens, Some(5));
    }
}
