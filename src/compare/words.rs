//! The word diff that drift evidence shows for a changed text (a
//! description, instructions, a schema's words), in the notation of
//! `git diff --word-diff=plain`, and bounded: a text of any length costs
//! no more than the limit.

/// A word-level diff in `git diff --word-diff=plain` notation:
/// `[-removed-]{+added+}`. Changed words separated only by spaces form one
/// run, so a rewritten sentence reads as one replacement.
pub fn word_diff(old: &str, new: &str) -> String {
    if old.len() + new.len() <= MAX_WORD_DIFF {
        return myers_word_diff(old, new);
    }
    // Only the middle that differs is diffed, and past the limit it is
    // shown as one replacement.
    let (head, tail) = common_ends(old, new);
    let (a, b) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let middle = if a.len() + b.len() <= MAX_WORD_DIFF {
        myers_word_diff(a, b)
    } else {
        let mut m = String::new();
        if !a.is_empty() {
            m.push_str(&format!("[-{a}-]"));
        }
        if !b.is_empty() {
            m.push_str(&format!("{{+{b}+}}"));
        }
        m
    };
    format!("{}{middle}{}", &old[..head], &old[old.len() - tail..])
}

/// Longest pair of texts (bytes, both sides) diffed word by word. Myers'
/// diff costs the length times the number of edits, so a long text that
/// replaced a short one would hold a scan for as long as the server
/// chose.
const MAX_WORD_DIFF: usize = 64 * 1024;

/// Lengths in bytes of the common start and end of `a` and `b`, not
/// overlapping, cut back to whole words (the start ends after a
/// whitespace, the end begins with one).
fn common_ends(a: &str, b: &str) -> (usize, usize) {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let mut head = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    while !a.is_char_boundary(head) {
        head -= 1;
    }
    head = a[..head]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let room = x.len().min(y.len()) - head;
    let mut tail = x
        .iter()
        .rev()
        .zip(y.iter().rev())
        .take(room)
        .take_while(|(p, q)| p == q)
        .count();
    while !a.is_char_boundary(a.len() - tail) {
        tail -= 1;
    }
    let end = &a[a.len() - tail..];
    tail = end
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, _)| end.len() - i);
    (head, tail)
}

fn myers_word_diff(old: &str, new: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_words(old, new);
    let (mut out, mut del, mut ins, mut gap) =
        (String::new(), String::new(), String::new(), String::new());
    let flush = |out: &mut String, del: &mut String, ins: &mut String| {
        if !del.is_empty() {
            out.push_str(&format!("[-{del}-]"));
        }
        if !ins.is_empty() {
            out.push_str(&format!("{{+{ins}+}}"));
        }
        del.clear();
        ins.clear();
    };
    for change in diff.iter_all_changes() {
        let v = change.value();
        match change.tag() {
            ChangeTag::Delete => {
                if !gap.is_empty() {
                    del.push_str(&gap);
                    ins.push_str(&std::mem::take(&mut gap));
                }
                del.push_str(v);
            }
            ChangeTag::Insert => {
                if !gap.is_empty() {
                    del.push_str(&gap);
                    ins.push_str(&std::mem::take(&mut gap));
                }
                ins.push_str(v);
            }
            ChangeTag::Equal if v.trim().is_empty() && !(del.is_empty() && ins.is_empty()) => {
                gap.push_str(v)
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut del, &mut ins);
                out.push_str(&std::mem::take(&mut gap));
                out.push_str(v);
            }
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out.push_str(&gap);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diff_marks_changed_words() {
        assert_eq!(
            word_diff("read a file", "read the file"),
            "read [-a-]{+the+} file"
        );
    }

    /// Past the limit only the middle that differs is diffed, and a
    /// middle past it too is one replacement (diffed, it would take as
    /// long as the text is long times its edits).
    #[test]
    fn word_diff_of_long_texts_diffs_the_middle_or_replaces_it() {
        let pad = "word ".repeat(MAX_WORD_DIFF / 5);
        let (old, new) = (
            format!("{pad}read a file {pad}"),
            format!("{pad}read the file {pad}"),
        );
        assert_eq!(
            word_diff(&old, &new),
            format!("{pad}read [-a-]{{+the+}} file {pad}")
        );
        let long = "Reads a file. ".repeat(MAX_WORD_DIFF / 7);
        assert_eq!(word_diff("Adds.", &long), format!("[-Adds.-]{{+{long}+}}"));
    }
}
