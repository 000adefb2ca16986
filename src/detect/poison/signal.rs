//! The signals: what each is called and weighs, how the distinct signals
//! of one string add up to a severity, and how they become one finding per
//! JSON pointer, with its evidence; the same text read the same way in
//! several places of one field (the nested copies of a schema a server
//! generates) is one finding, its other places listed. A test checks
//! [`SIGNALS`] against the table of docs/detection.md.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

pub(super) use super::tables::Signal;
use super::tables::SIGNALS;
use crate::finding::{Class, Finding, Severity};

/// What a text asks the model for, as opposed to how loudly it asks:
/// read a secret, send data out, hide from the user, override the user,
/// act on another server's tools, destroy data as if it were a
/// precaution, or (an annotation) deceive the client about what a tool
/// does. A string none of whose signals asks
/// for one of these is at most medium however loud it is: servers address
/// the model with workflow instructions, in capitals and tags of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ask {
    Secret,
    Send,
    Hide,
    Override,
    OtherTool,
    Deceive,
    Destroy,
}

impl Signal {
    pub(super) fn name(self) -> &'static str {
        SIGNALS[self as usize].1
    }

    fn weight(self) -> u32 {
        SIGNALS[self as usize].2
    }

    /// What the signal says the text asks for, if anything.
    pub(super) fn asks(self) -> Option<Ask> {
        SIGNALS[self as usize].4
    }

    /// Signals that say a secret or data is being moved: a parameter such
    /// a string names is a carrier. (Not `smuggle-into-argument` alone:
    /// "pass the output of X as the Y parameter" is ordinary guidance.)
    pub(super) fn moves_data(self) -> bool {
        matches!(
            self,
            Signal::ReadSecret
                | Signal::CollectSecret
                | Signal::ExfilDestination
                | Signal::SensitivePath
        )
    }
}

/// Severity from the sum of the weights of distinct signals.
pub(super) fn severity(sum: u32) -> Option<Severity> {
    match sum {
        0 => None,
        1 => Some(Severity::Low),
        2 | 3 => Some(Severity::Medium),
        _ => Some(Severity::High),
    }
}

/// One signal that fired, with what made it fire.
#[derive(Clone)]
pub(super) struct Hit {
    pub(super) signal: Signal,
    pub(super) span: String,
}

/// What was found at one JSON pointer: the signals that fired, notes on
/// how the text was read, and which text it was.
#[derive(Default)]
pub(super) struct AtPointer {
    pub(super) hits: Vec<Hit>,
    pub(super) notes: Vec<String>,
    /// A hash of the text (or texts: a key and its value) read here; none
    /// where only the structure spoke.
    text: Option<u64>,
}

impl AtPointer {
    /// Records that `text` was read at this pointer.
    pub(super) fn read(&mut self, text: &str) {
        let mut h = DefaultHasher::new();
        self.text.hash(&mut h);
        text.hash(&mut h);
        self.text = Some(h.finish());
    }
}

/// Places listed in the evidence of a finding whose text recurs.
const PLACES_SHOWN: usize = 8;

/// The signals of one descriptor, by JSON pointer.
#[derive(Default)]
pub(super) struct SignalsByPointer {
    entries: BTreeMap<String, AtPointer>,
}

impl SignalsByPointer {
    /// Drops the hits of `signal` whose evidence `keep` refuses, at every
    /// pointer.
    pub(super) fn drop_hits(&mut self, signal: Signal, keep: impl Fn(&str) -> bool) {
        for entry in self.entries.values_mut() {
            entry
                .hits
                .retain(|h| h.signal != signal || keep(h.span.as_str()));
        }
    }

    /// Whether `signal` fired at any pointer.
    pub(super) fn has(&self, signal: Signal) -> bool {
        self.entries
            .values()
            .any(|e| e.hits.iter().any(|h| h.signal == signal))
    }

    pub(super) fn add(&mut self, pointer: &str, signal: Signal, span: String) {
        self.entry(pointer).hits.push(Hit { signal, span });
    }

    pub(super) fn entry(&mut self, pointer: &str) -> &mut AtPointer {
        if !self.entries.contains_key(pointer) {
            self.entries
                .insert(pointer.to_string(), AtPointer::default());
        }
        self.entries.get_mut(pointer).expect("inserted above")
    }

