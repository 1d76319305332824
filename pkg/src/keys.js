// Byte keys as strings whose code units are the bytes: JS string order is then byte order,
// the order the storage contract's prefix scans promise.

export function toKey(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  }
  return s;
}

export function fromKey(s) {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export const utf8 = (s) => new TextEncoder().encode(s);
