//! `scan --otlp-endpoint` and the OTEL_* variables against a real OTLP/HTTP
//! receiver on loopback: tests/fixtures/otlp_receiver.py decodes each
//! request with the official protobuf definitions (the opentelemetry-proto
//! package), so a wrong field number or wire type fails here, not in a
//! backend. The OpenTelemetry Collector itself is not installable from the
//! registries the tests may use. Also: the shipped SigNoz alert rule names
//! the metric and attributes the exporter really sends.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

use crate::common::{json, kams, py_tools, text, EPOCH};

/// A running receiver; killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Receiver {
    fn start() -> Receiver {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.jsonl");
        let script = root().join("tests/fixtures/otlp_receiver.py");
        let mut child = Command::new(py_tools().join("python"))
            .arg(script)
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the receiver starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("receiver port: {line:?}"));
        Receiver {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    /// The base endpoint, as `--otlp-endpoint` and OTEL_EXPORTER_OTLP_ENDPOINT take it.
    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received, in order.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The one request received, decoded without a fault.
    fn only_request(&self) -> Value {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "{requests:#?}");
        let r = requests.into_iter().next().unwrap();
        assert!(r.get("error").is_none(), "{r:#}");
        assert_eq!(r["path"], "/v1/metrics");
        assert_eq!(r["content_type"], "application/x-protobuf");
        // Re-encoded by the official code, the message is the very bytes
        // sent: no unknown field, nothing left over.
        assert_eq!(r["roundtrip"], true, "{r:#}");
        r
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README demo: `scan` of the drifted samples, with `args` after `scan`
/// and `env` set.
fn demo_scan(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = kams(root());
    cmd.args([
        "--lock",
        "samples/kams.lock",
        "--inventory",
        "samples/inventory-drifted",
        "scan",
    ])
    .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The attributes of a KeyValue list, as MessageToDict writes it.
fn attributes(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|kv| {
            let value = kv["value"]["stringValue"].as_str().unwrap_or_default();
            (kv["key"].as_str().unwrap().to_string(), value.to_string())
        })
        .collect()
}

/// One data point: its attributes and value.
type Point = (BTreeMap<String, String>, i64);

/// The points of each metric, by metric name; checks the parts every
/// request shares (one resource, one scope, gauges, the fixed clock).
fn metrics(request: &Value) -> BTreeMap<String, Vec<Point>> {
    let rm = &request["request"]["resourceMetrics"];
    assert_eq!(rm.as_array().unwrap().len(), 1);
    let sm = &rm[0]["scopeMetrics"];
    assert_eq!(sm.as_array().unwrap().len(), 1);
    assert_eq!(sm[0]["scope"]["name"], "git-kams");
    assert_eq!(sm[0]["scope"]["version"], env!("CARGO_PKG_VERSION"));
    let time = format!("{EPOCH}000000000");
    let mut out = BTreeMap::new();
    for m in sm[0]["metrics"].as_array().unwrap() {
        assert_eq!(m["unit"], "{finding}");
        assert!(m.get("sum").is_none(), "a gauge, not a sum: {m:#}");
        let points = m["gauge"]["dataPoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                assert_eq!(p["timeUnixNano"], time.as_str());
                // int64 values are strings in protobuf's JSON mapping, and
                // a zero is left out.
                let value = p["asInt"].as_str().unwrap_or("0").parse().unwrap();
                (attributes(&p["attributes"]), value)
            })
            .collect();
        out.insert(m["name"].as_str().unwrap().to_string(), points);
    }
    out
}

fn resource(request: &Value) -> BTreeMap<String, String> {
    attributes(&request["request"]["resourceMetrics"][0]["resource"]["attributes"])
}

