//! The memory a background command's output may take: the last `cap` bytes it printed, with the
//! count of everything it ever printed, so a reader that fell behind learns how much it missed
//! (the whole output is in the spill file).

use std::collections::VecDeque;

/// The last `cap` bytes of a stream, positioned in it.
#[derive(Debug)]
pub(in crate::tools) struct Ring {
    cap: usize,
    bytes: VecDeque<u8>,
    /// Bytes ever pushed; the ring holds `total - bytes.len() .. total`.
    total: u64,
}

/// What a read found past a position.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::tools) struct Unread {
    /// Bytes past the position that left memory before they were read.
    pub missed: u64,
    pub bytes: Vec<u8>,
}

impl Ring {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            bytes: VecDeque::new(),
            total: 0,
        }
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        let data = &data[data.len().saturating_sub(self.cap)..];
        let over = (self.bytes.len() + data.len()).saturating_sub(self.cap);
        self.bytes.drain(..over);
        self.bytes.extend(data);
    }

    pub(super) fn total(&self) -> u64 {
        self.total
    }

    /// Everything after byte `from` of the stream that is still in memory.
    pub(super) fn since(&self, from: u64) -> Unread {
        let start = self.total - self.bytes.len() as u64;
        let missed = start.saturating_sub(from);
        let skip = usize::try_from(from.saturating_sub(start)).unwrap_or(usize::MAX);
        Unread {
            missed,
            bytes: self.bytes.iter().skip(skip).copied().collect(),
        }
    }

    /// The last line with something on it, up to 200 characters (`/tasks`).
    pub(super) fn last_line(&self) -> String {
        let tail: Vec<u8> = self
            .bytes
            .iter()
            .skip(self.bytes.len().saturating_sub(4096))
            .copied()
            .collect();
        String::from_utf8_lossy(&tail)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().chars().take(200).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_reader_behind_the_ring_learns_what_it_missed() {
        let mut ring = Ring::new(4);
        ring.push(b"abc");
        assert_eq!(
            ring.since(0),
            Unread {
                missed: 0,
                bytes: b"abc".to_vec()
            }
        );
        ring.push(b"defghij");
        assert_eq!(ring.total(), 10);
        assert_eq!(
            ring.since(3),
            Unread {
                missed: 3,
                bytes: b"ghij".to_vec()
            }
        );
        assert_eq!(
            ring.since(8),
            Unread {
                missed: 0,
                bytes: b"ij".to_vec()
            }
        );
        assert_eq!(ring.since(10).bytes, Vec::<u8>::new());
    }

    #[test]
    fn the_last_line_skips_blank_ones() {
        let mut ring = Ring::new(64);
        ring.push(b"one\ntwo\n\n");
        assert_eq!(ring.last_line(), "two");
    }
}
