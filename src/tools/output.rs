//! A byte stream capped to its head and tail, for command output: the start usually says what ran
//! and the end how it finished, so the middle is what gets cut (with a note of how much).

/// Keeps the first and last `cap / 2` bytes of everything pushed, counting what falls between.
pub struct CappedOutput {
    half: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    cut_bytes: usize,
    cut_lines: usize,
    /// Every newline pushed, kept or cut.
    newlines: usize,
    ends_in_newline: bool,
}

impl CappedOutput {
    pub fn new(cap: usize) -> Self {
        Self {
            half: cap / 2,
            head: Vec::new(),
            tail: Vec::new(),
            cut_bytes: 0,
            cut_lines: 0,
            newlines: 0,
            ends_in_newline: true,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if let Some(last) = bytes.last() {
            self.newlines += bytes.iter().filter(|&&b| b == b'\n').count();
            self.ends_in_newline = *last == b'\n';
        }
        if self.head.len() < self.half {
            let take = bytes.len().min(self.half - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend_from_slice(bytes);
        // Trimming only once the tail doubles keeps pushing amortised O(n).
        if self.tail.len() > 2 * self.half.max(1) {
            self.trim_tail();
        }
    }

    /// How many lines were pushed in all (a last line without its newline counts).
    pub fn total_lines(&self) -> usize {
        self.newlines + usize::from(!self.ends_in_newline)
    }

    fn trim_tail(&mut self) {
        if self.tail.len() > self.half {
            let excess = self.tail.len() - self.half;
            self.cut_bytes += excess;
            self.cut_lines += self.tail[..excess].iter().filter(|&&b| b == b'\n').count();
            self.tail.drain(..excess);
        }
    }

    /// The kept text (invalid UTF-8 replaced), with a marker where the middle was cut.
    pub fn finish(mut self) -> String {
        self.trim_tail();
        if self.cut_bytes == 0 {
            let mut all = self.head;
            all.extend_from_slice(&self.tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        // Cut points can fall inside a UTF-8 character; drop its partial bytes.
        let head_end = self.head.len() - partial_char_suffix(&self.head);
        let tail_start = self
            .tail
            .iter()
            .take_while(|&&b| is_continuation(b))
            .count();
        format!(
            "{}\n\n... [{} lines ({} bytes) of output cut] ...\n\n{}",
            String::from_utf8_lossy(&self.head[..head_end]),
            self.cut_lines,
            self.cut_bytes + (self.head.len() - head_end) + tail_start,
            String::from_utf8_lossy(&self.tail[tail_start..])
        )
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// How many bytes at the end of `bytes` are an incomplete UTF-8 character.
fn partial_char_suffix(bytes: &[u8]) -> usize {
    let start = bytes.len().saturating_sub(4);
    for i in (start..bytes.len()).rev() {
        let b = bytes[i];
        if is_continuation(b) {
            continue;
        }
        let width = match b {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        return if bytes.len() - i < width {
            bytes.len() - i
        } else {
            0
        };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_line_count_is_of_everything_pushed_not_what_was_kept() {
        let mut out = CappedOutput::new(64);
        for i in 1..=200_000 {
            out.push(format!("{i}\n").as_bytes());
        }
        assert_eq!(out.total_lines(), 200_000);
        let mut out = CappedOutput::new(64);
        out.push(b"a\nb");
        assert_eq!(out.total_lines(), 2);
        assert_eq!(CappedOutput::new(64).total_lines(), 0);
    }

    #[test]
    fn short_output_is_kept_whole() {
        let mut out = CappedOutput::new(100);
        out.push(b"hello ");
        out.push(b"world");
        assert_eq!(out.finish(), "hello world");
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_cut() {
        let mut out = CappedOutput::new(20);
        for i in 0..100 {
            out.push(format!("line {i:03}\n").as_bytes());
        }
        let text = out.finish();
        assert!(text.starts_with("line 000\nl\n"), "{text}");
        assert!(text.ends_with("line 099\n"), "{text}");
        assert!(
            text.contains("... [97 lines (880 bytes) of output cut] ..."),
            "{text}"
        );
    }

    #[test]
    fn cuts_never_split_a_character() {
        let mut out = CappedOutput::new(6);
        out.push("ééééééééééé".as_bytes());
        let text = out.finish();
        assert!(!text.contains('\u{fffd}'), "{text}");
        assert!(
            text.starts_with("éé\n") || text.starts_with("é\n"),
            "{text}"
        );
    }
}