#[test]
fn the_samples_scan_exports_its_counts_by_metric_and_attributes() {
    let receiver = Receiver::start();
    let endpoint = receiver.base();
    let secret = "Bearer s3cr%3Dt";
    let out = demo_scan(
        &["--otlp-endpoint", &endpoint],
        &[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            &format!("authorization={secret}"),
        )],
    );
    // The report and the status are those of a scan without metrics.
    let plain = demo_scan(&[], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), text(&plain.stdout));
    assert_eq!(text(&out.stderr), "");

    let request = receiver.only_request();
    assert_eq!(request["headers"]["authorization"], "Bearer s3cr=t");
    assert_eq!(
        resource(&request),
        BTreeMap::from([
            ("service.name".to_string(), "git-kams".to_string()),
            (
                "service.version".to_string(),
                env!("CARGO_PKG_VERSION").to_string()
            ),
        ])
    );
    let metrics = metrics(&request);
    assert_eq!(
        metrics.keys().collect::<Vec<_>>(),
        ["kams.finding.count", "mcp.integrity.drift.count"]
    );

    // The counts are those of the JSON report, drift in one metric and
    // every other class in the other.
    let report = json(&demo_scan(&["--format", "json"], &[]).stdout);
    let mut expected: BTreeMap<&str, BTreeMap<[String; 4], i64>> = BTreeMap::new();
    for f in report["findings"].as_array().unwrap() {
        let class = f["class"].as_str().unwrap();
        let metric = if class == "drift" {
            "mcp.integrity.drift.count"
        } else {
            "kams.finding.count"
        };
        let key = ["server", "tool", "class", "severity"]
            .map(|k| f[k].as_str().unwrap_or_default().to_string());
        *expected.entry(metric).or_default().entry(key).or_default() += 1;
    }
    for (name, points) in &metrics {
        let mut got = BTreeMap::new();
        let mut zero_servers = BTreeSet::new();
        for (a, value) in points {
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                ["baseline_state", "class", "server", "severity", "tool"]
            );
            if *value == 0 {
                // A zero point says "scanned, nothing here": server only.
                assert_eq!(a["tool"], "");
                assert_eq!(a["class"], "");
                zero_servers.insert(a["server"].clone());
                continue;
            }
            let key = ["server", "tool", "class", "severity"].map(|k| a[k].clone());
            got.insert(key, *value);
        }
        assert_eq!(got, expected[name.as_str()], "{name}");
        let counted: BTreeSet<String> = got.keys().map(|k| k[0].clone()).collect();
        let servers: BTreeSet<String> =
            ["files", "helper", "notes", "web"].map(String::from).into();
        assert_eq!(
            zero_servers,
            &servers - &counted,
            "{name}: one zero point for each server without a count"
        );
    }
    let drift = &metrics["mcp.integrity.drift.count"];
    assert_eq!(drift.iter().map(|(_, n)| n).sum::<i64>(), 8);
    assert!(drift
        .iter()
        .all(|(a, n)| *n == 0 || (a["class"] == "drift" && a["baseline_state"] == "pinned")));

    // baseline_state is the subject's entry in the lock, or new.
    let state = |server: &str, tool: &str, class: &str| {
        metrics["kams.finding.count"]
            .iter()
            .find(|(a, _)| a["server"] == server && a["tool"] == tool && a["class"] == class)
            .map(|(a, _)| a["baseline_state"].clone())
            .unwrap_or_else(|| panic!("no {class} point for {server}/{tool}"))
    };
    assert_eq!(state("web", "fetch", "poison"), "pinned");
    assert_eq!(state("notes", "search_nodes", "unapproved"), "provisional");
    assert_eq!(state("helper", "read_text_file", "ambiguous"), "new");
    assert_eq!(state("helper", "", "transport"), "new");
    assert_eq!(state("files", "search_files", "added"), "new");

    alert_rule_matches(&metrics);
}

/// docs/signoz-alert.json is a SigNoz rule on the drift metric, filtered on
/// critical pinned entries, in the metric and attribute names and values
/// the exporter sends (`sent`: what one export carried).
fn alert_rule_matches(sent: &BTreeMap<String, Vec<Point>>) {
    let rule: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/signoz-alert.json")).unwrap(),
    )
    .expect("the alert rule is JSON");
    assert_eq!(rule["alertType"], "METRIC_BASED_ALERT");
    assert_eq!(rule["ruleType"], "threshold_rule");
    assert_eq!(rule["schemaVersion"], "v2alpha1");
    let queries = rule["condition"]["compositeQuery"]["queries"]
        .as_array()
        .unwrap();
    assert_eq!(queries.len(), 1);
    let spec = &queries[0]["spec"];
    assert_eq!(spec["signal"], "metrics");
    assert_eq!(rule["condition"]["selectedQueryName"], spec["name"]);
    let metric = spec["aggregations"][0]["metricName"].as_str().unwrap();
    assert_eq!(metric, "mcp.integrity.drift.count");
    assert!(sent.contains_key(metric));

    // The filter: `key = 'value'` terms joined by AND, nothing else.
    let expression = spec["filter"]["expression"].as_str().unwrap();
    let terms: BTreeMap<&str, &str> = expression
        .split(" AND ")
        .map(|term| {
            let (k, v) = term.split_once(" = ").unwrap_or_else(|| panic!("{term}"));
            (k.trim(), v.trim().trim_matches('\''))
        })
        .collect();
    assert_eq!(
        terms,
        BTreeMap::from([("baseline_state", "pinned"), ("severity", "critical")])
    );
    // Each key is an attribute the exporter sends, each value one it sends
    // under that key (critical is sent for the poisoned pinned tool).
    for (k, v) in &terms {
        let values: BTreeSet<&str> = sent
            .values()
            .flatten()
            .filter_map(|(a, _)| a.get(*k).map(String::as_str))
            .collect();
        assert!(
            values.contains(v),
            "`{k}` = `{v}` is never sent: {values:?}"
        );
    }
    // And on the samples it would fire exactly once: for the pinned tool
    // whose description became poisoned, not for the other drift.
    let firing: Vec<&BTreeMap<String, String>> = sent[metric]
        .iter()
        .filter(|(a, v)| {
            *v > 0
                && terms
                    .iter()
                    .all(|(k, want)| a.get(*k).map(String::as_str) == Some(*want))
        })
        .map(|(a, _)| a)
        .collect();
    assert_eq!(firing.len(), 1, "{firing:?}");
    assert_eq!(firing[0]["server"], "web");
    assert_eq!(firing[0]["tool"], "fetch");
    // Fires on any point above zero.
    let threshold = &rule["condition"]["thresholds"]["spec"][0];
    assert_eq!(threshold["target"], 0);
    assert_eq!(threshold["op"], "1", "above");
}

