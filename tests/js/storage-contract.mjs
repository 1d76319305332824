// The storage contract every JS adapter must pass (the JS twin of src/store/contract.rs):
// get, paged prefix scans in byte order with `after` and `limit`, atomic batches, binary keys,
// and bad input refused without changing anything. Throws on the first broken promise.
const enc = (s) => new TextEncoder().encode(s);
const dec = (b) => new TextDecoder().decode(b);

function assert(ok, what) {
  if (!ok) throw new Error(`storage contract: ${what}`);
}

export async function checkStorage(s) {
  assert((await s.get(enc("none"))) === null, "a missing key reads as null");
  await s.write([
    [enc("p/b"), enc("2")],
    [enc("p/a"), enc("1")],
    [enc("p/c"), enc("3")],
    [enc("q/a"), enc("x")],
    [new Uint8Array([0x70, 0x2f, 0xff, 0x00]), new Uint8Array([0, 255])],
  ]);
  assert(dec(await s.get(enc("p/a"))) === "1", "get returns what was put");
  const all = await s.scan(enc("p/"), null, 100);
  assert(all.length === 4, `prefix scan sees only its prefix (${all.length})`);
  assert(
    all.map(([k]) => k[2]).join() === [0x61, 0x62, 0x63, 0xff].join(),
    "scan is in byte order",
  );
  const binary = all[3][1];
  assert(binary.length === 2 && binary[0] === 0 && binary[1] === 255, "binary values survive");
  const page1 = await s.scan(enc("p/"), null, 2);
  const page2 = await s.scan(enc("p/"), page1[1][0], 2);
  assert(page1.length === 2 && page2.length === 2, "pages respect limit");
  assert(dec(page2[0][0]) === "p/c", "a page starts strictly after `after`");
  assert((await s.scan(enc("p/"), enc("a"), 10)).length === 4, "`after` before the prefix");
  await s.write([
    [enc("p/a"), null],
    [enc("p/b"), enc("22")],
  ]);
  assert((await s.get(enc("p/a"))) === null, "delete in a batch");
  assert(dec(await s.get(enc("p/b"))) === "22", "overwrite in a batch");
  let refused = false;
  try {
    await s.write([
      [enc("p/z"), enc("new")],
      ["not bytes", enc("x")],
    ]);
  } catch (e) {
    refused = e.code === "INVALID_INPUT";
  }
  assert(refused, "a bad batch is refused with code INVALID_INPUT");
  assert((await s.get(enc("p/z"))) === null, "a refused batch changes nothing");
  const got = await s.get(enc("p/b"));
  got[0] = 0;
  assert(dec(await s.get(enc("p/b"))) === "22", "returned bytes are copies");
  await s.write([]);
}

/** After `checkStorage` and a reopen: what was acknowledged is there. */
export async function checkReopened(s) {
  assert(dec(await s.get(enc("p/b"))) === "22", "acknowledged writes survive a reopen");
  assert((await s.get(enc("p/a"))) === null, "acknowledged deletes survive a reopen");
  assert((await s.scan(enc("q/"), null, 10)).length === 1, "other prefixes survive a reopen");
}
