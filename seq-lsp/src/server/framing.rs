//! The base protocol's framing, read forgivingly: `Content-Length: N` headers, an empty line, N
//! bytes of body. lsp-server's reader ends the session at the first frame it cannot read; this
//! one reports the bad frame and finds the next one.
//!
//! A header block that cannot be read (no or a bad `Content-Length`, a line that is not a
//! header, a block too long) is skipped up to the next `Content-Length:` after its first byte,
//! which is where the next message must start. A `Content-Length` that is wrong cannot be told from the bytes: too short,
//! the body is cut (its JSON fails to parse) and its rest is skipped as above; too long, the body
//! swallows the next frame's start, which [`Framer::put_back`] returns when the caller finds a
//! header inside a body that is not JSON.

use std::io::{self, Read};

/// Longest header block read; real ones are under 100 bytes.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Largest body accepted: well above a sequence file at its bound (64 MiB) escaped as a JSON
/// string, and a bound on what a bogus header can make the server allocate.
pub const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Where a message starts, compared without regard to case.
const HEADER: &[u8] = b"content-length:";

/// One frame read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Body(Vec<u8>),
    /// What was wrong; the bytes in question were skipped.
    Bad(String),
}

#[derive(Debug)]
pub struct Framer<R> {
    input: R,
    buffer: Vec<u8>,
    /// Bytes of `buffer` already consumed.
    start: usize,
    eof: bool,
    /// Skip to the next `Content-Length:` before reading a header block.
    resync: bool,
    /// A header block too long was reported: further ones in the same run of junk are skipped
    /// without another report (a stream of `Content-Length:` without line ends would otherwise
    /// be one report every 17 bytes).
    in_junk: bool,
    /// Where the header block last reported bad ends (an index into `buffer`): the blocks that
    /// start inside it and end at the same blank line are the same mistake, skipped quietly.
    reported_end: Option<usize>,
    /// `buffer[..clean_to]` holds no blank line: the search for a header block's end resumes
    /// there, so that a block read a byte at a time is scanned once, not once per byte.
    clean_to: usize,
}

impl<R: Read> Framer<R> {
    pub fn new(input: R) -> Framer<R> {
        Framer {
            input,
            buffer: Vec::new(),
            start: 0,
            eof: false,
            resync: false,
            in_junk: false,
            reported_end: None,
            clean_to: 0,
        }
    }

