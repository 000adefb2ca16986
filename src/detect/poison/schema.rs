//! The schema walk: input and output schemas read as structure rather than
//! prose. Parameters named for a covert channel or a secret, types that are
//! no JSON Schema type, `required` entries that name nothing declared,
//! unknown keywords that hold prose, and external URLs fixed as a value.

use super::names::{fold, ident_words, Param};
use super::reading::{needs_consent, skips_consent};
use super::secrets::names_secret;
use super::signal::{shown, Signal, SignalsByPointer};
use super::tables::{
    known_key, Words, ACTION_KEYS, CONSENT_STEPS, CONSENT_WORDS, COVERT, ORDER_WORDS, SECRET_WORDS,
    SOLICIT_WORDS,
};
use super::tokens::{base_scheme, BUCKET_SCHEMES, HOST_TLDS, NETWORK_SCHEMES, ONE_WAY_SCHEMES};
use crate::json::{push_pointer_token, Members, Tree};

pub(super) struct SchemaWalk<'a> {
    pub(super) signals: &'a mut SignalsByPointer,
    /// Input parameters are collected (and their names checked); output
    /// properties are not parameters, and go to `outputs`.
    pub(super) params: Option<&'a mut Vec<Param>>,
    /// The output schema's property names, and the names a schema takes
    /// as values (`enum`, `const`: `run_pipeline` of an `action`), folded:
    /// names of this tool's own, which its prose may use as it likes.
    pub(super) outputs: &'a mut Vec<String>,
    /// The tool's name (none for an output schema): where it says the tool
    /// deletes, sends, pays or trades, consent turned off by default is
    /// consent to that.
    pub(super) tool: Option<&'a str>,
    pub(super) fixed_urls: &'a mut Vec<String>,
}

/// What `destination_values` calls the examples of a parameter.
const EXAMPLES: &str = "every example";

/// JSON Schema's type names.
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

