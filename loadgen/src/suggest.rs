//! "Did you mean …?": the known name a typo most likely meant.

/// The name of `known` within two edits of `typed` and closest to it (the first of equals).
pub fn closest<'a, S: AsRef<str>>(typed: &str, known: &'a [S]) -> Option<&'a str> {
    known
        .iter()
        .map(|name| (edit_distance(typed, name.as_ref()), name.as_ref()))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name_and_strangers_none() {
        let known = [
            "digits",
            "fmnist",
            "minilm",
            "min_duration_ms",
            "max_duration_ms",
        ];
        assert_eq!(closest("fmnst", &known), Some("fmnist"));
        assert_eq!(closest("min_durration_ms", &known), Some("min_duration_ms"));
        assert_eq!(closest("fminst", &known), Some("fmnist"));
        assert_eq!(closest("resnet", &known), None);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
