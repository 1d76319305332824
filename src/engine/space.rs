//! One loaded namespace: its episodes and the indexes derived from them.
//!
//! Meta record (`Table::Meta`, id `space`, kind 6): `next_id:u64 model_id:str`.

use std::collections::BTreeSet;

use crate::index::FastMap;

use super::Config;
use crate::error::{Error, Result};
use crate::index::bm25::Bm25;
use crate::index::vectors::VectorIndex;
use crate::record::episode::decode_vector;
use crate::record::Episode;
use crate::store::codec::{open, seal, Reader, Writer};
use crate::store::{KvStore, Namespace, Table};

const META_KIND: u8 = 6;
const PAGE: usize = 1024;

pub(crate) fn encode_meta(next_id: u64, model: &str) -> Vec<u8> {
    let mut w = Writer::new();
    w.u64(next_id).str(model);
    seal(META_KIND, &w.finish())
}

fn decode_meta(bytes: &[u8]) -> Result<(u64, String)> {
    let mut r = Reader::new(open(bytes, META_KIND, "namespace meta")?, "namespace meta");
    let out = (r.u64()?, r.str()?.to_string());
    r.end()?;
    Ok(out)
}

pub(crate) fn read_vector(
    store: &impl KvStore,
    ns: &Namespace,
    id: u64,
) -> Result<Option<Vec<f32>>> {
    match store.get(&ns.key(Table::Vector, &id.to_be_bytes()))? {
        Some(b) => Ok(Some(decode_vector(&b)?.1)),
        None => Ok(None),
    }
}

/// Calls `f` on every (key, value) under `prefix`, page by page.
pub(crate) fn scan_all(
    store: &impl KvStore,
    prefix: &[u8],
    mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = store.scan(prefix, after.as_deref(), PAGE)?;
        for (k, v) in &page {
            f(k, v)?;
        }
        match page.last() {
            Some((k, _)) if page.len() == PAGE => after = Some(k.clone()),
            _ => return Ok(()),
        }
    }
}

pub(crate) struct Space {
    pub exists: bool,
    pub next_id: u64,
    pub model: String,
    pub episodes: FastMap<u64, Episode>,
    pub by_time: BTreeSet<(i64, u64)>,
    pub bm25: Bm25,
    pub vectors: VectorIndex,
}

impl Space {
    pub fn load(store: &impl KvStore, ns: &Namespace, config: &Config) -> Result<Self> {
        let mut space = Space {
            exists: false,
            next_id: 1,
            model: String::new(),
            episodes: FastMap::default(),
            by_time: BTreeSet::new(),
            bm25: Bm25::default(),
            vectors: VectorIndex::new(config.dim, config.vectors),
        };
        if let Some(meta) = store.get(&ns.key(Table::Meta, b"space"))? {
            let (next_id, model) = decode_meta(&meta)?;
            space.exists = true;
            space.next_id = next_id;
            space.model = model;
        }
        // Episodes first (text into BM25), then each live one's vector straight into the
        // index: no intermediate copy of the f32 vectors.
        let eprefix = ns.table_prefix(Table::Episode);
        scan_all(store, &eprefix, |_, v| {
            let e = Episode::decode(v)?;
            if e.is_live() {
                space.bm25.insert(e.id, &e.search_text());
            }
            space.by_time.insert((e.created_at, e.id));
            space.episodes.insert(e.id, e);
            Ok(())
        })?;
        let vprefix = ns.table_prefix(Table::Vector);
        scan_all(store, &vprefix, |k, v| {
            let (model, vector) = decode_vector(v)?;
            if model != space.model {
                return Err(Error::ModelMismatch { expected: space.model.clone(), found: model });
            }
            let id = id_of(k, vprefix.len())?;
            if space.episodes.get(&id).is_some_and(Episode::is_live) {
                space.vectors.insert(id, &vector);
            }
            Ok(())
        })?;
        Ok(space)
    }

    /// Fails when vectors of `model` would join vectors of another model.
    pub fn check_model(&self, model: &str) -> Result<()> {
        if !self.model.is_empty() && self.model != model {
            return Err(Error::ModelMismatch { expected: model.into(), found: self.model.clone() });
        }
        Ok(())
    }

    pub fn index(&mut self, e: Episode, v: &[f32]) {
        if e.is_live() {
            self.bm25.insert(e.id, &e.search_text());
            self.vectors.insert(e.id, v);
        }
        self.by_time.insert((e.created_at, e.id));
        self.episodes.insert(e.id, e);
    }

    pub fn unindex(&mut self, id: u64) {
        if let Some(e) = self.episodes.remove(&id) {
            self.by_time.remove(&(e.created_at, id));
        }
        self.bm25.remove(id);
        self.vectors.remove(id);
    }

    pub fn memory(&self) -> usize {
        let episodes: usize = self
            .episodes
            .values()
            .map(|e| {
                std::mem::size_of::<Episode>()
                    + e.text.len()
                    + e.verdict.len()
                    + e.entities.iter().chain(&e.tags).map(|s| s.len() + 24).sum::<usize>()
                    + 48
            })
            .sum();
        // BM25: ~12 bytes per posting (id, tf, hash slot) plus terms; estimated from text size.
        let postings: usize = self.episodes.values().map(|e| e.text.len() / 5 * 24).sum();
        episodes + postings + self.by_time.len() * 24 + self.vectors.memory()
    }
}

fn id_of(key: &[u8], prefix: usize) -> Result<u64> {
    let b: [u8; 8] = key.get(prefix..).and_then(|s| s.try_into().ok()).ok_or_else(|| {
        Error::Corrupt { what: "vector key".into(), detail: format!("{} bytes", key.len()) }
    })?;
    Ok(u64::from_be_bytes(b))
}
