//! What git-kams reports: a finding has a class, a severity, a subject and
//! evidence that names the field and the signal. There is never one opaque
//! score: a reviewer must see which rule fired and why.

use std::fmt;
use std::str::FromStr;

/// How much a finding matters. Ordered from least to most severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Known and acknowledged; never fails a run.
    Info,
    /// Worth a look: cosmetic or narrowing changes, removals.
    Low,
    /// A capability or a way out for data that nobody reviewed.
    Medium,
    /// Text that enters the model's context changed, or input is ambiguous.
    High,
    /// A reviewed entry now carries a poisoning signal.
    Critical,
}

impl Severity {
    /// Every severity, least severe first.
    pub const ALL: [Severity; 5] = [
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The lowercase name used in output and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// One level lower (drift of an entry nobody vouched for).
    pub fn lower(self) -> Severity {
        match self {
            Severity::Critical => Severity::High,
            Severity::High => Severity::Medium,
            Severity::Medium => Severity::Low,
            Severity::Low | Severity::Info => Severity::Info,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;
    fn from_str(s: &str) -> Result<Severity, String> {
        Severity::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                format!("unknown severity `{s}` (expected info, low, medium, high or critical)")
            })
    }
}

/// The kind of problem; see DESIGN.md, "Findings".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A field of a known entry changed.
    Drift,
    /// An entry the lock does not know.
    Added,
    /// A lock entry the inventory no longer shows.
    Removed,
    /// Input that two readers may read two ways (duplicate keys or names).
    Ambiguous,
    /// Present, but nobody pinned it.
    Unapproved,
    /// Text that gives the model instructions (named signals).
    Poison,
    /// Characters a person cannot see: zero-width, bidi, tags, escapes.
    Hidden,
    /// Two servers, one tool name; or one server's text about another's tool.
    Shadow,
    /// A lookalike of a trusted tool name.
    Squat,
    /// A risky way to reach a server: a command, an unpinned package, plain
    /// http, an inline secret.
    Transport,
    /// A tool or server a reviewer denied, still advertised.
    Denied,
    /// A locked tool advertised under another name (the old one gone, the
    /// new one not in the lock), with what else changed.
    Renamed,
    /// Servers one client is given whose tools together read private data,
    /// take in content others wrote and send data out (a toxic flow).
    Flow,
    /// A server that told one client identity otherwise than another
    /// (`capture --as`).
    Cloaking,
}

impl Class {
    /// Every class, in the order of the enum (the order of SARIF rules).
    pub const ALL: [Class; 14] = [
        Class::Drift,
        Class::Added,
        Class::Removed,
        Class::Ambiguous,
        Class::Unapproved,
        Class::Poison,
        Class::Hidden,
        Class::Shadow,
        Class::Squat,
        Class::Transport,
        Class::Denied,
        Class::Renamed,
        Class::Flow,
        Class::Cloaking,
    ];

    /// The classes whose high and critical findings an approval must
    /// accept by name (`pin --accept-findings`): what the text or the launch
    /// would do, as opposed to the mere fact that it changed.
    pub const GATED: [Class; 7] = [
        Class::Poison,
        Class::Hidden,
        Class::Squat,
        Class::Shadow,
        Class::Ambiguous,
        Class::Transport,
        Class::Cloaking,
    ];

    /// The lowercase name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Drift => "drift",
            Class::Added => "added",
            Class::Removed => "removed",
            Class::Ambiguous => "ambiguous",
            Class::Unapproved => "unapproved",
            Class::Poison => "poison",
            Class::Hidden => "hidden",
            Class::Shadow => "shadow",
            Class::Squat => "squat",
            Class::Transport => "transport",
            Class::Denied => "denied",
            Class::Renamed => "renamed",
            Class::Flow => "flow",
            Class::Cloaking => "cloaking",
        }
    }
}

impl FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Class, String> {
        Class::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("unknown finding class `{s}`"))
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A class or a severity by its name, in every format: a file that
/// stores one does not depend on the order of the variants.
macro_rules! serde_by_name {
    ($t:ty, $what:literal) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                struct Visit;
                impl serde::de::Visitor<'_> for Visit {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$t, E> {
                        s.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(Visit)
            }
        }
    };
}

serde_by_name!(Class, "a finding class");
serde_by_name!(Severity, "a severity");

/// One thing a reviewer should look at (kept as it is in the findings
/// memo, `cache/findings.rs`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// What kind of problem.
    pub class: Class,
    /// How much it matters.
    pub severity: Severity,
    /// The server it concerns.
    pub server: String,
    /// The tool, or `None` for a server-level finding.
    pub tool: Option<String>,
    /// RFC 6901 pointer into the tool's (or server's) descriptor.
    pub field: Option<String>,
    /// One line saying what happened.
    pub message: String,
    /// Lines that show why: diffs, values, signals. Raw text; every output
    /// format escapes it.
    pub evidence: Vec<String>,
}

impl Finding {
    /// `server` or `server/tool`.
    pub fn subject(&self) -> String {
        match &self.tool {
            Some(t) => format!("{}/{}", self.server, t),
            None => self.server.clone(),
        }
    }

    /// The order of every report: most severe first, then by subject,
    /// class, field and message, so that output is deterministic.
    pub fn sort(findings: &mut [Finding]) {
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.server.cmp(&b.server))
                .then_with(|| a.tool.cmp(&b.tool))
                .then_with(|| a.class.cmp(&b.class))
                .then_with(|| a.field.cmp(&b.field))
                .then_with(|| a.message.cmp(&b.message))
                .then_with(|| a.evidence.cmp(&b.evidence))
        });
    }
}
