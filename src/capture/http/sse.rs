//! Server-sent events (the WHATWG event-stream format), read from bytes
//! one event at a time. Both HTTP transports carry messages this way, and
//! a stream is the server's to fill: every line and event is held to the
//! message cap, and all the streams of one session together to one limit.

use std::io::{self, BufRead};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{bail, Result};

use super::response::{read_failed, too_big};

/// Room on one SSE line above the message cap, for the field name ("data: ").
pub(super) const LINE_SLACK: usize = 64;

/// One dispatched server-sent event.
pub(super) struct SseEvent {
    /// The event type; `message` when the event named none.
    pub(super) kind: String,
    pub(super) data: Vec<u8>,
}

/// Bytes of unfinished events held by all the streams of one session,
/// against one limit: each stream alone is held to the message cap, and
/// together they are held to about the same, however many streams the
/// server opens.
#[derive(Clone)]
pub(super) struct HeldBytes {
    pub(super) total: Arc<AtomicUsize>,
    pub(super) limit: usize,
}

/// Reads server-sent events (the WHATWG event-stream format) from bytes,
/// never holding a line or an event's data past the message cap.
///
/// `id` and `retry` are read past: this client does not resume streams.
pub(super) struct SseReader<R> {
    input: R,
    max_message: usize,
    line: Vec<u8>,
    /// The last line ended in CR, so a LF right after it belongs to it.
    after_cr: bool,
    /// The first line was read, and a byte order mark before it dropped.
    bom_checked: bool,
    /// The session's count, when it shares one between streams.
    held: Option<HeldBytes>,
    /// Bytes of the event being read (data and type), besides the line.
    pending: usize,
    /// What this reader added to `held`.
    counted: usize,
}

impl<R: BufRead> SseReader<R> {
    pub(super) fn new(input: R, max_message: usize) -> SseReader<R> {
        SseReader {
            input,
            max_message,
            line: Vec::new(),
            after_cr: false,
            bom_checked: false,
            held: None,
            pending: 0,
            counted: 0,
        }
    }

    /// Counts what this reader holds in `held` with the other streams'.
    pub(super) fn sharing(mut self, held: HeldBytes) -> SseReader<R> {
        self.held = Some(held);
        self
    }

    /// Brings this reader's share of the count up to date; past the limit,
    /// an error.
    fn account(&mut self) -> Result<()> {
        let Some(held) = &self.held else {
            return Ok(());
        };
        let now = self.line.len().saturating_add(self.pending);
        if now >= self.counted {
            let more = now - self.counted;
            let total = held.total.fetch_add(more, Ordering::SeqCst) + more;
            self.counted = now;
            if total > held.limit {
                bail!(
                    "the server's event streams hold more than {} bytes of unfinished messages at once",
                    held.limit
                );
            }
        } else {
            held.total.fetch_sub(self.counted - now, Ordering::SeqCst);
            self.counted = now;
        }
        Ok(())
    }

    /// The next event with data; `None` at the end of the stream.
    pub(super) fn next_event(&mut self) -> Result<Option<SseEvent>> {
        let mut kind = String::new();
        let mut data: Vec<u8> = Vec::new();
        let mut has_data = false;
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            if !self.bom_checked {
                self.bom_checked = true;
                if self.line.starts_with(b"\xEF\xBB\xBF") {
                    self.line.drain(..3);
                }
            }
            let line = self.line.as_slice();
            if line.is_empty() {
                // Events without data are not dispatched. That includes the
                // priming event (an id and an empty data field) that the spec
                // has servers send first on a stream.
                self.pending = 0;
                self.account()?;
                if !data.is_empty() {
                    if kind.is_empty() {
                        kind.push_str("message");
                    }
                    return Ok(Some(SseEvent { kind, data }));
                }
                kind.clear();
                has_data = false;
                continue;
            }
            if line[0] == b':' {
                continue; // a comment, often a keep-alive
            }
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(i) => {
                    let value = &line[i + 1..];
                    (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (line, &[][..]),
            };
            match field {
                b"event" => kind = String::from_utf8_lossy(value).into_owned(),
                b"data" => {
                    if has_data {
                        data.push(b'\n');
                    }
                    has_data = true;
                    data.extend_from_slice(value);
                    if data.len() > self.max_message {
                        bail!(too_big(self.max_message));
                    }
                }
                _ => {}
            }
            self.pending = data.len().saturating_add(kind.len());
        }
    }

