//! The namespace's meta record (`Table::Meta`, id `space`, kind 6): `next_id:u64 model_id:str`
//! — the next episode id and the model its vectors were made with.

use crate::error::Result;
use crate::store::codec::{open, seal, Reader, Writer};

const META_KIND: u8 = 6;

pub(crate) fn encode_meta(next_id: u64, model: &str) -> Vec<u8> {
    let mut w = Writer::new();
    w.u64(next_id).str(model);
    seal(META_KIND, &w.finish())
}

pub(crate) fn decode_meta(bytes: &[u8]) -> Result<(u64, String)> {
    let mut r = Reader::new(open(bytes, META_KIND, "namespace meta")?, "namespace meta");
    let out = (r.u64()?, r.str()?.to_string());
    r.end()?;
    Ok(out)
}