impl SchemaWalk<'_> {
    pub(super) fn schema(&mut self, v: &Tree<'_>, at: &mut String, name: Option<&str>) {
        let Some(o) = v.as_object() else {
            return;
        };
        let declared: Option<Vec<&str>> = o
            .get("properties")
            .and_then(Tree::as_object)
            .map(|p| p.iter().map(|(k, _)| k).collect());
        for (k, val) in o.iter() {
            let len = at.len();
            at.push('/');
            push_pointer_token(at, k);
            match k {
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => {
                    if let Some(map) = val.as_object() {
                        for (prop, sub) in map.iter() {
                            let l2 = at.len();
                            at.push('/');
                            push_pointer_token(at, prop);
                            if k == "properties" {
                                self.param(prop, at);
                            }
                            // A field of an object that receives data
                            // (`sink.url`, `webhook.endpoint`) receives it.
                            let inherited = name
                                .filter(|p| k == "properties" && receives_data(p))
                                .map(|p| format!("{p}_{prop}"));
                            self.schema(sub, at, Some(inherited.as_deref().unwrap_or(prop)));
                            at.truncate(l2);
                        }
                    }
                }
                "items" | "prefixItems" | "anyOf" | "allOf" | "oneOf" => match val {
                    Tree::Array(list) => {
                        for (i, sub) in list.iter().enumerate() {
                            let l2 = at.len();
                            at.push('/');
                            at.push_str(&i.to_string());
                            self.schema(sub, at, name);
                            at.truncate(l2);
                        }
                    }
                    _ => self.schema(val, at, name),
                },
                "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "additionalItems"
                | "contentSchema" => self.schema(val, at, name),
                "type" => self.schema_type(val, at),
                "required" => {
                    if let (Some(decl), Some(list)) = (&declared, val.as_array()) {
                        for (i, r) in list.iter().enumerate() {
                            let Some(r) = r.as_str() else { continue };
                            if !decl.contains(&r) {
                                let p = format!("{at}/{i}");
                                self.signals.add(
                                    &p,
                                    Signal::UndeclaredRequired,
                                    format!("required names no declared property: {}", shown(r)),
                                );
                            }
                        }
                    }
                }
                "const" => {
                    self.consent_default(val, at, name);
                    if let Some(url) = val.as_str().filter(|s| external_url(s)) {
                        self.fixed(at, url, "const");
                    }
                    self.value_name(val);
                    self.destination_values(val, at, name, "const");
                }
                "enum" => {
                    for v in val.as_array().into_iter().flatten() {
                        self.value_name(v);
                    }
                    if let Some([only]) = val.as_array() {
                        if let Some(url) = only.as_str().filter(|s| external_url(s)) {
                            let p = format!("{at}/0");
                            self.fixed(&p, url, "the only enum value");
                        }
                    }
                    self.destination_values(val, at, name, "every enum value");
                }
                "default" => {
                    self.consent_default(val, at, name);
                    self.secret_values(val, at, name);
                    if let Some(url) = val.as_str().filter(|s| external_url(s)) {
                        if name.is_some_and(destination_like) {
                            self.fixed(at, url, "default of a destination");
                        }
                    }
                    self.destination_values(val, at, name, "default");
                }
                "examples" => self.destination_values(val, at, name, EXAMPLES),
                key if known_key(key) => {}
                // An extension key that says it is where data goes
                // (`x-default-target`, `x-report-sink`) with a remote
                // address: a default destination by another name.
                key if key.starts_with("x-")
                    && val.as_str().is_some_and(external_url)
                    && has_word(
                        key,
                        &[
                            "default",
                            "target",
                            "destination",
                            "sink",
                            "deliver",
                            "delivery",
                            "forward",
                            "upload",
                            "mirror",
                            "collector",
                            "report",
                        ],
                    ) =>
                {
                    let url = val.as_str().unwrap_or_default();
                    self.signals.add(
                        at,
                        Signal::DestinationDefault,
                        format!(
                            "the extension key `{key}` names where data goes, a remote address: {}",
                            shown(url)
                        ),
                    );
                }
                // An extension key that says when to call (`x-before-invoke`,
                // `x-post-hook`) holding a call (`sync.upload_all(src=...)`):
                // a prerequisite call written as data.
                key if key.starts_with("x-")
                    && val.as_str().is_some_and(call_expression)
                    && has_word(
                        key,
                        &[
                            "before",
                            "after",
                            "pre",
                            "post",
                            "invoke",
                            "call",
                            "hook",
                            "first",
                            "then",
                            "prerequisite",
                            "requires",
                        ],
                    ) =>
                {
                    let call = val.as_str().unwrap_or_default();
                    self.signals.add(
                        at,
                        Signal::CallOtherTool,
                        format!("the extension key `{key}` orders a call: {}", shown(call)),
                    );
                }
                _ => {
                    if let Some(s) = val.as_str() {
                        if s.split_whitespace().count() >= 3 {
                            self.signals.add(
                                at,
                                Signal::UnknownKeywordProse,
                                format!("`{k}` is no JSON Schema keyword and holds prose"),
                            );
                        }
                    }
                }
            }
            at.truncate(len);
        }
    }

    /// A flag whose fixed or default value acts without the person's
    /// consent: `auto_approve` true, `require_confirmation` false.
    fn consent_default(&mut self, val: &Tree<'_>, at: &str, name: Option<&str>) {
        let Some(name) = name else {
            return;
        };
        // The person's answer written in beforehand: a key that names
        // their approval or consent, fixed or preset to "granted".
        if let Some(s) = val.as_str() {
            let given = matches!(
                s.trim().to_ascii_lowercase().as_str(),
                "granted" | "approved" | "given" | "consented" | "accepted"
            );
            // Someone's approval (`customer_approval`), not a bare
            // `confirm` whose fixed "yes" the model passes once the
            // person has said it.
            let words = ident_words(name);
            if given
                && words.len() >= 2
                && words
                    .iter()
                    .any(|w| CONSENT_STEPS.contains(w) || CONSENT_WORDS.contains(w))
            {
                self.signals.add(
                    at,
                    Signal::ConsentBypass,
                    format!(
                        "`{}` is {} before anyone is asked: the answer is written in",
                        shown(name),
                        shown(s)
                    ),
                );
            }
            return;
        }
        let Some(on) = val.as_bool() else {
            return;
        };
        let words = ident_words(name);
        if (on && skips_consent(&words)) || (!on && needs_consent(&words)) {
            self.signals.add(
                at,
                Signal::ConsentBypass,
                format!(
                    "`{}` is {on} unless the caller says otherwise: consent is off by default",
                    shown(name)
                ),
            );
            if self.tool.is_some_and(super::risky_name) {
                self.signals.add(
                    at,
                    Signal::UnconfirmedAction,
                    "consent is off by default for a tool whose name deletes, sends, pays or trades"
                        .into(),
                );
            }
        }
    }

    pub(super) fn fixed(&mut self, at: &str, url: &str, what: &str) {
        self.fixed_urls.push(url.to_string());
        if self.params.is_some() {
            self.signals.add(
                at,
                Signal::FixedDestination,
                format!("{what} is an external URL: {}", shown(url)),
            );
        }
    }

    /// A remote address (an external URL or an e-mail address) as the
    /// `default`, `const`, every `enum` value or every example of a
    /// parameter that receives data (a webhook, a mirror, a recipient): the
    /// data goes there unless the user says otherwise. The pointer is the
    /// one value's, or, for a list, the list's (the first value's when
    /// the list holds one, as `fixed-destination` has it).
    ///
    /// A value whose URL path says it takes data in (`/upload`,
    /// `/ingest`) receives data whatever its parameter is called. A
    /// `default` list is every value used at once: one remote address in
    /// it is enough (`["http://localhost:8765", "https://in.x.biz/bulk"]`).
    fn destination_values(&mut self, v: &Tree<'_>, at: &str, name: Option<&str>, what: &str) {
        if self.params.is_none() {
            return;
        }
        let receives = |s: &str| name.is_some_and(receives_data) || receiving_url(s);
        let illustrative = what == EXAMPLES;
        let remote_address = |s: &str| remote_address(s, illustrative);
        let (pointer, first) = match v {
            Tree::String(s) => (at.to_string(), &**s),
            Tree::Array(list) => {
                let all: Option<Vec<&str>> = list.iter().map(Tree::as_str).collect();
                match all.as_deref() {
                    Some([only]) => (format!("{at}/0"), *only),
                    Some(l @ [first, ..]) if l.iter().all(|s| remote_address(s)) => {
                        (at.to_string(), *first)
                    }
                    Some(l) if what == "default" => {
                        match l.iter().position(|s| remote_address(s) && receives(s)) {
                            Some(k) => (format!("{at}/{k}"), l[k]),
                            None => return,
                        }
                    }
                    _ => return,
                }
            }
            _ => return,
        };
        if !receives(first) {
            return;
        }
        if remote_address(first) {
            self.signals.add(
                &pointer,
                Signal::DestinationDefault,
                format!(
                    "{what} of a parameter that receives data is a remote address: {}",
                    shown(first)
                ),
            );
        }
    }

    /// A secret's path as the `default` of a parameter that carries files
    /// out (`include_files`, `attachments`): every call that keeps the
    /// default sends the secret (`["config.yaml", "secrets.yaml"]`). Not a
    /// key's path a tool uses to connect (`private_key_path`).
    fn secret_values(&mut self, v: &Tree<'_>, at: &str, name: Option<&str>) {
        if !name.is_some_and(carries_files) {
            return;
        }
        let secret = |s: &&str| names_secret(s);
        let found = match v {
            Tree::String(s) => Some((at.to_string(), &**s)).filter(|(_, s)| secret(s)),
            Tree::Array(list) => list.iter().enumerate().find_map(|(k, x)| {
                let s = x.as_str().filter(secret)?;
                Some((format!("{at}/{k}"), s))
            }),
            _ => None,
        };
        if let Some((pointer, path)) = found {
            self.signals.add(
                &pointer,
                Signal::ReadSecret,
                format!(
                    "default of a parameter that carries files out names a secret: {}",
                    shown(path)
                ),
            );
        }
    }

    fn schema_type(&mut self, v: &Tree<'_>, at: &str) {
        let check = |s: &str| TYPES.contains(&s);
        match v {
            Tree::String(s) if !check(s) => {
                self.signals.add(
                    at,
                    Signal::SchemaType,
                    format!("not a JSON Schema type: {}", shown(s)),
                );
            }
            Tree::Array(list) => {
                for (i, t) in list.iter().enumerate() {
                    if let Some(s) = t.as_str().filter(|s| !check(s)) {
                        self.signals.add(
                            &format!("{at}/{i}"),
                            Signal::SchemaType,
                            format!("not a JSON Schema type: {}", shown(s)),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// Records a value that is a name (`run_pipeline`, `getDimensionValues`).
    fn value_name(&mut self, v: &Tree<'_>) {
        let Some(s) = v.as_str() else { return };
        let name = (3..=64).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if name {
            own_name(self.outputs, fold(s));
        }
    }

    /// Records an input parameter and judges its name.
    pub(super) fn param(&mut self, name: &str, at: &str) {
        let Some(params) = self.params.as_deref_mut() else {
            let folded = fold(name);
            if folded.chars().count() >= 3 {
                own_name(self.outputs, folded);
            }
            return;
        };
        let folded = fold(name);
        if folded.chars().count() >= 3 {
            params.push(Param {
                name: name.to_string(),
                folded: folded.clone(),
                pointer: at.to_string(),
            });
        }
        if COVERT.contains(&folded) {
            self.signals.add(
                at,
                Signal::CovertParameter,
                format!("a parameter named like a side channel: {}", shown(name)),
            );
        }
        let words = ident_words(name);
        let has = |list: Words| words.iter().any(|w| list.contains(w));
        let pair = |a: &str, b: &[&str]| {
            words
                .windows(2)
                .any(|w| w[0] == a && b.contains(&w[1].as_str()))
        };
        let secret = has(SECRET_WORDS)
            || pair("private", &["key", "keys"])
            || pair("api", &["key", "keys"])
            || pair("env", &["file", "vars", "variables"])
            || pair("id", &["rsa", "dsa", "ecdsa", "ed25519"]);
        let solicits = has(SOLICIT_WORDS)
            || words.windows(2).any(|w| {
                matches!(w[0].as_str(), "content" | "contents" | "output" | "value")
                    && matches!(w[1].as_str(), "from" | "of")
            });
        if secret && solicits {
            self.signals.add(
                at,
                Signal::SecretParameter,
                format!("the parameter's name asks for a secret: {}", shown(name)),
            );
        }
        if words.len() >= 5 && has(ORDER_WORDS) {
            self.signals.add(
                at,
                Signal::InstructionName,
                format!("the parameter's name is an instruction: {}", shown(name)),
            );
        }
    }
}

/// Parameter names whose default is where something is sent.
fn destination_like(name: &str) -> bool {
    let f = fold(name);
    [
        "dest",
        "recipient",
        "webhook",
        "callback",
        "upload",
        "exfil",
        "report",
        "sink",
        "collector",
        "endpoint",
    ]
    .iter()
    .any(|w| f.contains(w))
}

/// Parameters that carry files out with the call: attachments, files to
/// include, upload or bundle.
fn carries_files(name: &str) -> bool {
    has_word(
        name,
        &[
            "attach",
            "attachment",
            "attachments",
            "include",
            "includes",
            "upload",
            "uploads",
            "bundle",
            "files",
            "payload",
        ],
    )
}

/// Whether one of the words of a name or key (`x-default-target`:
/// x, default, target) is one of `words`.
fn has_word(name: &str, words: &[&str]) -> bool {
    ident_words(name)
        .iter()
        .any(|w| words.contains(&w.as_str()))
}

/// Parameters that receive what the tool sends or writes: where a fixed
/// remote address is a standing order to send data there. Not an API's
/// endpoint or base URL, whose default is the vendor's own.
fn receives_data(name: &str) -> bool {
    let f = fold(name);
    let words = ident_words(name);
    [
        "webhook",
        "callback",
        "mirror",
        "sink",
        "collector",
        "ingest",
        "relay",
        "report",
        "notify",
        "forward",
        "recipient",
        "dest",
        "upload",
        "backup",
        "telemetry",
        "proxy",
        "replica",
        "archive",
        "deliver",
        "share",
        "syslog",
        "intake",
    ]
    .iter()
    .any(|w| f.contains(w))
        || words.iter().any(|w| {
            matches!(
                w.as_str(),
                "to" | "cc" | "bcc" | "sync" | "push" | "log" | "logs"
            )
        })
}

/// Adds a folded name of this tool's own (a property, a value, an
/// operation) to `outputs`, once.
fn own_name(outputs: &mut Vec<String>, folded: String) {
    if !outputs.contains(&folded) {
        outputs.push(folded);
    }
}

/// An external URL, or an e-mail address (`mailto:` or bare). In an
/// example (`illustrative`), not on a documentation host (`example.com`,
/// `*.example`): an example shows the shape of a value the user gives. A
/// `default`, a `const` or an `enum` value is what the client sends when
/// the user gives nothing, and a reserved host there is a destination
/// like any other (a test of the rule names one; so may an attack that
/// is being tried out).
fn remote_address(s: &str, illustrative: bool) -> bool {
    let s = s.trim();
    let email = {
        let a = s.strip_prefix("mailto:").unwrap_or(s);
        a.split_once('@').is_some_and(|(l, d)| {
            !l.is_empty()
                && !l.contains(char::is_whitespace)
                && d.contains('.')
                && d.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        })
    };
    let lower = s.to_ascii_lowercase();
    let documentation = [
        "example.com",
        "example.org",
        "example.net",
        ".example",
        ".test",
        ".invalid",
    ]
    .iter()
    .any(|d| {
        lower
            .split(['/', '@', ':', '?', '#'])
            .any(|part| part == d.trim_start_matches('.') || part.ends_with(d))
    });
    (email || external_url(s) || bare_host(&lower)) && !(illustrative && documentation)
}

/// A host name under a top-level domain a host is named with (not a file
/// extension: `report.pdf`), or a public IPv4 address, and maybe a port,
/// written with no scheme (`logs.partner-siem.net:514`, `203.0.113.9:4444`):
/// where a syslog or a report goes.
fn bare_host(lower: &str) -> bool {
    let (host, port) = lower.split_once(':').unwrap_or((lower, ""));
    if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
        // An address on the internet (`203.0.113.9:4444`), not this
        // machine's nor one of a private network's.
        return port.bytes().all(|b| b.is_ascii_digit())
            && !(ip.is_loopback() || ip.is_private() || ip.is_unspecified() || ip.is_link_local());
    }
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        && labels.last().is_some_and(|t| HOST_TLDS.contains(t))
        && port.bytes().all(|b| b.is_ascii_digit())
        && host != "localhost"
}

/// A call written out: a name (a namespace may lead it, `sync.upload`,
/// `geo::resolve`) and its arguments in parentheses.
fn call_expression(s: &str) -> bool {
    let s = s.trim();
    let Some((name, rest)) = s.split_once('(') else {
        return false;
    };
    !name.is_empty()
        && name.contains(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
        && rest.trim_end().ends_with(')')
}

/// A URL whose path names a place that takes data in, or whose scheme
/// carries data one way ([`ONE_WAY_SCHEMES`]).
fn receiving_url(s: &str) -> bool {
    let lower = s.trim().to_ascii_lowercase();
    let Some((scheme, rest)) = lower.split_once("://") else {
        return false;
    };
    if ONE_WAY_SCHEMES.contains(&base_scheme(scheme)) {
        return true;
    }
    let path = rest.split_once('/').map_or("", |(_, p)| p);
    path.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        matches!(
            w,
            "upload"
                | "uploads"
                | "ingest"
                | "intake"
                | "collect"
                | "collector"
                | "bulk"
                | "sink"
                | "hook"
                | "hooks"
                | "webhook"
                | "beacon"
                | "exfil"
                | "drop"
                | "dump"
                | "push"
        )
    })
}

/// An absolute URL to a host that is not this machine: the web's schemes,
/// and those of streams, logs and queues that data is sent to (`rtmp`,
/// `udp`, `syslog`, `mqtt`...).
fn external_url(s: &str) -> bool {
    let lower = s.trim().to_ascii_lowercase();
    let Some((scheme, rest)) = lower.split_once("://") else {
        return false;
    };
    let scheme = base_scheme(scheme);
    if !(NETWORK_SCHEMES.contains(&scheme) || BUCKET_SCHEMES.contains(&scheme)) {
        return false;
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or("");
    let host = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or("")
    };
    !(host.is_empty()
        || host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "::1"
        || host == "0.0.0.0")
}

/// The operations of a tool that takes one as an argument (`operation`,
/// `action`): the `snake_case` names its action parameter's description
/// lists ("One of: get_workload_estimate, get_preferences"), and the values
/// its description gives that parameter (`operation="get_contract_details"`,
/// `{"operation": "get_charge_summary"}`). They are this tool's own, no
/// other tool ("call get_contract_details first"), so they go to `outputs`
/// with the names the schemas take as values.
pub(super) fn operation_names(tool: &Members<'_>, outputs: &mut Vec<String>) {
    let mut push = |name: &str| {
        let folded = fold(name);
        if name.contains('_') && folded.len() >= 3 {
            own_name(outputs, folded);
        }
    };
    let action_key = |k: &str| ident_words(k).iter().any(|w| ACTION_KEYS.contains(w));
    let props = tool
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Tree::as_object);
    let Some(props) = props else { return };
    let actions: Vec<(&str, &Tree<'_>)> = props.iter().filter(|(k, _)| action_key(k)).collect();
    if actions.is_empty() {
        return;
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for (_, prop) in &actions {
        if let Some(d) = prop.get("description").and_then(Tree::as_str) {
            d.split(|c: char| !ident(c)).for_each(&mut push);
        }
    }
    let Some(d) = tool.get("description").and_then(Tree::as_str) else {
        return;
    };
    for (key, _) in actions {
        for (at, _) in d.match_indices(key) {
            let rest = d[at + key.len()..].trim_start_matches(['"', '\'', ' ']);
            let Some(rest) = rest.strip_prefix(['=', ':']) else {
                continue;
            };
            let value = rest.trim_start_matches([' ', '"', '\'']);
            push(value.split(|c: char| !ident(c)).next().unwrap_or(""));
        }
    }
}
