// The batch record both log adapters store (Node files, Workers KV): one record per atomic batch.
//
// record  := len:u32 crc32:u32 payload         (LE; crc32 IEEE of payload)
// payload := op*    op := 1 klen:u32 key vlen:u32 value  |  0 klen:u32 key
import { checkOps } from "./adapters/memory.js";

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function encode(ops) {
  checkOps(ops);
  let size = 0;
  for (const [k, v] of ops) size += 5 + k.length + (v === null ? 0 : 4 + v.length);
  const out = new Uint8Array(8 + size);
  const dv = new DataView(out.buffer);
  let at = 8;
  for (const [k, v] of ops) {
    out[at] = v === null ? 0 : 1;
    dv.setUint32(at + 1, k.length, true);
    out.set(k, at + 5);
    at += 5 + k.length;
    if (v !== null) {
      dv.setUint32(at, v.length, true);
      out.set(v, at + 4);
      at += 4 + v.length;
    }
  }
  dv.setUint32(0, size, true);
  dv.setUint32(4, crc32(out.subarray(8)), true);
  return out;
}

export function decode(payload) {
  const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const ops = [];
  let at = 0;
  while (at < payload.length) {
    const tag = payload[at];
    const klen = dv.getUint32(at + 1, true);
    const key = payload.slice(at + 5, at + 5 + klen);
    at += 5 + klen;
    if (tag === 1) {
      const vlen = dv.getUint32(at, true);
      ops.push([key, payload.slice(at + 4, at + 4 + vlen)]);
      at += 4 + vlen;
    } else {
      ops.push([key, null]);
    }
  }
  return ops;
}

