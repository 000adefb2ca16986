//! Identifiers in prose: which words name a tool (of this server, or of
//! another) or one of this tool's fields (a property of its input or
//! output schema).

use super::code::code_spans;
use super::memo::Asker;
use super::names::ident_words;
use super::rules::Lexicon;
use super::tables::{ACTION_KEYS, NOT_NAMES, SECRET_WORDS, TOOL_ARTICLES, TOOL_NOUNS, TOOL_VERBS};
use super::tokens::{punctuation, Tok, CODE, COLON, PROPREF, QUOTED, TOOLOWN, TOOLX};

/// What [`identifiers`] looks for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Look {
    /// Tools, own or other, and words that are one of this tool's
    /// parameters: their tokens are flagged.
    ForToolsAndParams,
    /// This tool's parameters alone, returned with their index: the
    /// places a string names for data.
    ForCarriers,
}

/// Identifiers in the text: tools (own, or other and tool-shaped) and this
/// tool's parameters; flags their first token. With [`Look::ForCarriers`], only looks
/// for parameters (every word may name one, so this second pass runs only
/// where data moves) and returns them as (token index, parameter index).
///
/// A tool-shaped name in code (see [`super::code`]), after `$` (a query
/// operator) or before `(` (a function called, unless a verb that calls
/// comes before it: "call `sync_profile(url=...)`") is taken for another
/// tool only when the inventory has one of that name; otherwise it is
/// flagged [`CODE`], a name that is no word of the sentence either. But
/// where the text also names a tool of this server, code is a script of
/// tool calls, and such a name that says what it does is another tool.
pub(super) fn identifiers(
    c: &str,
    specials: &[(usize, usize, u32)],
    toks: &mut [Tok],
    ask: &mut Asker<'_>,
    lex: &Lexicon,
    look: Look,
) -> Vec<(usize, usize)> {
    let b = c.as_bytes();
    let mut refs = Vec::new();
    if look == Look::ForToolsAndParams && c.is_ascii() && !may_name_tools(b) {
        return refs;
    }
    let code = match look {
        Look::ForToolsAndParams => code_spans(c),
        Look::ForCarriers => Vec::new(),
    };
    let ident = |ch: char| ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.');
    let mut chars = c.char_indices().peekable();
    let mut first_tok = 0;
    // Calls in code (`name(`, not a method's `obj.name(`) of names that
    // say what they do and are no tool here.
    let mut scripted = Vec::new();
    while let Some((s, ch)) = chars.next() {
        if !ident(ch) {
            continue;
        }
        // Plain: letters and digits only, no camelCase hump.
        let mut plain = ch.is_alphanumeric();
        let mut prev_lower = ch.is_lowercase();
        let mut i = s + ch.len_utf8();
        while let Some(&(k, ch)) = chars.peek() {
            if !ident(ch) {
                break;
            }
            plain &= ch.is_alphanumeric() && !(prev_lower && ch.is_uppercase());
            prev_lower = ch.is_lowercase();
            i = k + ch.len_utf8();
            chars.next();
        }
        let mut e = i;
        while e > s && matches!(b[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let mut s2 = s;
        while s2 < e && matches!(b[s2], b'.' | b'-') {
            s2 += 1;
        }
        if s2 >= e || specials.iter().any(|&(a, z, _)| s2 < z && a < e) {
            continue;
        }
        if c[..s2].trim().is_empty() && c[e..].trim().is_empty() {
            // A text that is one identifier (a property name read as a
            // key) is read for its words: it names nothing else.
            continue;
        }
        let chunk = &c[s2..e];
        let plain = plain
            || (e - s2 < i - s && chunk.chars().all(char::is_alphanumeric) && !tool_shaped(chunk));
        while first_tok < toks.len() && toks[first_tok].start < s2 {
            first_tok += 1;
        }
        let k = first_tok;
        if k >= toks.len() || toks[k].start >= e {
            continue;
        }
        // An identifier reads as one token in evidence, and is followed
        // by what follows its last word (`addNode,`, `createItem:`).
        toks[k].end = toks[k].end.max(e);
        toks[k].flags |= punctuation(b, e) | gloss(c, e);
        let quoted = s2 > 0 && matches!(b[s2 - 1], b'`' | b'\'' | b'"');
        if quoted {
            toks[k].flags |= QUOTED;
        }
        if look == Look::ForCarriers {
            if let Some(p) = ask.param(chunk) {
                toks[k].flags |= PROPREF;
                refs.push((k, p));
            }
            continue;
        }
        // Which field does not matter here, only that it is one: so a
        // reading is reused by tools that declare it at another position.
        if !plain && ask.is_field(chunk) {
            toks[k].flags |= PROPREF;
            continue;
        }
        // `<when_to_use>`, `</usage_notes>`: a tag's name, not a tool's.
        let tag =
            s2 > 0 && (b[s2 - 1] == b'<' || (b[s2 - 1] == b'/' && s2 > 1 && b[s2 - 2] == b'<'));
        if tag {
            continue;
        }
        if !plain && tool_shaped(chunk) {
            let called = after_call_verb(c, s2, lex) || called_after(c, e) || named_tool(c, s2);
            let in_code = !called
                && (code.iter().any(|&(a, z)| a <= s2 && s2 < z)
                    || (s2 > 0 && b[s2 - 1] == b'$')
                    || b.get(e) == Some(&b'(')
                    || after_action_key(c, s2)
                    || before_action_word(c, e));
            // Another server's tool of that name is one, wherever it is
            // written; otherwise a name is taken for a tool outside code
            // only when it says what it does.
            let named_as_tool =
                !in_code && !field_path(chunk) && (says_what_it_does(chunk) || called);
            let flag = name_flag(ask, chunk, named_as_tool);
            // `geo::resolve_owner`: the name starts at its namespace.
            let k = namespace_token(c, s2, toks, k).unwrap_or(k);
            if flag == CODE
                && b.get(e) == Some(&b'(')
                && !chunk.contains('.')
                && (s2 == 0 || b[s2 - 1] != b'$')
                && says_what_it_does(chunk)
            {
                scripted.push(k);
            }
            toks[k].flags |= flag;
            toks[k].end = toks[k].end.max(e);
            continue;
        }
        if constant(chunk, b, s2, e) {
            toks[k].flags |= CODE;
            continue;
        }
        if pascal(chunk) {
            // `BypassCheck`, `DescribeEnvBaseInfo`: an API's name, whose
            // words are no sentence's; a tool if the inventory has it.
            toks[k].flags |= name_flag(ask, chunk, false);
            continue;
        }
        // A plain or kebab-case word names a tool only where the text says
        // so (quoted, or before "tool"); only then is the inventory asked,
        // which costs a look at every server.
        let rest = c[e..].trim_start().as_bytes();
        let before_tool = rest.len() >= 4 && rest[..4].eq_ignore_ascii_case(b"tool");
        if joined_name(chunk) && (after_call_verb(c, s2, lex) || called_after(c, e)) {
            // `claims-prefetch`, `ops-preflight.register`: a name of
            // words joined by `-` or `.`, which a verb calls.
            toks[k].flags |= name_flag(ask, chunk, true);
            continue;
        }
        if chunk.contains('-') && ask.own(chunk) {
            // `send-email`, this server's tool: a name, no verb "send".
            toks[k].flags |= TOOLOWN;
            continue;
        }
        if before_tool && !quoted {
            if let Some(first) = title_name(c, s2, lex) {
                // "run the Registrar Handshake tool": a tool named in
                // words of capitals, which this server does not have.
                let name = c[first..e].split_whitespace().collect::<Vec<_>>().join("_");
                if !ask.own(&name) && !ask.own(chunk) {
                    // Its first word is among the few tokens before this one.
                    if let Some(t) = toks[..k]
                        .iter_mut()
                        .rev()
                        .take_while(|t| t.start >= first)
                        .find(|t| t.start == first)
                    {
                        t.flags |= TOOLX;
                    }
                    continue;
                }
            }
        }
        if !(quoted || before_tool) || NOT_NAMES.contains(&chunk.to_lowercase()) {
            continue;
        }
        if quoted && ask.is_field(chunk) {
            // "the `include` parameter": a name, not the verb.
            toks[k].flags |= PROPREF;
            continue;
        }
        if ask.own(chunk) {
            toks[k].flags |= TOOLOWN;
        } else if ask.other(chunk) {
            toks[k].flags |= TOOLX;
        }
    }
    // Code that calls this server's tools is a script of tool calls
    // ("`auth_handshake(token)` then `convert_units(value)`"): the other
    // calls in it that say what they do are calls of tools it lacks.
    if !scripted.is_empty() && toks.iter().any(|t| t.flags & TOOLOWN != 0) {
        for k in scripted {
            toks[k].flags = toks[k].flags & !CODE | TOOLX;
        }
    }
    refs
}

/// Whether the word before byte `at` (past spaces, quotes and backticks)
/// is a verb that calls (`call`, `invoke`, `run`...), or a call named as a
/// noun: "a call to `wallet_attest`", "calls of x"; past the word for a
/// tool and its article ("call the tool x", "chame a ferramenta x").
fn after_call_verb(c: &str, at: usize, lex: &Lexicon) -> bool {
    let mut text = &c[..at];
    if let Some(ns) = text.strip_suffix("::") {
        // `geo::resolve_owner`: the verb comes before the namespace.
        text = ns.trim_end_matches(|ch: char| ch.is_ascii_alphanumeric() || ch == '_');
    }
    let (mut word, mut before) = last_word(text);
    // "call the tool x", "chame a ferramenta x": the verb comes before
    // the word for a tool and its article.
    if TOOL_NOUNS.iter().any(|n| n.eq_ignore_ascii_case(word)) {
        (word, before) = last_word(before);
        if TOOL_ARTICLES.iter().any(|a| a.eq_ignore_ascii_case(word)) {
            (word, before) = last_word(before);
        }
    }
    let calls = |w: &str| {
        !w.is_empty()
            && lex
                .ids
                .get(w.to_ascii_lowercase().as_str())
                .is_some_and(|&id| lex.call.has(id))
    };
    calls(word)
        || (matches!(word, "to" | "of") && {
            let (noun, _) = last_word(before);
            ["call", "calls", "invocation", "execution"]
                .iter()
                .any(|n| n.eq_ignore_ascii_case(noun))
        })
}

/// The token of the namespace before byte `at` (`geo` of
/// `geo::resolve_owner`), if a `::` joins one to what starts there.
fn namespace_token(c: &str, at: usize, toks: &[Tok], before: usize) -> Option<usize> {
    let ns = c[..at].strip_suffix("::")?;
    let start = ns.len()
        - ns.chars()
            .rev()
            .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
            .map(char::len_utf8)
            .sum::<usize>();
    (start < ns.len()).then_some(())?;
    toks[..before].iter().rposition(|t| t.start == start)
}

/// [`COLON`] when a dash follows a name, as a gloss follows what it
/// defines ("`contact_update` — update contact fields"): the name is
/// being described, not ordered about.
fn gloss(c: &str, at: usize) -> u32 {
    let rest = c[at..].trim_start_matches([' ', '`', '*']);
    if rest.starts_with(['—', '–']) || rest.starts_with("- ") || rest.starts_with("-- ") {
        COLON
    } else {
        0
    }
}

/// Whether the word after byte `at` names what the name is a value of:
/// "use `get_create_metadata` action in `jira_search`" names an action of
/// a tool, not a tool.
fn before_action_word(c: &str, at: usize) -> bool {
    let rest = c[at..].trim_start_matches(['`', '\'', '"', ' ']);
    let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    ACTION_KEYS.contains(&word.to_ascii_lowercase())
}

/// Whether the words after byte `at` (past a call's arguments in
/// parentheses) say that what comes before is called: "`x` must be
/// invoked", "`x(...)` has been called", "`x` needs to have been run",
/// "`x(...)` succeeds", "`x` has completed".
fn called_after(c: &str, at: usize) -> bool {
    let mut rest = &c[at..];
    if rest.starts_with('(') {
        match rest.char_indices().take(300).find(|&(_, ch)| ch == ')') {
            Some((i, _)) => rest = &rest[i + 1..],
            None => return false,
        }
    }
    let words: Vec<&str> = rest
        .trim_start_matches(['`', '\'', '"'])
        .split_whitespace()
        .take(6)
        .map(|w| w.trim_matches(|ch: char| !ch.is_ascii_alphabetic()))
        .collect();
    let be = |w: &str| matches!(w, "be" | "been" | "is" | "are" | "was" | "gets" | "get");
    // "a `wire_preview` call carrying ...": the name of what is called,
    // before the noun for a call.
    let call_noun = |w: &&str| matches!(*w, "call" | "calls" | "invocation" | "invocations");
    // "after `verify_license(...)` succeeds", "once x has returned",
    // "x (must succeed first)": what succeeds or completes was run. Not a
    // bare "returned" ("the `session_id` returned by ..." names a value).
    let done = |w: &str| {
        matches!(
            w,
            "succeeds" | "succeeded" | "completes" | "completed" | "finishes" | "finished"
        )
    };
    let done_after = |p: &[&str]| {
        matches!(p[0], "has" | "have" | "had" | "must" | "should")
            && (done(p[1]) || matches!(p[1], "succeed" | "complete" | "returned" | "received"))
    };
    words.first().is_some_and(call_noun)
        || words.first().is_some_and(|w| done(w))
        || words.windows(2).take(2).any(done_after)
        || words.windows(2).any(|p| {
            be(p[0])
                && matches!(
                    p[1],
                    "called" | "invoked" | "executed" | "run" | "triggered" | "ran"
                )
        })
}

/// Whether the words before byte `at` name what follows as a tool: "a
/// tool named `x`", "the function called x".
fn named_tool(c: &str, at: usize) -> bool {
    let words: Vec<&str> = c[..at]
        .trim_end_matches(['`', '\'', '"', ' '])
        .rsplit(char::is_whitespace)
        .take(2)
        .collect();
    matches!(words.as_slice(), [named, tool]
        if matches!(*named, "named" | "called")
            && matches!(tool.to_ascii_lowercase().as_str(), "tool" | "function" | "command"))
}

/// A name of two words or more joined by `-` or `.` that says what it
/// does, as a tool's name does (`identity-verify`, `ops-preflight.register`:
/// a word of `tool_verbs`); not a file name (`config.json`), nor words
/// written with a hyphen (`server-side`, `repo-scoped`, `e-mail`).
fn joined_name(chunk: &str) -> bool {
    if !chunk.contains(['-', '.']) || chunk.bytes().any(|x| x.is_ascii_uppercase()) {
        return false;
    }
    if let Some((_, ext)) = chunk.rsplit_once('.') {
        if ext.len() <= 5 {
            return false;
        }
    }
    let parts: Vec<&str> = chunk.split(['-', '.']).collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.len() >= 3 && p.bytes().all(|x| x.is_ascii_lowercase()))
        && !parts.iter().any(|p| NOT_NAMES.contains(p))
        && parts.iter().any(|p| TOOL_VERBS.contains(p))
}

/// The start of a name written in capitalised words before "tool" (`the
/// Vault Sync tool`), when it has two words or more, follows "the" or
/// "a", and a verb that calls or "to" comes before that: the byte where
/// its first word starts.
fn title_name(c: &str, end_word: usize, lex: &Lexicon) -> Option<usize> {
    let capital = |w: &str| {
        let mut ch = w.chars();
        ch.next().is_some_and(char::is_uppercase) && ch.all(char::is_lowercase)
    };
    let mut first = end_word;
    let mut words = 1;
    let mut before = &c[..end_word];
    loop {
        let (w, rest) = last_word(before);
        if capital(w) && !rest.ends_with(['.', ':', '\n']) {
            first = rest.len();
            words += 1;
            before = rest;
        } else {
            break;
        }
    }
    let (det, rest) = last_word(before);
    if words < 2 || !matches!(det, "the" | "a") {
        return None;
    }
    let (verb, _) = last_word(rest);
    (after_call_verb(c, rest.len(), lex) || verb == "to").then_some(first)
}

/// The last word of `text` (past spaces, quotes and backticks), and the
/// text before it.
fn last_word(text: &str) -> (&str, &str) {
    let before = text.trim_end_matches([' ', '`', '\'', '"', '\t']);
    let word = before
        .rsplit(|ch: char| !ch.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    (word, &before[..before.len() - word.len()])
}

/// Whether the word before byte `at` (past spaces, quotes, backticks, `=`
/// and `:`) names an action-like parameter (`method`, `action`, `mode`):
/// "use bulk_edit with method 'modify_custom_fields'" gives that
/// parameter a value, and names no tool.
fn after_action_key(c: &str, at: usize) -> bool {
    let (word, _) = last_word(c[..at].trim_end_matches([' ', '`', '\'', '"', '\t', '=', ':']));
    !word.is_empty() && ACTION_KEYS.contains(&word.to_ascii_lowercase())
}

/// Whether an ASCII text may name a tool: a word joined by `_`, `-` or
/// `.`, a camelCase hump, a quoted word, or the word "tool".
fn may_name_tools(b: &[u8]) -> bool {
    b.windows(2).any(|w| {
        (matches!(w[0], b'_' | b'-' | b'.' | b'`' | b'\'' | b'"') && w[1].is_ascii_alphanumeric())
            || (w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
    }) || b.windows(4).any(|w| w.eq_ignore_ascii_case(b"tool"))
}

/// `snake_case`, `camelCase`, `mcp_server_tool` or `server.tool_name`; not
/// an environment variable (`ALL_CAPS`) nor a file name.
fn tool_shaped(s: &str) -> bool {
    if !s.chars().any(|c| c.is_lowercase()) {
        return false;
    }
    if mcp_prefixed(s) {
        return true;
    }
    if let Some((_, ext)) = s.rsplit_once('.') {
        if ext.len() <= 5 && ext.chars().all(|c| c.is_ascii_lowercase()) && !s.contains('_') {
            return false;
        }
    }
    let b = s.as_bytes();
    let snake = b
        .windows(3)
        .any(|w| w[0].is_ascii_alphanumeric() && w[1] == b'_' && w[2].is_ascii_alphabetic());
    // camelCase as tools are named (`sendEmail`, `readGraph`), not brand
    // names (`JavaScript`, `GitHub`, `iPhone`, `macOS`).
    let camel = b.len() >= 4
        && b[0].is_ascii_lowercase()
        && b[1].is_ascii_lowercase()
        && b.windows(3).any(|w| {
            w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_lowercase()
        });
    snake || camel
}

/// The flag of a name: this server's tool, another tool (when the text
/// names it as one, or the inventory has it), or a name in code.
fn name_flag(ask: &mut Asker<'_>, chunk: &str, named_as_tool: bool) -> u32 {
    if ask.own(chunk) {
        TOOLOWN
    } else if named_as_tool || ask.other(chunk) {
        TOOLX
    } else {
        CODE
    }
}

/// Whether a tool-shaped name says what it does, as a tool's name does:
/// its first word is a verb (`sync_profile`, `getDimensionValues`), or its
/// second, after a prefix (`slack_post_message`) or an object
/// (`license_check`); of `server.tool`, the tool. A name of a thing (`template_id`, `toRecipients`,
/// `@odata.deltaLink`) is a field or a variable; so is one that ends in a
/// preposition (`loadOptionsDependsOn`, `sortBy`).
fn says_what_it_does(s: &str) -> bool {
    if mcp_prefixed(s) {
        return true;
    }
    let last = s.rsplit('.').next().unwrap_or(s);
    let words = ident_words(last);
    if words
        .last()
        .is_some_and(|w| matches!(w.as_str(), "on" | "by" | "of" | "for" | "from" | "with"))
    {
        return false;
    }
    let verb = |i: usize| words.get(i).is_some_and(|w| TOOL_VERBS.contains(w));
    // Of three words or more, the last too (`patron_context_upload`).
    verb(0) || verb(1) || (words.len() >= 3 && verb(words.len() - 1))
}

/// A path into a value from a word that names no server
/// (`next.restartPagination`, `this.sendEmail`): a field read off an
/// object, even after a verb that calls.
fn field_path(s: &str) -> bool {
    s.split_once('.')
        .is_some_and(|(head, _)| NOT_NAMES.contains(&head.to_lowercase()))
}

/// `mcp_server_tool`, `mcp-server-tool`: a client's name for a tool.
fn mcp_prefixed(s: &str) -> bool {
    let prefix = s.as_bytes().get(..4);
    prefix.is_some_and(|p| p.eq_ignore_ascii_case(b"mcp_") || p.eq_ignore_ascii_case(b"mcp-"))
}

/// A keyword or a constant, written in capitals: `SET` and `FETCH` between
/// backticks (SQL), `SKIP_WRITE_CONFIRMATION` (an environment variable).
/// A name, whose words are no verbs of the sentence; but a constant that
/// names a secret (`OPENAI_API_KEY`) keeps its words, which say so.
fn constant(chunk: &str, b: &[u8], s: usize, e: usize) -> bool {
    let caps = chunk.len() >= 2
        && chunk.bytes().any(|x| x.is_ascii_uppercase())
        && !chunk.bytes().any(|x| x.is_ascii_lowercase());
    if !caps {
        return false;
    }
    let in_backticks = s > 0 && b[s - 1] == b'`' && b.get(e) == Some(&b'`');
    let joined = chunk.contains('_');
    (in_backticks || joined)
        && !ident_words(chunk)
            .iter()
            .any(|w| SECRET_WORDS.contains(w) || w == "key" || w == "keys")
}

/// `PascalCase` with a hump after a lowercase letter (`BypassCheck`), not
/// one capitalised word.
fn pascal(chunk: &str) -> bool {
    let b = chunk.as_bytes();
    b.first().is_some_and(u8::is_ascii_uppercase)
        && b.iter().all(u8::is_ascii_alphanumeric)
        && b.windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}
