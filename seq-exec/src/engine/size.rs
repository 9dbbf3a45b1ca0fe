//! Sizes of values as compact JSON, measured without building the text and stopping once past
//! a bound: one measure for the bound on results and the bound on filled-in arguments.

/// The size of `value` as compact JSON, or `None` once it passes `bound` (measuring stops
/// there, so a huge value costs no more than `bound` bytes of work).
pub(super) fn json_size_within<T: serde::Serialize + ?Sized>(
    value: &T,
    bound: usize,
) -> Option<usize> {
    /// Counts bytes, and fails the serialization once past the bound.
    struct Counter {
        written: usize,
        bound: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.written = self.written.saturating_add(buf.len());
            if self.written > self.bound {
                return Err(std::io::Error::other("past the bound"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { written: 0, bound };
    serde_json::to_writer(&mut counter, value)
        .ok()
        .map(|()| counter.written)
}

/// `16 MiB`, `512 KiB`, `100 bytes`.
pub(super) fn format_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
