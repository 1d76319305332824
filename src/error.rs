//! One error type for the whole engine.
//!
//! Every variant says what went wrong *and* what to do about it, in the style of
//! loro and redb. Errors carry owned strings so they cross the wasm boundary unchanged.

use std::fmt;

/// Result alias used throughout mnemo.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which model file a loading error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFile {
    /// The ONNX graph (`model.onnx`).
    Onnx,
    /// The Hugging Face tokenizer (`tokenizer.json`).
    Tokenizer,
}

impl fmt::Display for ModelFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelFile::Onnx => "model.onnx",
            ModelFile::Tokenizer => "tokenizer.json",
        })
    }
}

/// Everything that can go wrong in mnemo.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model file could not be read, parsed or prepared.
    #[error(
        "cannot load {file} ({stage}): {detail}. Check that the file is a BERT-family \
             model exported to ONNX (inputs input_ids, attention_mask[, token_type_ids]; \
             output last_hidden_state) with its matching tokenizer.json"
    )]
    ModelLoad {
        /// The file the problem is in.
        file: ModelFile,
        /// The loading stage that failed (parse, inputs, outputs, optimise…).
        stage: &'static str,
        /// What tract or tokenizers said.
        detail: String,
    },
    /// Running the model failed on an input it accepted at load time.
    #[error("embedding failed while {stage}: {detail}")]
    Inference {
        /// What the embedder was doing.
        stage: &'static str,
        /// The underlying message.
        detail: String,
    },
    /// The caller handed over input the engine refuses; nothing was changed.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A vector does not belong to the model in use.
    #[error(
        "vector was made by model `{found}` but this engine uses `{expected}`: re-embed \
             with the current model instead of mixing vector spaces (Engine::reembed, \
             `mnemo reembed`, JS `reembed`)"
    )]
    ModelMismatch {
        /// The model id the engine runs.
        expected: String,
        /// The model id stored with the vector.
        found: String,
    },
    /// Stored bytes fail their checksum or format check somewhere a crash cannot explain.
    #[error(
        "stored data is corrupt ({what}): {detail}. Nothing was changed; restore the store \
             from a backup or an export"
    )]
    Corrupt {
        /// Which store or record.
        what: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A namespace that holds nothing was read from.
    #[error(
        "namespace `{0}` has no memories yet: remember something in it first, or check the \
             user id the namespace was derived from"
    )]
    UnknownNamespace(String),
    /// A record that does not exist was addressed.
    #[error("{0} not found")]
    NotFound(String),
    /// An encrypted file could not be opened with the passphrase given.
    #[error("cannot decrypt: {0}. Check the passphrase")]
    Decrypt(String),
    /// A file is not in a format (or a version of it) this build reads.
    #[error("unsupported format: {0}")]
    Format(String),
    /// Another process holds the store open.
    #[error(
        "the store at {path} is open in another process (it holds mnemo.lock): close that \
             process, or give this one another store directory"
    )]
    Locked {
        /// The store directory.
        path: String,
    },
    /// The call needs records the host has not handed over yet (an asynchronous host that keeps
    /// the larger tables in its own storage: `store::journal`). The binding fetches them and
    /// runs the call again, so callers of the bindings never see it.
    #[error(
        "the call needs {count} record(s) or range(s) still in the host's storage: the host \
             fetches them (Journaled::take_needs) and runs the call again"
    )]
    NeedRecords {
        /// How many keys or ranges are needed.
        count: usize,
    },
    /// Reading a local file failed (native hosts only).
    #[error("cannot read {path}: {detail}")]
    Io {
        /// The path that failed.
        path: String,
        /// The OS error.
        detail: String,
    },
}

impl Error {
    /// A stable, machine-readable code for this error (used by the JS and WIT bindings).
    pub fn code(&self) -> &'static str {
        match self {
            Error::ModelLoad { .. } => "MODEL_LOAD",
            Error::Inference { .. } => "INFERENCE",
            Error::InvalidInput(_) => "INVALID_INPUT",
            Error::ModelMismatch { .. } => "MODEL_MISMATCH",
            Error::Io { .. } => "IO",
            Error::Locked { .. } => "LOCKED",
            Error::Decrypt(_) => "DECRYPT",
            Error::Format(_) => "FORMAT",
            Error::UnknownNamespace(_) => "UNKNOWN_NAMESPACE",
            Error::NotFound(_) => "NOT_FOUND",
            Error::Corrupt { .. } => "CORRUPT",
            Error::NeedRecords { .. } => "NEED_RECORDS",
        }
    }
}
