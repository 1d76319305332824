//! The user's rights over their data: erasure of a namespace, a subject or an episode with a
//! verification scan and a receipt (`erase`, `erase_derived`), rectification under the same id
//! (`correct`), the encrypted export and import (`export`) and the readable JSON export
//! (`readable_export`, the right of access).

pub(crate) mod correct;
pub(crate) mod erase;
pub(crate) mod erase_derived;
pub(crate) mod erase_options;
pub(crate) mod export;
pub(crate) mod readable_export;
