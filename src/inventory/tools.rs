//! Reading a `tools` array, the part of an inventory that is large: each
//! tool read into a tree, or (for a large inventory) only its name and
//! digests, straight from its text and kept as a span of the file, with
//! the help of an earlier reading that knows the tool's text by its name.
//! Which shape the file is, is for [`super::shape`]; what a tool tree
//! becomes, for [`super::build`].

use std::cell::{Cell, RefCell};
use std::path::Path;

use super::build::{build_tool, holds_object, tool_field};
use super::shape::Fail;
#[cfg(doc)]
use super::Inventory;
use super::{text_name, Help, Recall, TextNames, Tool};
use crate::bytes::Shared;
use crate::canon::{write_string, Escape};
use crate::descriptor::{Descriptor, Lazy};
use crate::json::{self, Object};

/// What a reading keeps of each tool.
#[derive(Clone)]
pub(super) enum Keep {
    /// Its descriptor whole, fields and all.
    Trees,
    /// Only its digests and its span of these bytes, from which
    /// [`Inventory::materialize`] rebuilds it on demand.
    Digests(Shared),
}

/// How the tools of one file are read: what is kept of them, the buffers
/// reused from tool to tool, and the help of earlier readings.
pub(super) struct Reading<'e> {
    /// What each tool keeps.
    keep: Keep,
    /// What of the bytes kept by [`Keep::Digests`] was given back as the
    /// tools were read.
    behind: RefCell<crate::bytes::ReleaseBehind>,
    /// Buffers for the tools' canonical texts, kept from tool to tool.
    canonical: RefCell<crate::canon::Canonical>,
    /// What an earlier reading found of each tool's text, by its hash
    /// (with [`Keep::Digests`] only), and whether each text is named.
    help: Help<'e>,
    /// Tools it knew and did not know so far (see
    /// [`Reading::earlier_while_useful`]).
    known: Cell<(usize, usize)>,
}

impl<'e> Reading<'e> {
    /// A reading keeping `keep` of each tool, with `help`.
    pub(super) fn new(keep: Keep, help: Help<'e>) -> Reading<'e> {
        Reading {
            keep,
            behind: Default::default(),
            canonical: Default::default(),
            help,
            known: Default::default(),
        }
    }

    /// The same reading with no earlier one: for the second reading of
    /// a file a tool of which the earlier reading could not help with.
    pub(super) fn without_earlier(&self) -> Reading<'e> {
        let help = Help {
            earlier: None,
            ..self.help
        };
        Reading::new(self.keep.clone(), help)
    }

    /// The earlier reading, while it knows enough of the tools to save
    /// time: a tool it does not know is stepped over and read twice, so
    /// once 64 tools were read and fewer than a third were known (another
    /// inventory's index), the rest are read as without one.
    fn earlier_while_useful(&self) -> Option<&'e dyn Recall> {
        let (hits, misses) = self.known.get();
        self.help
            .earlier
            .filter(|_| hits + misses < 64 || hits * 2 >= misses)
    }

    /// Counts a tool the earlier reading knew (or did not).
    fn count_known(&self, hit: bool) {
        let (hits, misses) = self.known.get();
        self.known
            .set((hits + usize::from(hit), misses + usize::from(!hit)));
    }
}

