//! Write Cairn hooks in Rust.
//!
//! A Cairn hook is a WebAssembly module that follows the Cairn hook ABI v1 (the Go
//! package `sdk/abi` and `docs/abi.md` are its source of truth). This crate provides
//! the ABI's imports and exports (`cairn.output`, `cairn.log`, `cairn_alloc`,
//! `cairn_abi_v1`), the object model with serde, the input type of every extension
//! point, and one macro per extension point that turns a plain Rust function into an
//! export:
//!
//! ```
//! use cairn_hook::{CommitInput, Verdict};
//!
//! fn validate(input: CommitInput) -> Verdict {
//!     match input.object.value().and_then(|v| v.text()) {
//!         Some(t) if t.len() <= 1024 => Verdict::Accept,
//!         Some(_) => Verdict::reject("value longer than 1 KiB"),
//!         None => Verdict::reject("value is not text"),
//!     }
//! }
//! cairn_hook::precommit!(validate);
//!
//! // Unit-test it natively with `cargo test`:
//! let (status, out) = cairn_hook::testing::run_precommit(validate,
//!     r#"{"op":"put","object":{"bucket":"b","key":"k","values":[{"metadata":{},"data":"hi"}]}}"#);
//! assert_eq!((status, out.as_str()), (0, ""));
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasi` and a `cdylib` crate type.
//!
//! | point | function signature | export macro |
//! |---|---|---|
//! | precommit | `fn(CommitInput) -> Verdict` | [`precommit!`] |
//! | postcommit | `fn(CommitInput)` | [`postcommit!`] |
//! | chash_keyfun | `fn(KeyFunInput) -> Vec<u8>` (1 to 20 bytes) | [`keyfun!`] |
//! | linkfun | `fn(LinkFunInput) -> Vec<Link>` | [`linkfun!`] |
//! | map | `fn(MapInput) -> Vec<Json>` | [`map!`] |
//! | reduce | `fn(ReduceInput) -> Vec<Json>` | [`reduce!`] |
//!
//! Each function may also return `Result<T, E>` with `E: Display`; an `Err` becomes
//! status 2 with the error text as the message. Input that does not decode is answered
//! with status 2 before the function runs. A panic traps (build with `panic = "abort"`),
//! which the host reports as a crashed hook.

#![warn(missing_docs)]

pub mod base64;
mod host;
pub mod input;
pub mod object;
pub mod testing;

use std::fmt::Display;

pub use host::{output, Level};
pub use input::{
    CommitInput, KeyFunInput, LinkFunInput, LinkSpec, MapInput, Op, Place, ReduceInput,
};
pub use object::{Dialect, IndexEntry, Link, Metadata, Object, Value};
pub use serde_json;
/// Any JSON value (map keydata and args, map and reduce values).
pub use serde_json::Value as Json;

/// The ABI version this crate implements.
pub const ABI_VERSION: u32 = 1;

/// Status: success.
pub const STATUS_OK: i32 = 0;
/// Status: a precommit rejects the write; the output is the reason.
pub const STATUS_REJECT: i32 = 1;
/// Status: the function failed; the output is the message.
pub const STATUS_ERROR: i32 = 2;

/// The wildcard of a linkfun spec.
pub const WILDCARD: &str = "_";

/// The longest chash_keyfun result, in bytes.
pub const KEY_HASH_MAX_BYTES: usize = 20;

/// Writing to the server log through `cairn.log`.
pub mod log {
    pub use crate::host::Level;

    /// Writes `msg` at `level`.
    pub fn write(level: Level, msg: &str) {
        crate::host::log(level, msg)
    }

    /// Writes a debug line.
    pub fn debug(msg: &str) {
        write(Level::Debug, msg)
    }

    /// Writes an info line.
    pub fn info(msg: &str) {
        write(Level::Info, msg)
    }

    /// Writes a warning.
    pub fn warn(msg: &str) {
        write(Level::Warn, msg)
    }

    /// Writes an error line.
    pub fn error(msg: &str) {
        write(Level::Error, msg)
    }
}

/// A precommit's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Store the object unchanged.
    Accept,
    /// Store this object instead. The host takes its first value (data, content type,
    /// charset, encoding, user metadata, index, links), keeps its own place and clock,
    /// and re-validates it. Ignored on delete.
    Replace(Object),
    /// Refuse the write; the client gets 403 with the reason.
    Reject(String),
}

impl Verdict {
    /// Rejects with `reason`.
    pub fn reject(reason: impl Into<String>) -> Verdict {
        Verdict::Reject(reason.into())
    }
}

/// What an extension function may return: `T` itself, or `Result<T, E>` where an `Err`
/// becomes status 2 with the error's text.
pub trait Outcome<T> {
    /// Converts into a result with the error as text.
    fn into_outcome(self) -> Result<T, String>;
}

/// The success types of the extension points.
pub trait Returnable {}
impl Returnable for Verdict {}
impl Returnable for () {}
impl Returnable for Vec<u8> {}
impl Returnable for Vec<Link> {}
impl Returnable for Vec<Json> {}

impl<T: Returnable> Outcome<T> for T {
    fn into_outcome(self) -> Result<T, String> {
        Ok(self)
    }
}

impl<T: Returnable, E: Display> Outcome<T> for Result<T, E> {
    fn into_outcome(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

/// The dispatchers the export macros call: decode the input, run the function, encode
/// its result, return the status. Not part of the stable API.
#[doc(hidden)]
pub mod __rt {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde::Serialize;

    pub use crate::host::input;

    fn fail(msg: &str) -> i32 {
        crate::host::output(msg.as_bytes());
        STATUS_ERROR
    }

    fn decode<T: DeserializeOwned>(point: &str, input: &[u8]) -> Result<T, i32> {
        serde_json::from_slice(input)
            .map_err(|e| fail(&format!("cairn-hook: bad {} input: {}", point, e)))
    }

    fn json_out<T: Serialize>(v: &T) -> i32 {
        match serde_json::to_vec(v) {
            Ok(b) => {
                crate::host::output(&b);
                STATUS_OK
            }
            Err(e) => fail(&format!("cairn-hook: encode output: {}", e)),
        }
    }

    /// Runs a precommit function.
    pub fn precommit<R: Outcome<Verdict>>(input: &[u8], f: impl FnOnce(CommitInput) -> R) -> i32 {
        let inp: CommitInput = match decode("precommit", input) {
            Ok(v) => v,
            Err(st) => return st,
        };
        match f(inp).into_outcome() {
            Ok(Verdict::Accept) => STATUS_OK,
            Ok(Verdict::Replace(obj)) => json_out(&obj),
            Ok(Verdict::Reject(reason)) => {
                crate::host::output(reason.as_bytes());
                STATUS_REJECT
            }
            Err(msg) => fail(&msg),
        }
    }

    /// Runs a postcommit function.
    pub fn postcommit<R: Outcome<()>>(input: &[u8], f: impl FnOnce(CommitInput) -> R) -> i32 {
        let inp: CommitInput = match decode("postcommit", input) {
            Ok(v) => v,
            Err(st) => return st,
        };
        match f(inp).into_outcome() {
            Ok(()) => STATUS_OK,
            Err(msg) => fail(&msg),
        }
    }

    /// Runs a chash_keyfun function.
    pub fn keyfun<R: Outcome<Vec<u8>>>(input: &[u8], f: impl FnOnce(KeyFunInput) -> R) -> i32 {
        let inp: KeyFunInput = match decode("chash_keyfun", input) {
            Ok(v) => v,
            Err(st) => return st,
        };
        match f(inp).into_outcome() {
            Ok(h) if !h.is_empty() && h.len() <= KEY_HASH_MAX_BYTES => {
                crate::host::output(&h);
                STATUS_OK
            }
            Ok(h) => fail(&format!(
                "cairn-hook: keyfun returned {} bytes, want 1 to {}",
                h.len(),
                KEY_HASH_MAX_BYTES
            )),
            Err(msg) => fail(&msg),
        }
    }

    /// Runs a linkfun function.
    pub fn linkfun<R: Outcome<Vec<Link>>>(input: &[u8], f: impl FnOnce(LinkFunInput) -> R) -> i32 {
        let inp: LinkFunInput = match decode("linkfun", input) {
            Ok(v) => v,
            Err(st) => return st,
        };
        match f(inp).into_outcome() {
            Ok(links) => json_out(&links),
            Err(msg) => fail(&msg),
        }
    }

    /// Runs a map function.
    pub fn map<R: Outcome<Vec<Json>>>(input: &[u8], f: impl FnOnce(MapInput) -> R) -> i32 {
        let inp: MapInput = match decode("map", input) {
            Ok(v) => v,
            Err(st) => return st,
        };
        match f(inp).into_outcome() {
            Ok(vals) => json_out(&vals),
            Err(msg) => fail(&msg),
        }
    }

    /// Runs a reduce function.
    pub fn reduce<R: Outcome<Vec<Json>>>(input: &[u8], f: impl FnOnce(ReduceInput) -> R) -> i32 {
        let inp: ReduceInput = match decode("reduce", input) {
            Ok(v) => v,
            Err(st) => return st,
        };
        match f(inp).into_outcome() {
            Ok(vals) => json_out(&vals),
            Err(msg) => fail(&msg),
        }
    }
}

/// Exports functions for one extension point. Used through [`precommit!`] and friends.
#[doc(hidden)]
#[macro_export]
macro_rules! __cairn_export {
    ($point:ident, $f:ident) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            #[export_name = ::core::stringify!($f)]
            extern "C" fn __cairn_entry(ptr: *const u8, len: usize) -> i32 {
                // SAFETY: the host passes the buffer it got from cairn_alloc.
                let input = unsafe { $crate::__rt::input(ptr, len) };
                $crate::__rt::$point(input, $f)
            }
        };
    };
}

/// Exports precommit functions: `fn(CommitInput) -> Verdict` (or `Result<Verdict, E>`).
/// `precommit!(validate)` exports `validate(ptr, len) -> status` to the host.
#[macro_export]
macro_rules! precommit {
    ($($f:ident),+ $(,)?) => { $( $crate::__cairn_export!(precommit, $f); )+ };
}

/// Exports postcommit functions: `fn(CommitInput)` (or `-> Result<(), E>`).
#[macro_export]
macro_rules! postcommit {
    ($($f:ident),+ $(,)?) => { $( $crate::__cairn_export!(postcommit, $f); )+ };
}

/// Exports chash_keyfun functions: `fn(KeyFunInput) -> Vec<u8>` returning 1 to 20 bytes,
/// the high-order bytes of a 160-bit ring position (zero bytes pad a shorter hash on the right).
#[macro_export]
macro_rules! keyfun {
    ($($f:ident),+ $(,)?) => { $( $crate::__cairn_export!(keyfun, $f); )+ };
}

/// Exports linkfun functions: `fn(LinkFunInput) -> Vec<Link>`.
#[macro_export]
macro_rules! linkfun {
    ($($f:ident),+ $(,)?) => { $( $crate::__cairn_export!(linkfun, $f); )+ };
}

/// Exports map functions: `fn(MapInput) -> Vec<Json>`.
#[macro_export]
macro_rules! map {
    ($($f:ident),+ $(,)?) => { $( $crate::__cairn_export!(map, $f); )+ };
}

/// Exports reduce functions: `fn(ReduceInput) -> Vec<Json>`. Reduce must be
/// re-reducible: the host may call it again with its own output plus more values.
#[macro_export]
macro_rules! reduce {
    ($($f:ident),+ $(,)?) => { $( $crate::__cairn_export!(reduce, $f); )+ };
}