    /// Writes one finding per pointer, and one for each text that recurs
    /// under one top-level field with the same signals and spans: at its
    /// first pointer, the others listed (`also at ...`).
    pub(super) fn emit(self, server: &str, tool: Option<&str>, out: &mut Vec<Finding>) {
        // (top-level field, text, index in `out`, other places)
        let mut seen: Vec<(String, u64, usize, Vec<String>)> = Vec::new();
        for (pointer, entry) in self.entries {
            let text = entry.text;
            let mut by: BTreeMap<Signal, Vec<String>> = BTreeMap::new();
            for h in entry.hits {
                // Overlapping patterns of one signal: keep the longer text.
                let spans = by.entry(h.signal).or_default();
                if spans.iter().any(|s| s.contains(h.span.as_str())) {
                    continue;
                }
                spans.retain(|s| !h.span.contains(s.as_str()));
                if spans.len() < 3 {
                    spans.push(h.span);
                }
            }
            if by.contains_key(&Signal::ReadSecret) {
                by.remove(&Signal::SensitivePath);
            }
            let asks = by.keys().any(|s| s.asks().is_some());
            // A tag of the server's own frames an ask as the model's
            // orders; around documentation that asks for nothing it is
            // how real servers write (markup.rs).
            if !asks {
                by.remove(&Signal::MadeUpTag);
            }
            // Under its confident threshold the word model lifts a string
            // to medium and is not summed: its reason is only "these
            // words" (model.rs).
            let model = by.contains_key(&Signal::ResemblesPoison);
            let sum: u32 = by
                .keys()
                .filter(|s| **s != Signal::ResemblesPoison)
                .map(|s| s.weight())
                .sum();
            let floor = model.then_some(Severity::Medium);
            let Some(mut severity) = severity(sum).max(floor) else {
                continue;
            };
            if severity == Severity::High && !asks {
                severity = Severity::Medium;
            }
            let mut order: Vec<(Signal, Vec<String>)> = by.into_iter().collect();
            order.sort_by(|a, b| {
                b.0.weight()
                    .cmp(&a.0.weight())
                    .then_with(|| a.0.name().cmp(b.0.name()))
            });
            let names: Vec<String> = order
                .iter()
                .map(|(s, _)| format!("{} +{}", s.name(), s.weight()))
                .collect();
            let mut evidence = Vec::new();
            for (s, spans) in &order {
                for span in spans {
                    evidence.push(format!("{} +{}: {}", s.name(), s.weight(), span));
                }
            }
            evidence.extend(entry.notes);
            let top = pointer.split('/').nth(1).unwrap_or("").to_string();
            if let Some(text) = text {
                let again = seen.iter_mut().find(|(t, x, i, _)| {
                    *t == top
                        && *x == text
                        && out[*i].severity == severity
                        && out[*i].evidence == evidence
                });
                if let Some((_, _, _, places)) = again {
                    places.push(pointer);
                    continue;
                }
                seen.push((top, text, out.len(), Vec::new()));
            }
            out.push(Finding {
                class: Class::Poison,
                severity,
                server: server.to_string(),
                tool: tool.map(str::to_string),
                field: Some(pointer),
                message: format!(
                    "poisoning signals: {} (sum {sum}{}; {}, medium at 2)",
                    names.join(", "),
                    if model {
                        " without resembles-poison, which only lifts to medium"
                    } else {
                        ""
                    },
                    if asks {
                        "high at 4"
                    } else {
                        "high at 4 only with a signal that asks for harm, and none here"
                    }
                ),
                evidence,
            });
        }
        for (_, _, i, places) in seen {
            if places.is_empty() {
                continue;
            }
            let mut line = format!(
                "also at {}",
                places
                    .iter()
                    .take(PLACES_SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if places.len() > PLACES_SHOWN {
                line.push_str(&format!(" and {} more", places.len() - PLACES_SHOWN));
            }
            out[i].evidence.push(line);
        }
    }
}

/// Evidence text: whitespace runs collapsed, at most 160 characters.
pub(super) fn shown(s: &str) -> String {
    let mut out = String::new();
    for (n, w) in s.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(w);
        if out.chars().count() > 160 {
            let cut: String = out.chars().take(160).collect();
            return format!("{cut}…");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_table_lists_every_signal_with_its_weight() {
        let doc = include_str!("../../../docs/detection.md");
        for (i, (s, name, weight, what, asks)) in SIGNALS.iter().enumerate() {
            assert_eq!(*s as usize, i, "SIGNALS is out of order at {name}");
            let asks = asks.map_or(String::new(), ask_name);
            let row = format!("| `{name}` | {weight} | {asks} | {what} |");
            assert!(doc.contains(&row), "docs/detection.md lacks the row {row}");
        }
    }

    fn ask_name(a: Ask) -> String {
        let s = format!("{a:?}");
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    /// The severity of one pointer with these signals.
    fn weighed(signals: &[Signal]) -> Option<Severity> {
        let mut by = SignalsByPointer::default();
        for s in signals {
            by.add("/description", *s, format!("{s:?}"));
        }
        let mut out = Vec::new();
        by.emit("s", Some("t"), &mut out);
        out.first().map(|f| f.severity)
    }

    #[test]
    fn the_word_model_lifts_to_medium_and_counts_only_when_confident() {
        use Severity::{High, Low, Medium};
        let (weak, strong) = (Signal::ResemblesPoison, Signal::StronglyResemblesPoison);
        assert_eq!(weighed(&[weak]), Some(Medium));
        assert_eq!(weighed(&[Signal::AttentionLabel]), Some(Low));
        assert_eq!(weighed(&[Signal::AttentionLabel, weak]), Some(Medium));
        // A rule that asks, of weight 2: the weak model adds nothing, the
        // confident one makes it high.
        assert_eq!(weighed(&[Signal::ConsentBypass]), Some(Medium));
        assert_eq!(weighed(&[Signal::ConsentBypass, weak]), Some(Medium));
        assert_eq!(weighed(&[Signal::ConsentBypass, strong]), Some(High));
        // Without a rule that asks, not even the confident model is high.
        assert_eq!(weighed(&[Signal::PriorityClaim, strong]), Some(Medium));
        assert_eq!(weighed(&[strong]), Some(Medium));
    }

    #[test]
    fn severity_follows_the_sum_of_weights() {
        assert_eq!(severity(0), None);
        assert_eq!(severity(1), Some(Severity::Low));
        assert_eq!(severity(3), Some(Severity::Medium));
        assert_eq!(severity(4), Some(Severity::High));
    }
}
