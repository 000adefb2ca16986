//! Reading an entry as this build writes it, without building a tree:
//! each descriptor field's text is hashed where it stands and checked
//! against its recorded digest. Anything else falls back to the strict
//! reader of [`super::read`], which says what is wrong and where.

use std::sync::Arc;

use super::format::{share_approval, Approval, Entry, LockError, State};
use crate::canon::{write_string, Digest, Escape};
use crate::descriptor::{Descriptor, FieldDigests};
use crate::json;

/// Reads an entry as this build writes it, without building any tree:
/// its members are read into their types, and each descriptor field's text
/// is hashed as it stands in the file. A field whose text is ASCII and
/// hashes to its recorded digest is, by SHA-256's collision resistance,
/// exactly the canonical form of its value, so it is verified without
/// parsing. Returns `None` (having consumed the entry) when anything is not
/// as written here, or does not verify; the caller then reads the entry the
/// strict way, which accepts what it accepts and says what is wrong and
/// where.
pub(super) fn fast_entry(
    r: &mut json::Reader<'_>,
    bytes: &[u8],
    tool: Option<&str>,
    last: &mut Option<Arc<Approval>>,
) -> Result<Option<Entry>, LockError> {
    let mut odd = false;
    let mut state = None;
    let mut digest = None;
    let mut recorded: Option<FieldDigests> = None;
    let mut first_seen = None;
    let mut approval = None;
    let mut raw: Option<Vec<(&'static str, std::ops::Range<usize>)>> = None;
    // Steps over a member that is not an object, which makes the entry odd.
    let object = |r: &mut json::Reader<'_>, odd: &mut bool| -> Result<bool, LockError> {
        if r.peek() == Some(b'{') {
            return Ok(true);
        }
        *odd = true;
        r.skip()?;
        Ok(false)
    };
    r.object(|r, key| -> Result<(), LockError> {
        match key {
            "state" => state = r.string()?.as_deref().and_then(State::parse),
            "digest" => digest = r.string()?.as_deref().and_then(Digest::parse),
            "first_seen" => first_seen = r.string()?.map(std::borrow::Cow::into_owned),
            "fields" if object(r, &mut odd)? => {
                // Compared with the texts' own, then dropped: room for
                // any fields at once.
                let mut digests = FieldDigests::with_capacity(crate::descriptor::TOOL_FIELDS.len());
                r.object(|r, field| -> Result<(), LockError> {
                    let d = r.string()?.as_deref().and_then(Digest::parse);
                    match (crate::descriptor::field_name(field), d) {
                        (Some(name), Some(d)) => digests.insert(name, d),
                        _ => odd = true,
                    }
                    Ok(())
                })?;
                recorded = Some(digests);
            }
            "approval" if object(r, &mut odd)? => {
                let (mut approver, mut at, mut note) = (None, None, None);
                r.object(|r, key| -> Result<(), LockError> {
                    let slot = match key {
                        "approver" => &mut approver,
                        "at" => &mut at,
                        "note" => &mut note,
                        _ => {
                            odd = true;
                            return Ok(r.skip()?);
                        }
                    };
                    *slot = r.string()?;
                    Ok(())
                })?;
                match (approver, at, note) {
                    (Some(approver), Some(at), Some(note)) => {
                        approval = Some(share_approval(approver, at, note, last));
                    }
                    _ => odd = true,
                }
            }
            "descriptor" if object(r, &mut odd)? => {
                let mut spans = Vec::new();
                r.object(|r, field| -> Result<(), LockError> {
                    let start = r.offset();
                    r.skip()?;
                    match crate::descriptor::field_name(field) {
                        Some(name) => spans.push((name, start..r.position())),
                        None => odd = true,
                    }
                    Ok(())
                })?;
                raw = Some(spans);
            }
            "fields" | "approval" | "descriptor" => {}
            _ => {
                odd = true;
                r.skip()?;
            }
        }
        Ok(())
    })?;
    let (false, Some(state), Some(digest), Some(recorded), Some(first_seen), Some(raw)) =
        (odd, state, digest, recorded, first_seen, raw)
    else {
        return Ok(None);
    };
    if state.is_decided() != approval.is_some() {
        return Ok(None);
    }
    let Some(descriptor) = verify_raw(digest, recorded, raw, bytes, tool) else {
        return Ok(None);
    };
    Ok(Some(Entry {
        state,
        descriptor,
        first_seen,
        approval,
        lazy: Default::default(),
    }))
}

/// The descriptor of an entry whose field texts (`raw`, spans of `bytes`)
/// hash to its recorded digests; `None` when they do not, or when a text is
/// not ASCII, not one of the entry's fields or not the entry's key.
fn verify_raw(
    digest: Digest,
    recorded: FieldDigests,
    raw: Vec<(&'static str, std::ops::Range<usize>)>,
    bytes: &[u8],
    tool: Option<&str>,
) -> Option<Descriptor> {
    if recorded.len() != raw.len() {
        return None;
    }
    let allowed = digested_fields(tool);
    let mut texts = Vec::with_capacity(raw.len());
    for (name, span) in raw {
        let text = &bytes[span];
        if !allowed.contains(&name) || !text.is_ascii() {
            return None;
        }
        texts.push((name, text));
    }
    let descriptor = Descriptor::of_texts(texts);
    if descriptor.digest != digest || descriptor.field_digests != recorded {
        return None;
    }
    if let Some(tool) = tool {
        let mut expected = Vec::new();
        write_string(tool, Escape::Jcs, &mut expected);
        if descriptor.field_digests.get("name") != Some(&Digest::of(&expected)) {
            return None;
        }
    }
    Some(descriptor)
}

/// The fields a tool entry (`tool` is its key) or a server entry holds.
pub(super) fn digested_fields(tool: Option<&str>) -> &'static [&'static str] {
    if tool.is_some() {
        &crate::descriptor::TOOL_FIELDS
    } else {
        &crate::descriptor::SERVER_FIELDS
    }
}
