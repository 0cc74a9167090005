//! Helpers shared by the unit tests of several modules.

/// `bytes` cut at each of `cuts` (taken modulo its length + 1, so any list of numbers from a
/// property test works), in order; empty pieces included, as a network read can return them.
pub fn split_at_cuts<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for cut in cuts {
        pieces.push(&bytes[from..cut]);
        from = cut;
    }
    pieces.push(&bytes[from..]);
    pieces
}

#[test]
fn cuts_are_taken_modulo_the_length() {
    assert_eq!(
        split_at_cuts(b"abc", &[1, 5, 2]),
        vec![&b"a"[..], b"", b"b", b"c"]
    );
}
