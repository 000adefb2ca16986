//! A scan's findings as OpenTelemetry metrics, so that a scheduled
//! `git kams scan` can feed a dashboard and page someone when a reviewed
//! descriptor changes (docs/metrics.md).
//!
//! Pure core, effects at the edge: [`metrics`] turns findings into data
//! points and [`otlp`] turns those into an OTLP/HTTP request body; only
//! [`export`] reads the environment and talks to the network.
//!
//! Both metrics are gauges. A scan reports how many findings there are now,
//! not how many appeared since the last scan: a finding that was fixed is
//! gone from the next scan, so the number goes down as well as up, and the
//! same unfixed finding is counted again by every scan. That is a gauge
//! ("the current value"); a monotonic Sum would only ever grow, and a delta
//! Sum would claim each scan found its findings anew.

pub mod export;
pub mod otlp;
mod protobuf;

use std::collections::{BTreeMap, BTreeSet};

use crate::finding::{Class, Finding};
use crate::lock::Lock;

/// Definition drift: a pinned or provisional descriptor that changed
/// (findings of class `drift`, and only those).
pub const DRIFT_METRIC: &str = "mcp.integrity.drift.count";
/// Every finding that is not definition drift.
pub const FINDING_METRIC: &str = "kams.finding.count";
/// The unit of both metrics: a count of findings (UCUM annotation).
pub const UNIT: &str = "{finding}";
/// The attribute keys of every data point, in the order they are sent.
pub const ATTRIBUTE_KEYS: [&str; 5] = ["server", "tool", "class", "severity", "baseline_state"];
/// `baseline_state` of a subject the lock has no entry for.
pub const NEW: &str = "new";
/// The instrumentation scope's name; also the default `service.name`.
pub const SCOPE: &str = "git-kams";

/// What a data point counts: one value for each of [`ATTRIBUTE_KEYS`].
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Attributes {
    /// The server.
    pub server: String,
    /// The tool; empty for a server-level finding.
    pub tool: String,
    /// The finding's class (`drift`, `poison`, ...).
    pub class: String,
    /// The finding's severity (`info` ... `critical`).
    pub severity: String,
    /// The subject's entry in the lock the scan used: `pinned`,
    /// `provisional`, or [`NEW`] when it has none.
    pub baseline_state: String,
}

impl Attributes {
    /// The values under [`ATTRIBUTE_KEYS`], in that order.
    pub fn values(&self) -> [&str; 5] {
        [
            &self.server,
            &self.tool,
            &self.class,
            &self.severity,
            &self.baseline_state,
        ]
    }
}

/// One metric: its name, what it means, and its points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// [`DRIFT_METRIC`] or [`FINDING_METRIC`].
    pub name: &'static str,
    /// One line for the backend's metric browser.
    pub description: &'static str,
    /// Count per distinct attribute set, sorted by attributes.
    pub points: Vec<(Attributes, i64)>,
}

/// The two metrics of a scan: [`DRIFT_METRIC`] then [`FINDING_METRIC`].
///
/// `lock` is the lock the scan compared against (for `baseline_state`);
/// `servers` every server the scan covered. A server with no finding in a
/// metric gets one zero point there, with only `server` set (the other
/// attributes empty): a backend then sees "scanned, nothing found" rather
/// than no data, which it cannot tell from "not scanned", and a dashboard
/// or an alert grouped by server drops to zero on the scan after a fix.
pub fn metrics(findings: &[Finding], lock: &Lock, servers: &[String]) -> [Metric; 2] {
    let mut drift: BTreeMap<Attributes, i64> = BTreeMap::new();
    let mut other: BTreeMap<Attributes, i64> = BTreeMap::new();
    for f in findings {
        let attributes = Attributes {
            server: f.server.clone(),
            tool: f.tool.clone().unwrap_or_default(),
            class: f.class.as_str().to_string(),
            severity: f.severity.as_str().to_string(),
            baseline_state: lock
                .entry(&f.server, f.tool.as_deref())
                .map_or(NEW, |e| e.state.as_str())
                .to_string(),
        };
        let counts = if f.class == Class::Drift {
            &mut drift
        } else {
            &mut other
        };
        *counts.entry(attributes).or_default() += 1;
    }
    [
        metric(
            DRIFT_METRIC,
            "Definition drift findings of the last scan: a pinned or provisional MCP descriptor that changed",
            drift,
            servers,
        ),
        metric(
            FINDING_METRIC,
            "git-kams findings of the last scan other than definition drift",
            other,
            servers,
        ),
    ]
}

fn metric(
    name: &'static str,
    description: &'static str,
    mut counts: BTreeMap<Attributes, i64>,
    servers: &[String],
) -> Metric {
    let counted: BTreeSet<String> = counts.keys().map(|a| a.server.clone()).collect();
    for server in servers {
        if !counted.contains(server) {
            let zero = Attributes {
                server: server.clone(),
                ..Attributes::default()
            };
            counts.insert(zero, 0);
        }
    }
    Metric {
        name,
        description,
        points: counts.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;

    fn finding(class: Class, severity: Severity, server: &str, tool: Option<&str>) -> Finding {
        Finding {
            class,
            severity,
            server: server.into(),
            tool: tool.map(str::to_string),
            field: None,
            message: String::new(),
            evidence: Vec::new(),
        }
    }

    fn point(m: &Metric, values: [&str; 5]) -> Option<i64> {
        m.points
            .iter()
            .find(|(a, _)| a.values() == values)
            .map(|(_, n)| *n)
    }

    #[test]
    fn drift_is_counted_apart_from_every_other_class() {
        let findings = [
            finding(Class::Drift, Severity::High, "a", Some("t")),
            finding(Class::Drift, Severity::High, "a", Some("t")),
            finding(Class::Poison, Severity::Critical, "a", Some("t")),
            finding(Class::Transport, Severity::Medium, "b", None),
        ];
        let [drift, other] = metrics(&findings, &Lock::default(), &["a".into(), "b".into()]);
        assert_eq!(drift.name, DRIFT_METRIC);
        assert_eq!(point(&drift, ["a", "t", "drift", "high", "new"]), Some(2));
        // Server b has no drift: one zero point says it was scanned.
        assert_eq!(point(&drift, ["b", "", "", "", ""]), Some(0));
        assert_eq!(drift.points.len(), 2);
        assert_eq!(other.name, FINDING_METRIC);
        assert_eq!(
            point(&other, ["a", "t", "poison", "critical", "new"]),
            Some(1)
        );
        assert_eq!(
            point(&other, ["b", "", "transport", "medium", "new"]),
            Some(1)
        );
        assert_eq!(other.points.len(), 2);
    }

    #[test]
    fn a_clean_scan_still_reports_every_server() {
        let [drift, other] = metrics(&[], &Lock::default(), &["a".into()]);
        for m in [drift, other] {
            assert_eq!(
                m.points,
                vec![(
                    Attributes {
                        server: "a".into(),
                        ..Default::default()
                    },
                    0
                )]
            );
        }
    }
}