#[test]
fn the_environment_names_the_endpoint_headers_and_resource() {
    let receiver = Receiver::start();
    let out = demo_scan(
        &[],
        &[
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                &format!("{}/", receiver.base()),
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-generic=1"),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-tenant=kams%20ci"),
            ("OTEL_SERVICE_NAME", "kams-nightly"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=ci,service.name=ignored",
            ),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "");
    let request = receiver.only_request();
    assert_eq!(request["headers"]["x-tenant"], "kams ci");
    assert!(request["headers"].get("x-generic").is_none());
    let resource = resource(&request);
    assert_eq!(resource["service.name"], "kams-nightly");
    assert_eq!(resource["deployment.environment"], "ci");

    // The metrics variable is a whole URL, used as it is.
    let receiver = Receiver::start();
    let out = demo_scan(
        &[],
        &[
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                &format!("{}/v1/metrics", receiver.base()),
            ),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/unused"),
        ],
    );
    assert_eq!(text(&out.stderr), "");
    receiver.only_request();
}

#[test]
fn a_failed_export_warns_and_keeps_the_exit_status() {
    // A port nobody listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let secret = "t0psecret";
    let header = (
        "OTEL_EXPORTER_OTLP_HEADERS",
        format!("authorization={secret}"),
    );
    let refused = demo_scan(
        &["--otlp-endpoint", &format!("http://127.0.0.1:{port}")],
        &[(header.0, &header.1)],
    );
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(text(&refused.stdout), text(&demo_scan(&[], &[]).stdout));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.starts_with("warning: metrics not exported: the OTLP endpoint http://127.0.0.1:"),
        "{stderr}"
    );
    assert!(!stderr.contains(secret), "{stderr}");

    // Not 2xx: the receiver answers 400 to any path but /v1/metrics.
    let receiver = Receiver::start();
    let rejected = demo_scan(
        &["--fail-on", "never"],
        &[
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                &format!("{}/elsewhere", receiver.base()),
            ),
            (header.0, &header.1),
        ],
    );
    assert_eq!(rejected.status.code(), Some(0));
    let stderr = text(&rejected.stderr);
    assert!(stderr.contains("answered HTTP 400"), "{stderr}");
    assert!(!stderr.contains(secret), "{stderr}");
    assert_eq!(receiver.requests().len(), 1);
}

#[test]
fn only_scan_exports_and_only_when_asked() {
    let receiver = Receiver::start();
    // No variable, no flag: nothing is sent, nothing is said.
    let out = demo_scan(&[], &[]);
    assert_eq!(text(&out.stderr), "");
    // `diff` reports drift only, so counts from it would undercount: it
    // never exports, and has no flag for it.
    let out = kams(root())
        .args([
            "--lock",
            "samples/kams.lock",
            "--inventory",
            "samples/inventory-drifted",
            "diff",
        ])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "");
    assert!(receiver.requests().is_empty());
    kams(root())
        .args(["diff", "--otlp-endpoint", &receiver.base()])
        .assert()
        .code(2);
    // A flag that is not a URL is a usage error, before any scan.
    kams(root())
        .args(["scan", "--otlp-endpoint", "collector:4318"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not an absolute http or https URL",
        ));
}
