//! The vectors `mnemo bench` ranks with: embedded by one or more embedders in parallel (each
//! thread its own), and kept in a cache directory in blocks of [`BLOCK`] texts, so a long run
//! that is stopped resumes at the first block it had not finished.
//!
//! Cache files are named by the first 16 bytes (hex) of the SHA-256 of what they were made
//! with (model id, role or layout) and the block's texts, each followed by a 0 byte:
//! - `.f32`: one vector per text, `dim` little-endian f32s each;
//! - `.passages`: per text `count:u32` (0 for a text read whole), the whole vector, then per
//!   passage `start:u32 end:u32` (UTF-8 byte offsets) and its vector, little-endian.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use crate::jsonl::Line;
use mnemo::embed::passages::{self, Passage, TextVectors};
use mnemo::{Embedder, Role};
use mnemo_embed::BertEmbedder;

/// Texts per cache file: an interrupted run loses at most one block's work per thread pool.
pub const BLOCK: usize = 512;
/// Texts per embedder call (one batch after the embedder's own sort by length).
const CHUNK: usize = 16;

/// What one thread runs on a chunk of texts with its own embedder.
type EmbedFn<T> = dyn Fn(&mut BertEmbedder, &[&str]) -> mnemo::Result<Vec<T>> + Sync;

/// What one thread embedded: (chunk index, the chunk's vectors) in the order it took them.
type Embedded<T> = Vec<(usize, Vec<T>)>;

/// A vector layout that can be written to and read from a cache file.
trait Cached: Sized + Send {
    const EXT: &'static str;
    fn write(&self, out: &mut Vec<u8>);
    fn read(bytes: &[u8], at: &mut usize, dim: usize) -> Option<Self>;
}

fn u32_at(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let b = bytes.get(*at..*at + 4)?;
    *at += 4;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn floats_at(bytes: &[u8], at: &mut usize, dim: usize) -> Option<Vec<f32>> {
    let b = bytes.get(*at..*at + 4 * dim)?;
    *at += 4 * dim;
    Some(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

impl Cached for Vec<f32> {
    const EXT: &'static str = "f32";
    fn write(&self, out: &mut Vec<u8>) {
        out.extend(self.iter().flat_map(|f| f.to_le_bytes()));
    }
    fn read(bytes: &[u8], at: &mut usize, dim: usize) -> Option<Self> {
        floats_at(bytes, at, dim)
    }
}

impl Cached for TextVectors {
    const EXT: &'static str = "passages";
    fn write(&self, out: &mut Vec<u8>) {
        out.extend((self.passages.len() as u32).to_le_bytes());
        self.whole.write(out);
        for p in &self.passages {
            out.extend(p.start.to_le_bytes());
            out.extend(p.end.to_le_bytes());
            p.vector.write(out);
        }
    }
    fn read(bytes: &[u8], at: &mut usize, dim: usize) -> Option<Self> {
        let count = u32_at(bytes, at)?;
        let whole = floats_at(bytes, at, dim)?;
        let mut passages = Vec::new();
        for _ in 0..count {
            let (start, end) = (u32_at(bytes, at)?, u32_at(bytes, at)?);
            passages.push(Passage { start, end, vector: floats_at(bytes, at, dim)? });
        }
        Some(TextVectors { whole, passages })
    }
}

/// Embedders for `mnemo bench`: the first loaded up front, the others when there is work.
pub struct Embedders {
    model_dir: PathBuf,
    /// A model without E5's `query: ` / `passage: ` prefixes (`mnemo bench --plain-model`).
    plain: bool,
    loaded: Vec<BertEmbedder>,
    threads: usize,
    cache: Option<PathBuf>,
}

impl Embedders {
    pub fn new(
        model_dir: &Path,
        plain: bool,
        threads: usize,
        cache: Option<&Path>,
    ) -> Result<Self, String> {
        let first = load(model_dir, plain)?;
        Ok(Self {
            model_dir: model_dir.to_path_buf(),
            plain,
            loaded: vec![first],
            threads: threads.max(1),
            cache: cache.map(Path::to_path_buf),
        })
    }

    /// The first embedder, for what is asked of the model rather than run on it.
    pub fn first(&mut self) -> &mut BertEmbedder {
        &mut self.loaded[0]
    }

    /// One vector per line, embedded whole in `role`.
    pub fn whole(
        &mut self,
        lines: &[Line],
        role: Role,
        what: &str,
    ) -> Result<Vec<Vec<f32>>, String> {
        let tag = format!("{}\0{role:?}\0", self.first().model_id());
        self.blocks(&tag, lines, what, &move |e, texts| {
            Ok(e.embed(texts, role)?.into_iter().map(|x| x.vector).collect())
        })
    }

    /// Each line as a passage, a long one as its windows ([`passages::embed_texts`]).
    pub fn passages(&mut self, lines: &[Line]) -> Result<Vec<TextVectors>, String> {
        // When the model reads every text whole (the tokenizer says so), passages change
        // nothing: the plain vectors serve, and their cache.
        let e = self.first();
        if lines.iter().all(|l| e.truncates(&l.text, Role::Passage) == Some(false)) {
            let v = self.whole(lines, Role::Passage, "items")?;
            return Ok(v.into_iter().map(TextVectors::single).collect());
        }
        let tag = format!("{}\0passages/1\0", self.first().model_id());
        self.blocks(&tag, lines, "items", &|e, texts| passages::embed_texts(e, texts))
    }

    /// Embeds `lines` block by block, each block read from the cache when it is there and
    /// written to it once embedded.
    fn blocks<T: Cached>(
        &mut self,
        tag: &str,
        lines: &[Line],
        what: &str,
        embed: &EmbedFn<T>,
    ) -> Result<Vec<T>, String> {
        let dim = self.first().dim();
        let t = Instant::now();
        let bar = crate::progress::bar(lines.len() as u64, &format!("{what} embedded"));
        let (mut out, mut fresh, mut from_cache) = (Vec::with_capacity(lines.len()), 0, 0);
        for block in lines.chunks(BLOCK) {
            let path = self.cache.as_deref().map(|d| cache_file(d, tag, block, T::EXT));
            if let Some(v) = path.as_deref().and_then(|p| read_block::<T>(p, dim, block.len())) {
                from_cache += v.len();
                out.extend(v);
                bar.inc(block.len() as u64);
                continue;
            }
            let v = self.parallel(block, embed, &bar)?;
            if let Some(p) = path {
                write_block(&p, &v)?;
            }
            fresh += v.len();
            out.extend(v);
        }
        bar.finish_and_clear();
        if fresh > 0 {
            eprintln!(
                "  embedded {fresh} {what} in {:.0}s ({} thread(s)); {from_cache} from the cache",
                t.elapsed().as_secs_f64(),
                self.loaded.len()
            );
        } else {
            eprintln!("  {what}: {from_cache} vectors from the cache");
        }
        Ok(out)
    }

    /// Embeds one block with up to `threads` embedders, each taking the next chunk of
    /// [`CHUNK`] lines until none is left; the vectors come back in the lines' order.
    fn parallel<T: Cached>(
        &mut self,
        block: &[Line],
        embed: &EmbedFn<T>,
        bar: &indicatif::ProgressBar,
    ) -> Result<Vec<T>, String> {
        let chunks: Vec<&[Line]> = block.chunks(CHUNK).collect();
        let wanted = self.threads.min(chunks.len()).max(1);
        while self.loaded.len() < wanted {
            self.loaded.push(load(&self.model_dir, self.plain)?);
        }
        let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
        let queue = Queue { chunks: &chunks, next: &next, stop: &stop };
        let results: Vec<Result<Embedded<T>, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (self.loaded.iter_mut().take(wanted))
                .map(|e| s.spawn(move || queue.work(e, embed, bar)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("an embedding thread panicked".into())))
                .collect()
        });
        let mut by_chunk: Vec<Option<Vec<T>>> = (0..chunks.len()).map(|_| None).collect();
        for r in results {
            for (i, v) in r? {
                by_chunk[i] = Some(v);
            }
        }
        let mut out = Vec::with_capacity(block.len());
        for v in by_chunk {
            out.extend(v.ok_or("a chunk of texts was left without vectors")?);
        }
        Ok(out)
    }
}

/// The chunks of a block shared by the embedding threads: each takes the next one not taken.
#[derive(Clone, Copy)]
struct Queue<'a> {
    chunks: &'a [&'a [Line]],
    next: &'a AtomicUsize,
    /// Set by the first thread that meets an error: the others stop before their next chunk.
    stop: &'a AtomicBool,
}

