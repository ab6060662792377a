//! The stderr tail (spec §13.5): the last 16 KiB of a sidecar's stderr in a ring buffer.

use std::collections::VecDeque;

use sidewire_ext_protocol::STDERR_TAIL_BYTES;

/// The last [`STDERR_TAIL_BYTES`] bytes written to a stderr pipe.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    ring: VecDeque<u8>,
    /// Bytes were discarded; the text then starts after the first LF.
    lost: bool,
}

impl Tail {
    /// Appends bytes, discarding the oldest beyond the cap.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let bytes = if bytes.len() > STDERR_TAIL_BYTES {
            self.lost = true;
            self.ring.clear();
            &bytes[bytes.len() - STDERR_TAIL_BYTES..]
        } else {
            bytes
        };
        let over = (self.ring.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES);
        if over > 0 {
            self.lost = true;
            self.ring.drain(..over);
        }
        self.ring.extend(bytes);
    }

    /// The tail as lossy UTF-8, before redaction. Once bytes were lost, everything up to and
    /// including the first LF is dropped (all of it without one), so the text never starts
    /// inside a line, a credential or a UTF-8 sequence.
    pub(crate) fn text(&self) -> String {
        let (a, b) = self.ring.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        let start = if self.lost {
            bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| i + 1)
        } else {
            0
        };
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    /// How many bytes are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }
}
