//! The wasm-bindgen `Embedder` class (with the `model` feature).

use js_sys::{Float32Array, Object, Reflect, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::js::js_error;
use mnemo::embed::{Embedder, Polarity, Role};
use mnemo_embed::{BertConfig, BertEmbedder};

fn parse_role(role: &str) -> Result<Role, JsValue> {
    match role {
        "query" => Ok(Role::Query),
        "passage" => Ok(Role::Passage),
        other => Err(js_error(mnemo::Error::InvalidInput(format!(
            "unknown role `{other}`: use \"query\" or \"passage\""
        )))),
    }
}

fn set(obj: &Object, key: &str, value: &JsValue) -> Result<(), JsValue> {
    Reflect::set(obj, &key.into(), value).map(|_| ())
}

/// A BERT-family embedder (multilingual-e5-small by default) running in this wasm instance.
#[wasm_bindgen(js_name = Embedder)]
pub struct JsEmbedder {
    inner: BertEmbedder,
}

#[wasm_bindgen(js_class = Embedder)]
impl JsEmbedder {
    /// Loads a model from the bytes of `model.onnx` and `tokenizer.json`. `options` may set
    /// `name` (default `"multilingual-e5-small-latin"`), `kind` (`"e5"`: query:/passage:
    /// prefixes, the default; `"plain"`: none) and `cacheCapacity` (embeddings remembered by
    /// content hash, default 4096; 0 disables), `maxBatchTokens` (padded tokens per forward
    /// pass, default 1024: the wasm memory activations take) and `onStage`, a function called with each load
    /// stage's name as it ends ("model id", "tokenizer", then "parse", "type analysis",
    /// "declutter", "fuse" for model.onnx or "read archive" for a compiled model.nnef.tar), so
    /// that a caller can time the load by stage.
    #[wasm_bindgen(constructor)]
    pub fn new(
        model: &[u8],
        tokenizer: &[u8],
        options: Option<Object>,
    ) -> Result<JsEmbedder, JsValue> {
        let get = |key: &str| {
            options
                .as_ref()
                .and_then(|o| Reflect::get(o, &key.into()).ok())
                .filter(|v| !v.is_undefined())
        };
        let name = get("name")
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "multilingual-e5-small-latin".into());
        let mut config = match get("kind").map(|v| v.as_string()) {
            None => BertConfig::e5(name),
            Some(Some(k)) if k == "e5" => BertConfig::e5(name),
            Some(Some(k)) if k == "plain" => BertConfig::plain(name),
            Some(other) => {
                return Err(js_error(mnemo::Error::InvalidInput(format!(
                    "unknown model kind {other:?}: use \"e5\" or \"plain\""
                ))))
            }
        };
        let count = |key: &str| -> Result<Option<usize>, JsValue> {
            match get(key).map(|v| v.as_f64()) {
                None => Ok(None),
                Some(Some(n)) if n >= 0.0 && n.fract() == 0.0 => Ok(Some(n as usize)),
                Some(_) => Err(js_error(mnemo::Error::InvalidInput(format!(
                    "{key} must be a non-negative integer"
                )))),
            }
        };
        if let Some(n) = count("cacheCapacity")? {
            config.cache_capacity = n;
        }
        if let Some(n) = count("maxBatchTokens")? {
            config.max_batch_tokens = n;
        }
        let on_stage = match get("onStage") {
            None => None,
            Some(f) => Some(f.dyn_into::<js_sys::Function>().map_err(|_| {
                js_error(mnemo::Error::InvalidInput("onStage must be a function".into()))
            })?),
        };
        let mut stage = |name: &'static str| {
            if let Some(f) = &on_stage {
                // A throwing callback must not fail the load: its result is only a timing.
                let _ = f.call1(&JsValue::NULL, &JsValue::from_str(name));
            }
        };
        BertEmbedder::from_bytes_staged(model, tokenizer, config, &mut stage)
            .map(|inner| JsEmbedder { inner })
            .map_err(js_error)
    }

    /// Compiles the bytes of `model.onnx` into a `model.nnef.tar` archive (the graph already
    /// typed, decluttered and fused), which `new Embedder(archive, tokenizer)` loads without
    /// parsing or analysing it, under the same model id.
    pub fn compile(model: &[u8], tokenizer: &[u8]) -> Result<Uint8Array, JsValue> {
        let archive = BertEmbedder::compile(model, tokenizer).map_err(js_error)?;
        Ok(Uint8Array::from(&archive[..]))
    }

    pub(crate) fn into_inner(self) -> BertEmbedder {
        self.inner
    }

    /// `name@hash` of the model files; stored with every vector.
    #[wasm_bindgen(getter, js_name = modelId)]
    pub fn model_id(&self) -> String {
        self.inner.model_id().to_string()
    }

    /// Vector dimension.
    #[wasm_bindgen(getter)]
    pub fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// Optimises the plan for `texts` texts of up to `tokens` tokens now, not on first use.
    #[wasm_bindgen(js_name = warmUp)]
    pub fn warm_up(&mut self, texts: usize, tokens: usize) -> Result<(), JsValue> {
        self.inner.warm_up(&[(texts, tokens)]).map_err(js_error)
    }

    /// Embeds `texts` for `role` (`"query"` or `"passage"`). Returns
    /// `{ dim, vectors: Float32Array (texts × dim), tokens: Uint32Array, truncated: Uint8Array,
    /// negated: Uint8Array }`.
    pub fn embed(&mut self, texts: Vec<String>, role: &str) -> Result<Object, JsValue> {
        let role = parse_role(role)?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let out = self.inner.embed(&refs, role).map_err(js_error)?;
        let flat: Vec<f32> = out.iter().flat_map(|e| e.vector.iter().copied()).collect();
        let tokens: Vec<u32> = out.iter().map(|e| e.tokens as u32).collect();
        let truncated: Vec<u8> = out.iter().map(|e| u8::from(e.truncated)).collect();
        let negated: Vec<u8> =
            out.iter().map(|e| u8::from(e.polarity == Polarity::Negated)).collect();
        let obj = Object::new();
        set(&obj, "dim", &JsValue::from(self.inner.dim()))?;
        set(&obj, "vectors", &Float32Array::from(flat.as_slice()).into())?;
        set(&obj, "tokens", &Uint32Array::from(tokens.as_slice()).into())?;
        set(&obj, "truncated", &Uint8Array::from(truncated.as_slice()).into())?;
        set(&obj, "negated", &Uint8Array::from(negated.as_slice()).into())?;
        Ok(obj)
    }

    /// Token ids the model sees for `text` in `role` (prefix and special tokens included).
    #[wasm_bindgen(js_name = tokenIds)]
    pub fn token_ids(&self, text: &str, role: &str) -> Result<Vec<u32>, JsValue> {
        let role = parse_role(role)?;
        let ids = self.inner.token_ids(text, role).map_err(js_error)?;
        Ok(ids.into_iter().map(|i| i as u32).collect())
    }
}
