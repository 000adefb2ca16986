//! Lookalike characters: which characters pose as others (by their TR39
//! skeleton), and what a name shows by itself: scripts mixed inside a
//! word, a word written wholly in letters that look Latin, a capital I
//! where an l would be.

use unicode_security::mixed_script::AugmentedScriptSet;
use unicode_security::{skeleton, MixedScript, RestrictionLevel, RestrictionLevelDetection};

use super::{is_separator, Name};
use crate::finding::Severity;

/// A character that poses as another: one whose skeleton is a different
/// character (Cyrillic і, Greek ι, capital I for l, 0 for O) or nothing
/// at all (zero-width). Lowercase ASCII letters are the prototypes, never
/// posers (`m` folds to `rn`, but `m` is what a reader expects).
pub(super) fn posing(c: char) -> bool {
    if c.is_ascii_lowercase() || is_separator(c) {
        return false;
    }
    let mut buf = [0u8; 4];
    let s: String = skeleton(c.encode_utf8(&mut buf)).collect();
    s.to_lowercase() != c.to_lowercase().collect::<String>()
}

fn script_of(c: char) -> String {
    let set = AugmentedScriptSet::for_char(c);
    if set.is_all() {
        "Common".to_string()
    } else {
        set.to_string()
    }
}

/// Each character of `name` that poses as another, as evidence.
pub(super) fn posers(name: &str) -> Vec<String> {
    name.chars()
        .enumerate()
        .filter(|&(_, c)| posing(c))
        .map(|(i, c)| {
            let reads: String = skeleton(c.encode_utf8(&mut [0u8; 4])).collect();
            let reads = if reads.is_empty() {
                "nothing (invisible)".to_string()
            } else {
                format!("`{reads}`")
            };
            format!(
                "`{c}` U+{:04X} ({}) at char {i} reads as {reads}",
                c as u32,
                script_of(c)
            )
        })
        .collect()
}

/// Signals from the name alone: scripts mixed inside a word, a whole
/// word of lookalike letters, a capital I posing as l.
pub(super) fn own_signals(n: &Name<'_>) -> Vec<(Severity, String)> {
    let mut out = Vec::new();
    let name = n.text;
    // Cheap exit for the common case: an ASCII name can only carry the
    // capital-I signal.
    if !name.is_ascii() {
        let words: Vec<&str> = name
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| !w.is_empty())
            .collect();
        let shown: String = skeleton(name).collect();
        let scripts = || {
            let mut s: Vec<String> = name
                .chars()
                .filter(|c| c.is_alphabetic())
                .map(script_of)
                .collect();
            s.sort();
            s.dedup();
            s.join(", ")
        };
        if words.iter().any(|w| !w.is_single_script()) {
            if shown.as_str().is_single_script() {
                out.push((
                    Severity::High,
                    format!(
                        "mixes scripts inside a word ({}) and reads as `{shown}`: {}",
                        scripts(),
                        posers(name).join("; ")
                    ),
                ));
            } else {
                out.push((
                    Severity::Medium,
                    format!("mixes scripts inside a word ({})", scripts()),
                ));
            }
        } else if !name.is_single_script()
            && name.detect_restriction_level() >= RestrictionLevel::MinimallyRestrictive
        {
            out.push((
                Severity::Low,
                format!("has words in different scripts ({})", scripts()),
            ));
        } else if name.chars().any(char::is_alphabetic)
            && name
                .chars()
                .filter(|c| c.is_alphabetic())
                .all(|c| !c.is_ascii())
            && shown.is_ascii()
            && n.posing > 0
        {
            out.push((
                Severity::Medium,
                format!(
                    "is written in {} letters that all look Latin: it reads as `{shown}`",
                    scripts()
                ),
            ));
        }
    }
    if let Some(reads) = capital_i_as_l(name) {
        out.push((
            Severity::Medium,
            format!("has a capital `I` between lowercase letters, where `l` would be: it reads as `{reads}`"),
        ));
    }
    out
}

/// In a lowercase `snake_case` or `kebab-case` name (no camel humps are
/// expected there), a capital I between lowercase letters is an l in
/// disguise (`edit_fiIe`). Returns the name with it read as l.
fn capital_i_as_l(name: &str) -> Option<String> {
    if !name.contains(['_', '-']) {
        return None;
    }
    let c: Vec<char> = name.chars().collect();
    let mut disguised = false;
    for i in 0..c.len() {
        if !c[i].is_uppercase() {
            continue;
        }
        let between = i > 0
            && i + 1 < c.len()
            && c[i - 1].is_ascii_lowercase()
            && c[i + 1].is_ascii_lowercase();
        if c[i] != 'I' || !between {
            return None;
        }
        disguised = true;
    }
    disguised.then(|| name.replace('I', "l"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{squats, subjects};
    use crate::detect::testing::inventory;
    use crate::finding::Severity;
    use crate::lock::Lock;

    #[test]
    fn scripts_that_are_not_lookalikes() {
        let inv = inventory(&[(
            "intl",
            &[
                "検索_docs",
                "поиск",
                "get_пользователь",
                "сору",
                "getIssue",
                "list_v1beta_models",
                "get_IP",
            ],
        )]);
        let found = squats(&inv, &Lock::default());
        assert_eq!(
            subjects(&found),
            vec![
                ("intl", "get_пользователь", Severity::Low),
                ("intl", "сору", Severity::Medium),
            ]
        );
        assert!(found[1].3.contains("reads as `copy`"), "{}", found[1].3);
    }
}
