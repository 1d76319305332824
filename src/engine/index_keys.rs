//! The keys a namespace files things under in its indexes: an episode's id for its whole text,
//! or, for a long text's passages (vectors) and windows (BM25 documents), the id with the
//! passage's number above [`ID_BITS`].

/// Bits of an index key that hold the episode id; the bits above hold `passage + 1` for the
/// passages of a long text ([`passage_key`]), 0 for its whole vector.
pub(crate) const ID_BITS: u32 = 48;

/// The first episode id a namespace cannot use: ids must leave the key bits above
/// [`ID_BITS`] to passages.
pub(crate) const MAX_ID: u64 = 1 << ID_BITS;

/// The bits of a key that hold its episode's id.
pub(crate) const ID_MASK: u64 = MAX_ID - 1;

/// The index key of passage `p` (from 0) of episode `id`.
pub(crate) fn passage_key(id: u64, p: usize) -> u64 {
    id | ((p as u64 + 1) << ID_BITS)
}

/// The episode an index key belongs to.
pub(crate) fn episode_of(key: u64) -> u64 {
    key & ID_MASK
}

/// The passage an index key names (`None`: the episode's whole text).
pub(crate) fn passage_of(key: u64) -> Option<usize> {
    usize::try_from(key >> ID_BITS).ok()?.checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_its_episode_and_passage() {
        assert_eq!((episode_of(42), passage_of(42)), (42, None));
        let k = passage_key(42, 3);
        assert_eq!((episode_of(k), passage_of(k)), (42, Some(3)));
    }
}