    /// The next frame; `None` at the end of the input.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if self.resync {
                if !self.skip_to_header()? {
                    return Ok(None);
                }
                self.resync = false;
            }
            // Blank lines between messages are tolerated.
            while self
                .pending()
                .first()
                .is_some_and(|b| b.is_ascii_whitespace())
            {
                self.start += 1;
            }
            if self.pending().is_empty() {
                if self.eof {
                    return Ok(None);
                }
                self.fill()?;
                continue;
            }
            let from = self.clean_to.saturating_sub(self.start);
            let Some(end) = header_end(self.pending(), from) else {
                self.clean_to = self.buffer.len();
                if self.pending().len() > MAX_HEADER_BYTES {
                    // Nothing buffered holds a blank line, so no header block that starts more
                    // than 8 KiB before the end of it can end in time either: skip those at
                    // once (and at least this block's own `Content-Length:`).
                    self.start += (self.pending().len() - MAX_HEADER_BYTES).max(1);
                    let reported = std::mem::replace(&mut self.in_junk, true);
                    let frame = self.bad("a header block longer than 8 KiB");
                    if reported {
                        continue;
                    }
                    return Ok(Some(frame));
                }
                if self.eof {
                    let frame = self.bad("the input ended inside a header");
                    self.start = self.buffer.len();
                    return Ok(Some(frame));
                }
                self.fill()?;
                continue;
            };
            let block_end = self.start + end.block;
            if std::mem::take(&mut self.in_junk) {
                self.reported_end = Some(block_end);
            }
            let length = match content_length(self.pending().get(..end.lines).unwrap_or(&[])) {
                Ok(length) => length,
                Err(why) => {
                    // The next frame's header may be inside this block: a body cut short by
                    // its Content-Length runs into it.
                    self.start += 1;
                    let frame = self.bad(&why);
                    if self.reported_end.replace(block_end) == Some(block_end) {
                        continue;
                    }
                    return Ok(Some(frame));
                }
            };
            while self.pending().len() < end.block + length && !self.eof {
                self.fill()?;
            }
            let body = self
                .pending()
                .get(end.block..end.block + length)
                .map(<[u8]>::to_vec);
            return match body {
                Some(body) => {
                    self.start += end.block + length;
                    Ok(Some(Frame::Body(body)))
                }
                None => {
                    self.start = self.buffer.len();
                    Ok(Some(Frame::Bad(format!(
                        "the input ended inside a body of {length} bytes"
                    ))))
                }
            };
        }
    }

    /// Returns `bytes` to the front of the input: the start of a frame found inside a body.
    pub fn put_back(&mut self, bytes: &[u8]) {
        let mut buffer = Vec::with_capacity(bytes.len() + self.pending().len());
        buffer.extend_from_slice(bytes);
        buffer.extend_from_slice(self.pending());
        self.buffer = buffer;
        self.start = 0;
        self.clean_to = 0;
        self.reported_end = None;
    }

    fn pending(&self) -> &[u8] {
        self.buffer.get(self.start..).unwrap_or(&[])
    }

    /// Reports a bad header block; the next read starts at the next `Content-Length:`.
    fn bad(&mut self, why: &str) -> Frame {
        self.resync = true;
        Frame::Bad(why.to_owned())
    }

    /// Drops input up to the next `Content-Length:`; false when the input ends first.
    fn skip_to_header(&mut self) -> io::Result<bool> {
        loop {
            if let Some(at) = find_header(self.pending()) {
                self.start += at;
                return Ok(true);
            }
            if self.eof {
                self.start = self.buffer.len();
                return Ok(false);
            }
            // Keep a tail that may be the start of a header cut by the read.
            self.start += self.pending().len().saturating_sub(HEADER.len());
            self.fill()?;
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 && self.start * 2 >= self.buffer.len() {
            self.buffer.drain(..self.start);
            self.clean_to = self.clean_to.saturating_sub(self.start);
            let drained = self.start;
            self.reported_end = self.reported_end.map(|end| end.saturating_sub(drained));
            self.start = 0;
        }
        let mut chunk = [0u8; 64 * 1024];
        let read = loop {
            match self.input.read(&mut chunk) {
                Ok(n) => break n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        };
        match chunk.get(..read) {
            Some(bytes) if !bytes.is_empty() => self.buffer.extend_from_slice(bytes),
            Some(_) | None => self.eof = true,
        }
        Ok(())
    }
}

/// The offset of `Content-Length:` in `bytes`, in any case.
pub fn find_header(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(HEADER.len())
        .position(|w| w.eq_ignore_ascii_case(HEADER))
}

struct HeaderEnd {
    /// Where the header lines end (before the empty line).
    lines: usize,
    /// Where the body starts.
    block: usize,
}

/// The end of a header block: the first empty line, lines ending in `\r\n` (or a bare `\n`).
/// `bytes` does not start with a line end (blank lines before a message are skipped), so an
/// empty line is a `\n` right after another `\n`, or after `\n\r`. The search starts at `from`
/// (bytes before it are known to hold none), backed up over a line end cut there.
fn header_end(bytes: &[u8], from: usize) -> Option<HeaderEnd> {
    let from = from.saturating_sub(2);
    let at = bytes.get(from..)?.iter().enumerate().find_map(|(i, &b)| {
        let i = from + i;
        if b != b'\n' || i == 0 {
            return None;
        }
        let before = bytes.get(..i)?;
        match before {
            [.., b'\n'] => Some((i, i)),
            [.., b'\n', b'\r'] => Some((i - 1, i)),
            _ => None,
        }
    })?;
    let (lines, newline) = at;
    Some(HeaderEnd {
        lines,
        block: newline + 1,
    })
}

/// The body's length from the header lines. Other headers (`Content-Type`) are ignored.
fn content_length(lines: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(lines).map_err(|_| "a header that is not text".to_owned())?;
    let mut length = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("not a header: {:?}", clip(line)));
        };
        if name.is_empty() || !name.bytes().all(is_token) {
            return Err(format!("not a header: {:?}", clip(line)));
        }
        if name.eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            let parsed: usize = value
                .parse()
                .map_err(|_| format!("a Content-Length that is not a length: {:?}", clip(value)))?;
            if parsed > MAX_BODY_BYTES {
                return Err(format!(
                    "a Content-Length of {parsed} bytes, over the bound of {MAX_BODY_BYTES}"
                ));
            }
            length = Some(parsed);
        }
    }
    length.ok_or_else(|| "a header block without Content-Length".to_owned())
}