impl Queue<'_> {
    /// One thread's share: the chunks it embedded with `e`, by index, or the first error.
    fn work<T: Cached>(
        self,
        e: &mut BertEmbedder,
        embed: &EmbedFn<T>,
        bar: &indicatif::ProgressBar,
    ) -> Result<Embedded<T>, String> {
        let mut got = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = self.chunks.get(i) else { break };
            let texts: Vec<&str> = chunk.iter().map(|l| l.text.as_str()).collect();
            let v = match embed(e, &texts) {
                Ok(v) if v.len() == texts.len() => Ok(v),
                Ok(v) => Err(format!("{} vectors for {} texts", v.len(), texts.len())),
                Err(err) => Err(format!("item {}: {err}", chunk[0].id)),
            };
            match v {
                Ok(v) => {
                    bar.inc(chunk.len() as u64);
                    got.push((i, v));
                }
                Err(msg) => {
                    self.stop.store(true, Ordering::Relaxed);
                    return Err(msg);
                }
            }
        }
        Ok(got)
    }
}

/// The model in `dir`: the default E5 settings, or `plain` (no prefixes, the tokenizer's own
/// length limit), named after the directory.
fn load(dir: &Path, plain: bool) -> Result<BertEmbedder, String> {
    if !plain {
        return crate::load(dir);
    }
    let name = dir.file_name().map_or("plain".into(), |n| n.to_string_lossy().into_owned());
    BertEmbedder::from_dir(dir, mnemo_embed::BertConfig::plain(name)).map_err(|e| e.to_string())
}

/// The cache file in `dir` for `lines` embedded as `tag` (model, role or layout).
fn cache_file(dir: &Path, tag: &str, lines: &[Line], ext: &str) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(tag);
    for l in lines {
        h.update(l.text.as_bytes());
        h.update([0]);
    }
    let name: String = h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{name}.{ext}"))
}

/// A block's vectors from `path`; `None` when the file is missing or does not hold exactly
/// `n` vectors of `dim`.
fn read_block<T: Cached>(path: &Path, dim: usize, n: usize) -> Option<Vec<T>> {
    let bytes = std::fs::read(path).ok()?;
    let mut at = 0;
    let out: Option<Vec<T>> = (0..n).map(|_| T::read(&bytes, &mut at, dim)).collect();
    out.filter(|_| at == bytes.len())
}

/// Writes a block's vectors to `path` through a temporary file, so a stopped run never leaves
/// a half-written block behind.
fn write_block<T: Cached>(path: &Path, v: &[T]) -> Result<(), String> {
    let mut bytes = Vec::new();
    for x in v {
        x.write(&mut bytes);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("part");
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}
