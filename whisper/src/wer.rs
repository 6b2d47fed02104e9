//! `accuracy_eval.py`'s word error rate: each answer and its reference normalised, split on
//! whitespace and aligned by `compute_wer_with_concatenation` (`helpers.py`), whose word
//! distances and reference word counts are summed over every logged answer.

/// `compute_wer_with_concatenation(hypothesis, reference)`: the words walked in step, where
/// two differ a reference or hypothesis run of two or three words that joins into the other
/// side's word counts as one (`foot ball` for `football`); then the Levenshtein distance of
/// the two aligned sequences (joined runs without their spaces). Returns the distance and
/// the reference's word count.
pub fn concatenation_distance(hypothesis: &[&str], reference: &[&str]) -> (usize, usize) {
    let mut ref_aligned: Vec<String> = Vec::with_capacity(reference.len());
    let mut hyp_aligned: Vec<String> = Vec::with_capacity(hypothesis.len());
    let (mut i, mut j) = (0, 0);
    while i < reference.len() && j < hypothesis.len() {
        let (ref_len, hyp_len) = if reference[i] == hypothesis[j] {
            (1, 1)
        } else {
            joined_match(hypothesis, reference, i, j).unwrap_or((1, 1))
        };
        ref_aligned.push(reference[i..i + ref_len].concat());
        hyp_aligned.push(hypothesis[j..j + hyp_len].concat());
        i += ref_len;
        j += hyp_len;
    }
    ref_aligned.extend(reference[i..].iter().map(|w| w.to_string()));
    hyp_aligned.extend(hypothesis[j..].iter().map(|w| w.to_string()));
    (levenshtein(&ref_aligned, &hyp_aligned), reference.len())
}

/// The first of: reference words `i..i+k` joined equal hypothesis word `j`, or hypothesis
/// words `j..j+k` joined equal reference word `i`, for k = 1, 2, 3 in turn (the reference's
/// loop order); the lengths of the two runs.
fn joined_match(
    hypothesis: &[&str],
    reference: &[&str],
    i: usize,
    j: usize,
) -> Option<(usize, usize)> {
    for k in 1..4 {
        if i + k <= reference.len() && joins_into(&reference[i..i + k], hypothesis[j]) {
            return Some((k, 1));
        }
        if j + k <= hypothesis.len() && joins_into(&hypothesis[j..j + k], reference[i]) {
            return Some((1, k));
        }
    }
    None
}

/// Whether `words` concatenated are `target`, without building the concatenation.
fn joins_into(words: &[&str], target: &str) -> bool {
    let mut rest = target;
    for word in words {
        match rest.strip_prefix(word) {
            Some(tail) => rest = tail,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The Levenshtein distance of two word sequences (insertions, deletions, substitutions).
pub fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut previous: Vec<usize> = (0..=short.len()).collect();
    let mut current = vec![0; short.len() + 1];
    for (i, long_item) in long.iter().enumerate() {
        current[0] = i + 1;
        for (j, short_item) in short.iter().enumerate() {
            let substitution = previous[j] + usize::from(short_item != long_item);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[short.len()]
}

/// Word errors summed over answers, as `word_error_rate` sums them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WordErrors {
    pub distance: usize,
    pub reference_words: usize,
}

impl WordErrors {
    /// Adds one normalised answer and its normalised reference.
    pub fn add(&mut self, hypothesis: &str, reference: &str) {
        let hypothesis: Vec<&str> = hypothesis.split_whitespace().collect();
        let reference: Vec<&str> = reference.split_whitespace().collect();
        let (distance, words) = concatenation_distance(&hypothesis, &reference);
        self.distance += distance;
        self.reference_words += words;
    }

    /// `scores / words`, the script's WER; `None` where no reference has a word (the script
    /// stops on a division by zero).
    pub fn rate(&self) -> Option<f64> {
        (self.reference_words > 0).then(|| self.distance as f64 / self.reference_words as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    #[test]
    fn split_and_joined_words_count_as_one() {
        let reference = words("the old football was well known");
        assert_eq!(
            concatenation_distance(&words("the old foot ball was well known"), &reference),
            (0, 6)
        );
        assert_eq!(
            concatenation_distance(&words("the oldfootball was wellknown"), &reference),
            (0, 6)
        );
        assert_eq!(
            concatenation_distance(&words("the old ball was known"), &reference),
            (2, 6)
        );
        assert_eq!(concatenation_distance(&[], &reference), (6, 6));
        assert_eq!(concatenation_distance(&words("a b"), &[]), (2, 0));
    }

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein(&words("a b c"), &words("a x c d")), 2);
        assert_eq!(levenshtein::<&str>(&[], &words("a b")), 2);
    }
}
