//! Checks an HNSW graph read from a snapshot before instant-distance searches it.
//!
//! instant-distance trusts its own graphs: a neighbour id past the last point, or a value past
//! the segment's rows, is an out-of-bounds index (a panic, which traps a wasm instance). A
//! snapshot is stored bytes, which a damaged disk or a crafted file can change while keeping
//! its non-cryptographic hash right, so every id is checked against the segment first.
//!
//! The graph is `HnswMap<row, row>` in postcard's encoding; this reads the same bytes into a
//! mirror of its layout (instant-distance 0.6, the version the snapshot header names):
//!
//! ```text
//! HnswMap := ef_search:varint points:[row] zero:[ZeroNode] layers:[[UpperNode]] values:[row]
//! ZeroNode := neighbour:varint × 64      UpperNode := neighbour:varint × 32
//! ```
//!
//! A neighbour is a point index or `u32::MAX` (an empty slot).

use serde::de::{Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// Neighbours per node on the upper layers (instant-distance's `M`); layer 0 has twice as many.
const M: usize = 32;
const EMPTY: u32 = u32::MAX;

#[derive(Deserialize)]
struct Shape {
    _ef_search: usize,
    points: Vec<u32>,
    zero: Vec<Neighbours<{ 2 * M }>>,
    layers: Vec<Vec<Neighbours<M>>>,
    values: Vec<u32>,
}

struct Neighbours<const N: usize>(Vec<u32>);

impl<'de, const N: usize> Deserialize<'de> for Neighbours<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ids<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for Ids<N> {
            type Value = Neighbours<N>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "{N} neighbour ids")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut ids = Vec::with_capacity(N);
                for i in 0..N {
                    ids.push(
                        seq.next_element()?.ok_or_else(|| A::Error::invalid_length(i, &self))?,
                    );
                }
                Ok(Neighbours(ids))
            }
        }
        d.deserialize_tuple(N, Ids::<N>)
    }
}

/// Checks that the graph in `bytes` only names rows below `rows`; says what is wrong otherwise.
pub(crate) fn check(bytes: &[u8], rows: usize) -> Result<(), String> {
    let shape: Shape = postcard::from_bytes(bytes).map_err(|e| format!("graph layout: {e}"))?;
    let points = shape.points.len();
    if points != rows || shape.values.len() != rows || shape.zero.len() != rows {
        return Err(format!(
            "graph of {points} points, {} values, {} layer-0 nodes for {rows} rows",
            shape.values.len(),
            shape.zero.len()
        ));
    }
    if let Some(v) = shape.points.iter().chain(&shape.values).find(|&&v| v as usize >= rows) {
        return Err(format!("graph names row {v} of {rows}"));
    }
    // Layer 0 holds every point; an upper layer holds the first `len` points (instant-distance
    // orders points by level) and its search starts at point 0, so it may not be empty.
    let zero = shape.zero.iter().map(|n| (&n.0, points));
    let upper = shape.layers.iter().flat_map(|l| l.iter().map(move |n| (&n.0, l.len())));
    for (ids, len) in zero.chain(upper) {
        if let Some(id) = ids.iter().find(|&&id| id != EMPTY && id as usize >= len) {
            return Err(format!("graph neighbour {id} in a layer of {len} nodes"));
        }
    }
    if shape.layers.iter().any(|layer| layer.len() > points || (points > 0 && layer.is_empty())) {
        return Err("a graph layer is empty or holds more nodes than there are points".into());
    }
    Ok(())
}
