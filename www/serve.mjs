// A static file server on 127.0.0.1 for the inspector and the browser tests: files under
// `root`, plus `aliases` (URL prefix → folder, e.g. "/model/" → the default model).
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";

const TYPES = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".css": "text/css",
  ".svg": "image/svg+xml",
};

export async function serve(root, { port = 0, aliases = {} } = {}) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    const alias = Object.keys(aliases).find((a) => path.startsWith(a));
    const base = alias ? aliases[alias] : root;
    const rel = alias ? path.slice(alias.length) : path;
    const file = join(base, rel.endsWith("/") || rel === "" ? rel + "index.html" : rel);
    if (!file.startsWith(base)) return res.writeHead(403).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// `node www/serve.mjs [PORT]`: serves the repository for the inspector (tools/inspector).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { resolve, dirname } = await import("node:path");
  const { existsSync } = await import("node:fs");
  const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
  const model = [process.env.MNEMO_MODEL_DIR, join(root, "models/multilingual-e5-small-latin")]
    .filter(Boolean)
    .find((d) => existsSync(join(d, "model.onnx")));
  const s = await serve(root, { port: Number(process.argv[2] ?? 8787), aliases: model ? { "/model/": model } : {} });
  console.log(`mnemo inspector: ${s.url}/www/inspector/`);
}