    /// Reads the next line into `self.line`, without its end (CR, LF or
    /// CRLF). False at the end of the stream: a last line without an end
    /// belongs to an event that never completed, which SSE discards.
    fn read_line(&mut self) -> Result<bool> {
        self.line.clear();
        // A long line once read is not kept as capacity for ever.
        if self.line.capacity() > 1 << 16 {
            self.line = Vec::new();
        }
        let limit = self.max_message.saturating_add(LINE_SLACK);
        loop {
            let buf = match self.input.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_failed("reading the event stream", e)),
            };
            if buf.is_empty() {
                return Ok(false);
            }
            let skip = usize::from(self.after_cr && buf[0] == b'\n');
            self.after_cr = false;
            let rest = &buf[skip..];
            let end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
            let take = end.unwrap_or(rest.len());
            if self.line.len() + take > limit {
                bail!(too_big(self.max_message));
            }
            self.line.extend_from_slice(&rest[..take]);
            let done = match end {
                Some(i) => {
                    self.after_cr = rest[i] == b'\r';
                    self.input.consume(skip + i + 1);
                    true
                }
                None => {
                    self.input.consume(skip + take);
                    false
                }
            };
            self.account()?;
            if done {
                return Ok(true);
            }
        }
    }
}

impl<R> Drop for SseReader<R> {
    fn drop(&mut self) {
        if let Some(held) = &self.held {
            held.total.fetch_sub(self.counted, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    use super::super::response::read_message;

    /// An endless source of `pattern`, counting what was taken from it.
    struct Endless {
        pattern: &'static [u8],
        at: usize,
        taken: Arc<AtomicUsize>,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            for b in buf.iter_mut() {
                *b = self.pattern[self.at % self.pattern.len()];
                self.at += 1;
            }
            self.taken.fetch_add(buf.len(), Ordering::SeqCst);
            Ok(buf.len())
        }
    }

    fn endless(pattern: &'static [u8]) -> (Endless, Arc<AtomicUsize>) {
        let taken = Arc::new(AtomicUsize::new(0));
        let source = Endless {
            pattern,
            at: 0,
            taken: taken.clone(),
        };
        (source, taken)
    }

    #[test]
    fn reading_stops_at_the_cap() {
        let (source, taken) = endless(b"{");
        let e = read_message(source, 64).unwrap_err();
        assert!(e.to_string().contains("response over 64 bytes"), "{e}");
        assert!(taken.load(Ordering::SeqCst) <= 65);

        // One endless line, and endless data lines of one event.
        for pattern in [&b"data: xxxxxxxx"[..], &b"data: xxxxxxxx\n"[..]] {
            let (source, taken) = endless(pattern);
            let mut events = SseReader::new(BufReader::with_capacity(16, source), 64);
            let e = events.next_event().err().expect("over the cap");
            assert!(e.to_string().contains("response over 64 bytes"), "{e}");
            assert!(taken.load(Ordering::SeqCst) <= 64 + LINE_SLACK + 16);
        }
    }

    #[test]
    fn unfinished_events_of_all_streams_count_against_one_limit() {
        let held = HeldBytes {
            total: Arc::new(AtomicUsize::new(0)),
            limit: 100,
        };
        // Each stream holds 60 bytes of an event that never ends: alone
        // under the cap of 80, together over the limit of 100.
        let partial = format!("data: {}\n", "x".repeat(60));
        let mut first = SseReader::new(partial.as_bytes(), 80).sharing(held.clone());
        let mut second = SseReader::new(partial.as_bytes(), 80).sharing(held.clone());
        // The first stream's data line, read and waiting for its event's end.
        assert!(first.read_line().unwrap());
        first.pending = 60;
        first.line.clear();
        first.account().unwrap();
        assert_eq!(held.total.load(Ordering::SeqCst), 60);
        let e = second.next_event().err().expect("over the shared limit");
        assert!(
            e.to_string().contains("more than 100 bytes of unfinished"),
            "{e}"
        );
        drop(first);
        drop(second);
        assert_eq!(held.total.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn sse_reader_follows_the_event_stream_format() {
        let input = b"\xEF\xBB\xBFdata: a\r\rdata:b\ndata\n\n: c\nevent: x\n\ndata: \r\nevent: y\r\n\r\ndata: partial";
        let mut events = SseReader::new(&input[..], 1024);
        let mut got = Vec::new();
        while let Some(event) = events.next_event().unwrap() {
            got.push((event.kind, String::from_utf8(event.data).unwrap()));
        }
        // The event type of a data-less event does not leak into the next one;
        // an event whose data is empty is not dispatched; nor is one the
        // stream cut short.
        assert_eq!(
            got,
            [
                ("message".to_owned(), "a".to_owned()),
                ("message".to_owned(), "b\n".to_owned()),
            ]
        );
    }
}
