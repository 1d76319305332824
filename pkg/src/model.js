// Model bytes for JS hosts: fetched with progress events and kept in the Cache API where there
// is one (browsers, extensions, Workers), so the second load reads no network.

async function readAll(response, file, total, onProgress) {
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    onProgress?.({ file, loaded, total });
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Fetches `files` (`{model: url, tokenizer: url}`, any names) and resolves to their bytes by
 * the same names. `onProgress({file, loaded, total, cached})` reports each chunk; `cacheName`
 * names the Cache API cache (null: do not cache).
 */
export async function fetchModel(files, { onProgress, cacheName = "mnemo-models" } = {}) {
  const cache = cacheName && globalThis.caches ? await globalThis.caches.open(cacheName) : null;
  const out = {};
  for (const [file, url] of Object.entries(files)) {
    let response = cache ? await cache.match(url) : undefined;
    const cached = response !== undefined;
    if (!response) {
      response = await fetch(url);
      if (!response.ok) {
        throw Object.assign(new Error(`${url}: HTTP ${response.status}`), { code: "MODEL_FETCH" });
      }
      if (cache) await cache.put(url, response.clone());
    }
    const total = Number(response.headers.get("content-length")) || 0;
    out[file] = await readAll(response, file, total, (p) => onProgress?.({ ...p, cached }));
  }
  return out;
}
