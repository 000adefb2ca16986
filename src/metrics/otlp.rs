//! The OTLP/HTTP request body: an `ExportMetricsServiceRequest` in the
//! protobuf encoding.
//!
//! Field numbers are those of the official definitions in
//! open-telemetry/opentelemetry-proto (stable since v1.0; checked against
//! the descriptors of the `opentelemetry-proto` 1.29.0 Python package the
//! tests decode with):
//! `collector/metrics/v1/metrics_service.proto`,
//! `metrics/v1/metrics.proto`, `common/v1/common.proto` and
//! `resource/v1/resource.proto`. Fields are written in field-number order,
//! as the official encoders do, so that the tests can compare bytes.

use super::protobuf::{fixed64, message, sfixed64, string};
use super::{Metric, ATTRIBUTE_KEYS, SCOPE};

/// Encodes one request: one resource, one scope, each metric a gauge of
/// integer points all taken at `time_unix_nano`.
///
/// `resource` is the resource's attributes (`service.name` and friends).
pub fn encode(resource: &[(String, String)], metrics: &[Metric], time_unix_nano: u64) -> Vec<u8> {
    let mut out = Vec::new();
    // ExportMetricsServiceRequest.resource_metrics = 1
    message(&mut out, 1, |rm| {
        // ResourceMetrics.resource = 1
        message(rm, 1, |r| {
            for (k, v) in resource {
                // Resource.attributes = 1
                message(r, 1, |kv| key_value(kv, k, v));
            }
        });
        // ResourceMetrics.scope_metrics = 2
        message(rm, 2, |sm| {
            // ScopeMetrics.scope = 1: InstrumentationScope.name = 1, version = 2
            message(sm, 1, |scope| {
                string(scope, 1, SCOPE);
                string(scope, 2, env!("CARGO_PKG_VERSION"));
            });
            for m in metrics {
                // ScopeMetrics.metrics = 2
                message(sm, 2, |out| metric(out, m, time_unix_nano));
            }
        });
    });
    out
}

fn metric(out: &mut Vec<u8>, m: &Metric, time_unix_nano: u64) {
    // Metric.name = 1, description = 2, unit = 3
    string(out, 1, m.name);
    string(out, 2, m.description);
    string(out, 3, super::UNIT);
    // Metric.gauge = 5 (the `data` oneof; a Sum would be 7): see the
    // module comment of `metrics` for why a gauge.
    message(out, 5, |gauge| {
        for (attributes, value) in &m.points {
            // Gauge.data_points = 1
            message(gauge, 1, |p| {
                // NumberDataPoint.time_unix_nano = 3 (fixed64). start_time
                // (2) stays unset: a gauge has no interval.
                fixed64(p, 3, time_unix_nano);
                // NumberDataPoint.as_int = 6 (sfixed64, the `value` oneof)
                sfixed64(p, 6, *value);
                for (k, v) in ATTRIBUTE_KEYS.iter().zip(attributes.values()) {
                    // NumberDataPoint.attributes = 7
                    message(p, 7, |kv| key_value(kv, k, v));
                }
            });
        }
    });
}

/// A `KeyValue` with a string value.
fn key_value(out: &mut Vec<u8>, key: &str, value: &str) {
    // KeyValue.key = 1
    string(out, 1, key);
    // KeyValue.value = 2: AnyValue.string_value = 1 (a oneof member, so an
    // empty string is written too: it says the value is the empty string).
    message(out, 2, |any| string(any, 1, value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::protobuf::varint;
    use crate::metrics::Attributes;

    /// A length-delimited field: its one-byte key, then the body with its
    /// length (a varint: checked against known bytes in `protobuf`).
    fn field(key: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![key];
        varint(&mut out, body.len() as u64);
        out.extend_from_slice(body);
        out
    }

    fn key_value(k: &str, v: &str) -> Vec<u8> {
        // KeyValue { key = 1, value = 2: AnyValue { string_value = 1 } }
        [
            field(0x0A, k.as_bytes()),
            field(0x12, &field(0x0A, v.as_bytes())),
        ]
        .concat()
    }

    #[test]
    fn a_tiny_request_has_the_expected_bytes() {
        let metrics = [Metric {
            name: "m",
            description: "d",
            points: vec![(
                Attributes {
                    server: "s".into(),
                    ..Default::default()
                },
                2,
            )],
        }];
        let body = encode(&[("k".into(), "v".into())], &metrics, 1);

        // Built outward from the innermost message, so that a wrong field
        // number, wire type or length shows here. A key byte is
        // field << 3 | wire type (0x0A: field 1, length-delimited).
        let mut point = vec![0x19, 1, 0, 0, 0, 0, 0, 0, 0]; // 3: time_unix_nano = 1
        point.extend([0x31, 2, 0, 0, 0, 0, 0, 0, 0]); // 6: as_int = 2
        for (k, v) in ATTRIBUTE_KEYS.iter().zip(["s", "", "", "", ""]) {
            point.extend(field(0x3A, &key_value(k, v))); // 7: attributes
        }
        let metric = [
            field(0x0A, b"m"),                 // 1: name
            field(0x12, b"d"),                 // 2: description
            field(0x1A, b"{finding}"),         // 3: unit
            field(0x2A, &field(0x0A, &point)), // 5: gauge { 1: data_points }
        ]
        .concat();
        let scope = [
            field(0x0A, b"git-kams"),
            field(0x12, env!("CARGO_PKG_VERSION").as_bytes()),
        ]
        .concat();
        let scope_metrics = [field(0x0A, &scope), field(0x12, &metric)].concat();
        let resource = field(0x0A, &key_value("k", "v"));
        let resource_metrics = [field(0x0A, &resource), field(0x12, &scope_metrics)].concat();
        assert_eq!(body, field(0x0A, &resource_metrics));
    }
}
