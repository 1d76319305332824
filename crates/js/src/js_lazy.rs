//! The lazy-table protocol of `engine::lazy` for JS hosts: which tables to preload, which
//! records loading needs, handing the snapshot over part by part, what a call that failed with
//! `NEED_RECORDS` needs, handing records over, and dropping them again after each call.
//!
//! A need is `{key: Uint8Array}` (one record; the host answers `null` when it is absent) or
//! `{prefix: Uint8Array, after: Uint8Array | null}` (every record under `prefix` after `after`).

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use super::js::js_error;
use super::js_engine::WasmEngine;
use mnemo::store::journal::Need;
use mnemo::store::MemoryStore;
use mnemo::{Engine, Error};

fn bytes(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

fn needs_to_js(needs: Vec<Need>) -> Result<Array, JsValue> {
    let out = Array::new();
    for need in needs {
        let o = Object::new();
        match need {
            Need::Key(k) => {
                Reflect::set(&o, &"key".into(), &bytes(&k))?;
            }
            Need::Range { prefix, after } => {
                Reflect::set(&o, &"prefix".into(), &bytes(&prefix))?;
                let after = after.map_or(JsValue::NULL, |a| bytes(&a));
                Reflect::set(&o, &"after".into(), &after)?;
            }
        }
        out.push(&o);
    }
    Ok(out)
}

fn prefixes_to_js(prefixes: Vec<Vec<u8>>) -> Array {
    prefixes.iter().map(|p| bytes(p)).collect()
}

fn parallel(keys: &Array, values: &Array) -> Result<(), JsValue> {
    if keys.length() != values.length() {
        return Err(js_error(Error::InvalidInput("as many values as keys are needed".into())));
    }
    Ok(())
}

#[wasm_bindgen]
impl WasmEngine {
    /// Table prefixes of namespace `ns` to preload whole before `loadParts` (Uint8Array[]).
    #[wasm_bindgen(js_name = eagerPrefixes)]
    pub fn eager_prefixes(ns: &str) -> Result<Array, JsValue> {
        Engine::<MemoryStore>::eager_prefixes(ns).map(prefixes_to_js).map_err(js_error)
    }

    /// The records loading `ns` reads beyond the preloaded tables (needs, module docs).
    #[wasm_bindgen(js_name = loadNeeds)]
    pub fn load_needs(&self, ns: &str) -> Result<Array, JsValue> {
        needs_to_js(self.inner.load_needs(ns).map_err(js_error)?)
    }

    /// What the call that just failed with code NEED_RECORDS needs (needs, module docs).
    #[wasm_bindgen(js_name = takeNeeds)]
    pub fn take_needs(&mut self) -> Result<Array, JsValue> {
        needs_to_js(self.inner.store_mut().take_needs())
    }

    /// Hands over records fetched for key needs: `values[i]` is a `Uint8Array`, or `null` when
    /// `keys[i]` is absent from the host's storage.
    pub fn hold(&mut self, keys: Array, values: Array) -> Result<(), JsValue> {
        parallel(&keys, &values)?;
        let mut ks = Vec::new();
        let mut vs = Vec::new();
        for (k, v) in keys.iter().zip(values.iter()) {
            ks.push(k.dyn_into::<Uint8Array>()?.to_vec());
            vs.push(if v.is_null() { None } else { Some(v.dyn_into::<Uint8Array>()?.to_vec()) });
        }
        self.inner.store_mut().hold(ks, vs).map_err(js_error)
    }

    /// Hands over every record under `prefix` after `after` (a range need).
    #[wasm_bindgen(js_name = holdRange)]
    pub fn hold_range(
        &mut self,
        prefix: Uint8Array,
        after: Option<Uint8Array>,
        keys: Array,
        values: Array,
    ) -> Result<(), JsValue> {
        parallel(&keys, &values)?;
        let mut entries = Vec::with_capacity(keys.length() as usize);
        for (k, v) in keys.iter().zip(values.iter()) {
            entries
                .push((k.dyn_into::<Uint8Array>()?.to_vec(), v.dyn_into::<Uint8Array>()?.to_vec()));
        }
        let store = self.inner.store_mut();
        store.hold_range(prefix.to_vec(), after.map(|a| a.to_vec()), entries).map_err(js_error)
    }

    /// The key prefixes of the snapshot parts of `ns` to hand over with `loadChunks` and
    /// `loadPartEnd`, in order (Uint8Array[]; empty when there is no snapshot to read). It
    /// reads the snapshot's head and the vector records of the rows the snapshot left out, so
    /// it fails with NEED_RECORDS until they are held; `settle` before handing over the parts.
    #[wasm_bindgen(js_name = loadParts)]
    pub fn load_parts(&mut self, ns: &str) -> Result<Array, JsValue> {
        self.inner.load_parts(ns).map(prefixes_to_js).map_err(js_error)
    }

    /// Hands over chunks (Uint8Array[], the next values under the current part's prefix, in
    /// key order; a page at a time, so the JS heap never holds a whole part): each is copied
    /// into wasm memory and decoded there as it comes, nothing into the mirror.
    #[wasm_bindgen(js_name = loadChunks)]
    pub fn load_chunks(&mut self, ns: &str, chunks: Array) -> Result<(), JsValue> {
        for c in chunks.iter() {
            let c = c.dyn_into::<Uint8Array>()?;
            if let Some(room) = self.inner.load_chunk(ns, c.length() as usize).map_err(js_error)? {
                c.copy_to(room);
            }
        }
        Ok(())
    }

    /// Ends the current part, once every chunk under its prefix is handed over: it is checked
    /// and decoded.
    #[wasm_bindgen(js_name = loadPartEnd)]
    pub fn load_part_end(&mut self, ns: &str) -> Result<(), JsValue> {
        self.inner.load_part_end(ns).map_err(js_error)
    }

    /// Before loading `ns`: keeps its episodes, vectors and snapshot out of memory from now on.
    #[wasm_bindgen(js_name = makeLazy)]
    pub fn make_lazy(&mut self, ns: &str) -> Result<(), JsValue> {
        for prefix in Engine::<MemoryStore>::lazy_prefixes(ns).map_err(js_error)? {
            self.inner.store_mut().make_lazy(prefix);
        }
        Ok(())
    }

    /// After each call (its writes taken and stored): drops what the lazy tables held.
    pub fn settle(&mut self) -> Result<(), JsValue> {
        self.inner.store_mut().settle().map_err(js_error)
    }
}
