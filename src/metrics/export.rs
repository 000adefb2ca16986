//! The edge of the metrics: where to send them (the `--otlp-endpoint` flag
//! and the standard `OTEL_*` environment variables), and the one HTTP POST.
//!
//! The variables follow the OpenTelemetry specification's "OTLP Exporter
//! configuration": a signal-specific endpoint is used as it is, the generic
//! one is a base to which `v1/metrics` is appended; headers and resource
//! attributes are `key=value` lists with percent-encoded values; a variable
//! set to the empty string counts as unset. Unlike an SDK, git-kams has no
//! default endpoint: with neither the flag nor a variable, nothing is sent.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use ureq::http::{self, header, HeaderName, HeaderValue};
use ureq::Agent;

use super::SCOPE;
use crate::capture::http::{failed, header_pairs, http_url, status_error};
use crate::text::escape_display;

/// How long the export may take, connecting included: the specification's
/// default exporter timeout.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The path appended to a base endpoint.
const METRICS_PATH: &str = "v1/metrics";

/// Where and how to send the metrics.
#[derive(Debug)]
pub struct Config {
    /// The full URL of the metrics endpoint.
    pub url: String,
    /// Request headers from the environment. Their values are often
    /// credentials: nothing prints them.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Resource attributes: `service.name`, `service.version`, then those
    /// of `OTEL_RESOURCE_ATTRIBUTES`, sorted.
    pub resource: Vec<(String, String)>,
}

impl Config {
    /// The configuration from the `--otlp-endpoint` flag (a base URL) and
    /// the environment (`env` reads a variable), or `None` when neither
    /// names an endpoint.
    pub fn resolve(
        flag: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Config>> {
        // An empty variable is unset, as the specification says.
        let var = |name: &str| env(name).filter(|v| !v.is_empty());
        // Where the URL came from, for an error: the URL itself is not
        // shown, since it may carry credentials.
        let (source, url) = if let Some(base) = flag {
            ("--otlp-endpoint", signal_url(base))
        } else if let Some(url) = var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url)
        } else if let Some(base) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            ("OTEL_EXPORTER_OTLP_ENDPOINT", signal_url(&base))
        } else {
            return Ok(None);
        };
        if http_url(&url).is_none() {
            bail!("{source}: not an absolute http or https URL");
        }
        // The signal-specific list replaces the generic one whole, as in
        // the SDKs: a backend for metrics may want other credentials.
        let headers = [
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ]
        .into_iter()
        .find_map(|name| var(name).map(|v| (name, v)))
        .map(|(name, v)| pairs(&v).and_then(|p| header_pairs(&p)).context(name))
        .transpose()?
        .unwrap_or_default();
        let mut attributes: BTreeMap<String, String> = match var("OTEL_RESOURCE_ATTRIBUTES") {
            Some(v) => pairs(&v)
                .context("OTEL_RESOURCE_ATTRIBUTES")?
                .into_iter()
                .collect(),
            None => BTreeMap::new(),
        };
        // OTEL_SERVICE_NAME wins over a service.name in the attributes.
        let name = var("OTEL_SERVICE_NAME")
            .or_else(|| attributes.remove("service.name"))
            .unwrap_or_else(|| SCOPE.to_string());
        attributes.remove("service.name");
        let version = attributes
            .remove("service.version")
            .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
        let mut resource = vec![
            ("service.name".to_string(), name),
            ("service.version".to_string(), version),
        ];
        resource.extend(attributes);
        Ok(Some(Config {
            url,
            headers,
            resource,
        }))
    }

    /// The endpoint as it can be shown: scheme, host, port and path, never
    /// user information or a query, which may carry credentials.
    pub fn shown_url(&self) -> String {
        match http_url(&self.url) {
            Some(u) => {
                let host = u.host().unwrap_or_default();
                let port = u.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
                let scheme = u.scheme_str().unwrap_or_default();
                escape_display(&format!("{scheme}://{host}{port}{}", u.path()))
            }
            None => "(not a URL)".to_string(),
        }
    }
}

/// Checks a base endpoint given on the command line, so that a typo is a
/// usage error before the scan rather than a warning after it.
pub fn parse_base_url(base: &str) -> Result<String, String> {
    match http_url(&signal_url(base)) {
        Some(_) => Ok(base.to_string()),
        None => Err("not an absolute http or https URL".to_string()),
    }
}

/// A base endpoint with the metrics path appended to its path, whether or
/// not that ends in a slash (`http://c:4318` and `http://c:4318/` both give
/// `http://c:4318/v1/metrics`); a query stays at the end.
fn signal_url(base: &str) -> String {
    let (path, query) = base.split_at(base.find(['?', '#']).unwrap_or(base.len()));
    let slash = if path.ends_with('/') { "" } else { "/" };
    format!("{path}{slash}{METRICS_PATH}{query}")
}

/// A `key=value,key2=value2` list (the W3C Baggage format without
/// properties), whitespace around items trimmed, values percent-decoded.
/// An error says which item is wrong but never shows a value.
fn pairs(list: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, item) in list.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| anyhow!("item {} is not key=value", i + 1))?;
        let key = key.trim();
        if key.is_empty() {
            bail!("item {} has an empty key", i + 1);
        }
        let value = percent_decode(value.trim()).ok_or_else(|| {
            anyhow!(
                "the value of `{}` is not percent-encoded UTF-8",
                escape_display(key)
            )
        })?;
        out.push((key.to_string(), value));
    }
    Ok(out)
}