/// Characters of a header name (RFC 9110 `token`).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// At most 60 characters of `text`, for a log line.
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or("")),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame of `input`, read through a reader that hands out `chunk` bytes at a time.
    fn frames(input: &[u8], chunk: usize) -> Vec<Frame> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut framer = Framer::new(Trickle(input, chunk));
        let mut out = Vec::new();
        while let Some(frame) = framer.next_frame().unwrap() {
            out.push(frame);
        }
        out
    }

    fn body(text: &str) -> Frame {
        Frame::Body(text.as_bytes().to_vec())
    }

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn bad_frames_are_reported_and_the_next_ones_read() {
        let input = [
            framed("{\"a\":1}"),
            "content-length:  3 \r\nContent-Type: x\r\n\r\n[1]".to_owned(),
            "Content-Length: lots\r\n\r\n{\"lost\":1}".to_owned(),
            framed("{\"b\":2}"),
            "Content-Type: x\r\n\r\n{\"no length\":1}".to_owned(),
            "\r\n".to_owned(),
            framed("{\"c\":3}"),
            "garbage without any header\r\n\r\n".to_owned(),
            "Content-Length: 99999999999\r\n\r\n".to_owned(),
            framed("{\"d\":4}"),
            "\n\nContent-Length: 7\n\n{\"e\":5}".to_owned(),
            "Content-Length: 100\r\n\r\n{\"f\":6}".to_owned(),
        ]
        .concat();
        for chunk in [1, 3, 64 * 1024] {
            let got = frames(input.as_bytes(), chunk);
            let shape: Vec<String> = got
                .iter()
                .map(|f| match f {
                    Frame::Body(b) => String::from_utf8_lossy(b).into_owned(),
                    Frame::Bad(why) => format!("bad: {why}"),
                })
                .collect();
            assert_eq!(
                shape,
                [
                    "{\"a\":1}",
                    "[1]",
                    "bad: a Content-Length that is not a length: \"lots\"",
                    "{\"b\":2}",
                    "bad: a header block without Content-Length",
                    "{\"c\":3}",
                    "bad: not a header: \"garbage without any header\"",
                    "bad: a Content-Length of 99999999999 bytes, over the bound of 268435456",
                    "{\"d\":4}",
                    "{\"e\":5}",
                    "bad: the input ended inside a body of 100 bytes",
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn a_frame_found_inside_a_body_can_be_put_back() {
        let next = framed("{\"next\":1}");
        let input = format!("Content-Length: 40\r\n\r\n{{\"short\":1}}{next}");
        let mut framer = Framer::new(input.as_bytes());
        let Some(Frame::Body(swallowed)) = framer.next_frame().unwrap() else {
            panic!("a body");
        };
        let at = find_header(&swallowed).unwrap();
        framer.put_back(&swallowed[at..]);
        assert_eq!(framer.next_frame().unwrap(), Some(body("{\"next\":1}")));
        assert_eq!(framer.next_frame().unwrap(), None);
    }

    /// Header lines that never end, each starting like a header: one report for the whole run,
    /// and the frame after it read.
    #[test]
    fn a_run_of_endless_headers_is_one_report() {
        let junk = "Content-Length: 1".repeat(60_000);
        let input = format!("{junk}x\r\n\r\n{}", framed("{\"after\":1}"));
        for chunk in [1, 4096, 64 * 1024] {
            let got = frames(input.as_bytes(), chunk);
            let bad = got.iter().filter(|f| matches!(f, Frame::Bad(_))).count();
            assert_eq!(
                bad,
                1,
                "chunk {chunk}: {:?}",
                got.iter().take(3).collect::<Vec<_>>()
            );
            assert_eq!(got.last(), Some(&body("{\"after\":1}")), "chunk {chunk}");
        }
    }

    #[test]
    fn nothing_but_the_end() {
        assert!(frames(b"", 8).is_empty());
        assert!(frames(b"\r\n\r\n", 8).is_empty());
        assert_eq!(
            frames(b"Content-Len", 8),
            [Frame::Bad("the input ended inside a header".to_owned())]
        );
    }
}
