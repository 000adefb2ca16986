//! Whether a package reference names one release: npm and Python specs,
//! git and URL references (pinned by a full commit), and local files.

/// Whether a package reference names one release.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Pin {
    /// A file on this machine: nothing is fetched.
    Local,
    /// One release, or one commit.
    Pinned,
    /// Anything else, and why.
    Unpinned(String),
}

fn is_local(spec: &str) -> bool {
    spec.starts_with('.')
        || spec.starts_with('/')
        || spec.starts_with('~')
        || spec.starts_with("file:")
        || spec.as_bytes().get(1..3) == Some(b":\\")
}

/// A git or URL reference: pinned when it names a full commit.
fn remote_pin(spec: &str) -> Pin {
    let rev = spec.rsplit(['#', '@']).next().unwrap_or("");
    if rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()) {
        Pin::Pinned
    } else {
        Pin::Unpinned(format!(
            "{spec} names a branch, tag or URL whose content can change; name a full commit"
        ))
    }
}

fn is_url_or_git(spec: &str) -> bool {
    [
        "git+",
        "git:",
        "github:",
        "gitlab:",
        "bitbucket:",
        "http:",
        "https:",
    ]
    .iter()
    .any(|p| spec.starts_with(p))
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build`.
pub(super) fn is_exact_version(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// An npm package spec: `name@1.2.3` and `@scope/name@1.2.3` are pinned;
/// no version, a range or a tag (`latest`) is not.
pub(super) fn npm_pin(spec: &str) -> Pin {
    let spec = spec.strip_prefix("npm:").unwrap_or(spec);
    if is_local(spec) {
        return Pin::Local;
    }
    if is_url_or_git(spec) {
        return remote_pin(spec);
    }
    let (scope, rest) = match spec.strip_prefix('@') {
        Some(r) => ("@", r),
        None => ("", spec),
    };
    if scope.is_empty() && rest.contains('/') {
        // `user/repo`: a GitHub shorthand.
        return remote_pin(spec);
    }
    match rest.split_once('@') {
        None => Pin::Unpinned(format!(
            "no version: whatever is newest is fetched; pin one ({spec}@1.2.3)"
        )),
        Some((_, v)) if is_exact_version(v.trim_start_matches(['v', '='])) => Pin::Pinned,
        Some((name, v)) => Pin::Unpinned(format!(
            "version `{v}` is a range or a tag, not one release; pin one ({scope}{name}@1.2.3)"
        )),
    }
}

/// Whether a Python spec may give its version after `@`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum AtVersion {
    /// `uvx pkg@1.2.3`.
    Allowed,
    /// Requirement syntax only (`pkg==1.2.3`).
    NotAllowed,
}

/// A Python requirement: `name==1.2.3` (or `name@1.2.3` for `uvx`) is
/// pinned; a bare name or a range is not.
pub(super) fn python_pin(spec: &str, at: AtVersion) -> Pin {
    if is_local(spec) {
        return Pin::Local;
    }
    if is_url_or_git(spec) || spec.contains(" @ ") {
        return remote_pin(spec);
    }
    if let Some((name, v)) = spec.split_once("===").or_else(|| spec.split_once("==")) {
        let v = v.trim();
        return if v.is_empty() || v.contains('*') || v.contains(',') {
            Pin::Unpinned(format!(
                "`{spec}` is not one release; pin one ({}==1.2.3)",
                name.trim()
            ))
        } else {
            Pin::Pinned
        };
    }
    if at == AtVersion::Allowed {
        if let Some((name, v)) = spec.split_once('@') {
            return if v.is_empty() || v == "latest" {
                Pin::Unpinned(format!(
                    "`{spec}` asks for the newest release; pin one ({name}==1.2.3)"
                ))
            } else {
                Pin::Pinned
            };
        }
    }
    let name: String = spec
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']'))
        .collect();
    if name.len() == spec.len() {
        Pin::Unpinned(format!(
            "no version: whatever is newest is fetched; pin one ({name}==1.2.3)"
        ))
    } else {
        Pin::Unpinned(format!(
            "`{spec}` is a range, not one release; pin one ({name}==1.2.3)"
        ))
    }
}