/// The tools of a `tools` array, the reader at the array: each with its
/// name (NFC), and the keys that collided after normalisation.
pub(super) fn read_tools(
    r: &mut json::Reader<'_>,
    path: &Path,
    reading: &Reading,
) -> Result<Vec<(String, Tool, Vec<String>)>, Fail> {
    let mut list = Vec::new();
    r.array(|r, _| -> Result<(), Fail> {
        let at = r.pointer();
        let Keep::Digests(bytes) = &reading.keep else {
            let v = r.value()?;
            list.push(build_tool(path, v, &at)?);
            return Ok(());
        };
        let start = r.offset();
        let earlier = reading.earlier_while_useful();
        let digested = match earlier {
            None => digest_tool(r, &mut reading.canonical.borrow_mut())?,
            // Stepped over; known by its text below.
            Some(_) => {
                r.skip().map_err(|_| Fail::Retry)?;
                None
            }
        };
        let end = r.offset();
        let text = &(**bytes).as_ref()[start..end];
        let hash = (reading.help.texts == TextNames::Named).then(|| text_name(text));
        let digested = match earlier {
            None => digested,
            Some(earlier) => {
                let known = hash.as_ref().and_then(|h| earlier.recall(h));
                reading.count_known(known.is_some());
                Some(match known {
                    Some(known) => known,
                    None => digest_alone(text, &mut reading.canonical.borrow_mut())
                        .ok_or(Fail::Retry)?,
                })
            }
        };
        let (name, mut tool, collisions) = match digested {
            Some((name, descriptor)) => {
                let pointer = at;
                let tool = Tool {
                    descriptor,
                    pointer,
                    lazy: Lazy::default(),
                    text: None,
                };
                (name, tool, Vec::new())
            }
            None => {
                let (v, _) = json::parse_nested(text, json::MAX_DEPTH)?;
                build_tool(path, v, &at)?
            }
        };
        tool.descriptor.fields = Object::new();
        tool.lazy = Lazy(Some((bytes.clone(), start..end)));
        tool.text = hash;
        reading.behind.borrow_mut().advance(&**bytes, start);
        list.push((name, tool, collisions));
        Ok(())
    })?;
    Ok(list)
}

/// Reads a tool's name and digests straight from its text, as
/// [`build_tool`] then [`Descriptor::new`] would from its tree, without
/// building it. `None` (the tool consumed) when the tool is to be read into
/// a tree instead: when it is not as [`build_tool`] expects (which it then
/// reports), or has keys that NFC changes or that repeat (which
/// [`Descriptor::new`] reports).
fn digest_tool(
    r: &mut json::Reader<'_>,
    c: &mut crate::canon::Canonical,
) -> Result<Option<(String, Descriptor)>, json::ParseError> {
    if r.peek() != Some(b'{') {
        r.value()?;
        return Ok(None);
    }
    let mut ok = true;
    let mut name = None;
    let mut spans: Vec<(&'static str, std::ops::Range<usize>)> = Vec::new();
    c.out.clear();
    r.object(|r, key| -> Result<(), json::ParseError> {
        let Some(field) = crate::descriptor::field_name(tool_field(key))
            .filter(|f| crate::descriptor::TOOL_FIELDS.contains(f))
        else {
            // Not digested; read all the same, as the tree is, so that
            // its duplicate keys are noted.
            r.value()?;
            return Ok(());
        };
        ok &= spans.iter().all(|(f, _)| *f != field);
        let start = c.out.len();
        let expected = match field {
            "name" => b'"',
            f if holds_object(f) => b'{',
            _ => 0,
        };
        if expected != 0 && r.peek() != Some(expected) {
            ok = false;
            r.value()?;
        } else if field == "name" {
            let s = r.string()?.expect("the next value is a string");
            ok &= !s.is_empty();
            let n = crate::canon::nfc(&s);
            write_string(&n, Escape::Jcs, &mut c.out);
            name = Some(n.into_owned());
        } else {
            ok &= crate::descriptor::write_field(field, r, c)?;
        }
        spans.push((field, start..c.out.len()));
        Ok(())
    })?;
    let (true, Some(name)) = (ok, name) else {
        return Ok(None);
    };
    let texts = spans
        .into_iter()
        .map(|(f, span)| (f, &c.out[span]))
        .collect();
    Ok(Some((name, Descriptor::of_texts(texts))))
}

/// [`digest_tool`] of a tool's text read alone, when it reads as most
/// tools do: digested straight from its text, with no key twice (a
/// duplicate key is reported at its place in the file, which a reader of
/// the text alone does not know).
fn digest_alone(text: &[u8], c: &mut crate::canon::Canonical) -> Option<(String, Descriptor)> {
    let mut r = json::Reader::new(text, json::MAX_DEPTH).ok()?;
    let digested = digest_tool(&mut r, c).ok()??;
    (r.at_end() && r.take_duplicates().is_empty()).then_some(digested)
}