/// Decodes `%XX` escapes; `None` on a broken escape or a result that is
/// not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// POSTs one OTLP/HTTP protobuf request body; any answer but 2xx, and no
/// answer within [`TIMEOUT`], is an error.
pub fn send(config: &Config, body: Vec<u8>) -> Result<()> {
    let agent: Agent = Agent::config_builder()
        // An error status is reported with its body, not as a failure.
        .http_status_as_error(false)
        // A redirect would carry the configured headers, credentials
        // included, to wherever it points.
        .max_redirects(0)
        // As capture: only the configured endpoint is reached, never a
        // proxy taken from the environment.
        .proxy(None)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("git-kams/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut request = http::Request::post(&config.url).header(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-protobuf"),
    );
    for (name, value) in &config.headers {
        request = request.header(name, value);
    }
    let what = format!("the OTLP endpoint {}", config.shown_url());
    let response = agent
        .run(request.body(body)?)
        .map_err(|e| failed(&what, e))?;
    if !response.status().is_success() {
        return Err(status_error(&what, response));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(flag: Option<&str>, vars: &[(&str, &str)]) -> Result<Option<Config>> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::resolve(flag, &|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    fn url(flag: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        resolve(flag, vars).unwrap().map(|c| c.url)
    }

    #[test]
    fn nothing_is_sent_without_an_endpoint() {
        assert!(url(None, &[]).is_none());
        assert!(url(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "")]).is_none());
        assert!(url(None, &[("OTEL_EXPORTER_OTLP_HEADERS", "a=b")]).is_none());
    }

    #[test]
    fn endpoints_follow_the_specification() {
        let base = "OTEL_EXPORTER_OTLP_ENDPOINT";
        let metrics = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
        assert_eq!(
            url(None, &[(base, "http://c:4318")]).unwrap(),
            "http://c:4318/v1/metrics"
        );
        assert_eq!(
            url(None, &[(base, "http://c:4318/")]).unwrap(),
            "http://c:4318/v1/metrics"
        );
        assert_eq!(
            url(None, &[(base, "https://c/otlp")]).unwrap(),
            "https://c/otlp/v1/metrics"
        );
        // The signal-specific variable is used as it is, and wins.
        assert_eq!(
            url(None, &[(base, "http://a"), (metrics, "http://b/custom")]).unwrap(),
            "http://b/custom"
        );
        // The flag is a base, like OTEL_EXPORTER_OTLP_ENDPOINT, and wins.
        assert_eq!(
            url(Some("http://f:1"), &[(metrics, "http://b/custom")]).unwrap(),
            "http://f:1/v1/metrics"
        );
        assert_eq!(
            url(Some("http://c/p?k=v"), &[]).unwrap(),
            "http://c/p/v1/metrics?k=v"
        );
        assert!(resolve(None, &[(base, "collector:4318")]).is_err());
        assert!(parse_base_url("collector:4318").is_err());
        assert!(parse_base_url("http://127.0.0.1:4318").is_ok());
    }

    #[test]
    fn headers_are_decoded_and_the_metrics_list_replaces_the_generic_one() {
        let c = resolve(
            Some("http://c"),
            &[(
                "OTEL_EXPORTER_OTLP_HEADERS",
                " authorization = Basic%20dTpw , x-b=1,",
            )],
        )
        .unwrap()
        .unwrap();
        let headers: Vec<(&str, &[u8])> = c
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_bytes()))
            .collect();
        assert_eq!(
            headers,
            [("authorization", &b"Basic dTpw"[..]), ("x-b", b"1")]
        );
        let c = resolve(
            Some("http://c"),
            &[
                ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
                ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "b=2"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.headers.len(), 1);
        assert_eq!(c.headers[0].0.as_str(), "b");
    }

    #[test]
    fn a_bad_header_is_named_but_its_value_never_shown() {
        for list in ["token", "=secret", "api-key=sec%ZZret", "bad key=secret"] {
            let e = resolve(Some("http://c"), &[("OTEL_EXPORTER_OTLP_HEADERS", list)]).unwrap_err();
            let shown = format!("{e:#}");
            assert!(shown.contains("OTEL_EXPORTER_OTLP_HEADERS"), "{shown}");
            assert!(
                !shown.contains("secret") && !shown.contains("sec%"),
                "{shown}"
            );
        }
    }

    #[test]
    fn resource_attributes_with_the_service_name_first() {
        let c = resolve(Some("http://c"), &[]).unwrap().unwrap();
        assert_eq!(
            c.resource,
            [
                ("service.name".to_string(), "git-kams".to_string()),
                (
                    "service.version".to_string(),
                    env!("CARGO_PKG_VERSION").to_string()
                ),
            ]
        );
        let c = resolve(
            Some("http://c"),
            &[
                (
                    "OTEL_RESOURCE_ATTRIBUTES",
                    "service.name=x,deployment.environment=ci%2Fnightly",
                ),
                ("OTEL_SERVICE_NAME", "kams-nightly"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.resource[0].1, "kams-nightly");
        assert_eq!(
            c.resource[2],
            (
                "deployment.environment".to_string(),
                "ci/nightly".to_string()
            )
        );
        assert_eq!(c.resource.len(), 3);
    }

    #[test]
    fn the_shown_url_drops_credentials() {
        let c = resolve(Some("https://user:pw@c:8443/p?token=t"), &[])
            .unwrap()
            .unwrap();
        assert_eq!(c.shown_url(), "https://c:8443/p/v1/metrics");
    }
}
