//! The strict JSON reader of inventories and kams.lock: it keeps what
//! ordinary parsers throw away.
//!
//! Descriptors are untrusted input whose every byte may reach a model, so
//! the usual conveniences are dangerous: many parsers accept lone
//! surrogates, NaN or a number that overflows to infinity. This reader
//! refuses all of those with the byte offset and the JSON pointer of the
//! fault, records duplicate keys (keeping the last, as JavaScript's
//! `JSON.parse` does) so that the caller can report them, and bounds
//! nesting so that hostile depth cannot overflow the stack.
//!
//! Why not serde_json, which the documents we write go through: this
//! reader must see two things serde_json does not show. Duplicate keys:
//! `serde_json::Value` silently keeps the last of two, so a descriptor
//! that reads one way to a reviewer and another to a client would pass
//! unreported. Byte positions: `Value` drops them, and every error and
//! finding must name the line, column and JSON pointer it is about.
//!
//! The rooms: `value` is what a document holds; `parser` is the grammar,
//! byte by byte; `reader` reads whole documents or walks them member by
//! member; `pointer` writes RFC 6901 pointers; `locate` turns a pointer or
//! a byte offset into a line and a column; `tree` is a document that
//! borrows its strings from the text (the detectors' read of a tool); `de` reads a parsed document
//! into `#[derive(Deserialize)]` types (the files we import).

pub mod de;
mod locate;
mod parser;
mod pointer;
mod reader;
mod tree;
mod value;

pub use locate::{locate, locate_all, Position};
pub(crate) use parser::plain_run_end;
pub use pointer::{pointer, push_pointer_token, Segment};
pub use reader::{
    parse, parse_many, parse_nested, parse_tree, Document, ParseError, Reader, MAX_DEPTH,
};
pub use tree::{Members, Tree};
pub use value::{Number, Object, Value};
