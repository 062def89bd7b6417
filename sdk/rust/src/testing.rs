//! Run hooks natively, without a server or a WebAssembly runtime, for unit tests with
//! `cargo test` on the host target.
//!
//! Each `run_*` function feeds JSON input to a hook function through the same code the
//! exported entry point uses on wasm32 (decoding, encoding, statuses), and returns the
//! status and the output. [`logs`] returns the lines the last run wrote with
//! [`crate::log`]. State is per thread, so tests may run in parallel.
//!
//! ```
//! use cairn_hook::{testing, Json, ReduceInput};
//!
//! fn count(input: ReduceInput) -> Vec<Json> {
//!     vec![Json::from(input.values.len())]
//! }
//! assert_eq!(testing::run_reduce(count, r#"{"values":[1,2,3],"arg":null}"#), (0, "[3]".to_string()));
//! ```

#![cfg(not(target_arch = "wasm32"))]

use crate::{host, Outcome, Verdict};
use crate::{CommitInput, Json, KeyFunInput, Link, LinkFunInput, MapInput, ReduceInput};

fn run_bytes(input: &str, call: impl FnOnce(&[u8]) -> i32) -> (i32, Vec<u8>) {
    host::reset();
    let status = call(input.as_bytes());
    (status, host::take_output())
}

fn run_text(input: &str, call: impl FnOnce(&[u8]) -> i32) -> (i32, String) {
    let (status, out) = run_bytes(input, call);
    let text = String::from_utf8(out)
        .unwrap_or_else(|e| panic!("cairn-hook: output is not UTF-8: {:?}", e.as_bytes()));
    (status, text)
}

/// Runs a precommit function on `input` (JSON): (0, "") accepts, (0, object JSON)
/// replaces, (1, reason) rejects, (2, message) fails.
pub fn run_precommit<R: Outcome<Verdict>>(
    f: impl FnOnce(CommitInput) -> R,
    input: &str,
) -> (i32, String) {
    run_text(input, |b| crate::__rt::precommit(b, f))
}

/// Runs a postcommit function on `input` (JSON).
pub fn run_postcommit<R: Outcome<()>>(
    f: impl FnOnce(CommitInput) -> R,
    input: &str,
) -> (i32, String) {
    run_text(input, |b| crate::__rt::postcommit(b, f))
}

/// Runs a chash_keyfun function on `input` (JSON); the output is the raw hash bytes.
pub fn run_keyfun<R: Outcome<Vec<u8>>>(
    f: impl FnOnce(KeyFunInput) -> R,
    input: &str,
) -> (i32, Vec<u8>) {
    run_bytes(input, |b| crate::__rt::keyfun(b, f))
}

/// Runs a linkfun function on `input` (JSON); the output is `[[bucket,key,tag],...]`.
pub fn run_linkfun<R: Outcome<Vec<Link>>>(
    f: impl FnOnce(LinkFunInput) -> R,
    input: &str,
) -> (i32, String) {
    run_text(input, |b| crate::__rt::linkfun(b, f))
}

/// Runs a map function on `input` (JSON); the output is a JSON array.
pub fn run_map<R: Outcome<Vec<Json>>>(f: impl FnOnce(MapInput) -> R, input: &str) -> (i32, String) {
    run_text(input, |b| crate::__rt::map(b, f))
}

/// Runs a reduce function on `input` (JSON); the output is a JSON array.
pub fn run_reduce<R: Outcome<Vec<Json>>>(
    f: impl FnOnce(ReduceInput) -> R,
    input: &str,
) -> (i32, String) {
    run_text(input, |b| crate::__rt::reduce(b, f))
}

/// The log lines (level, text) the last run on this thread wrote. Levels: -1 debug,
/// 0 info, 1 warn, 2 error.
pub fn logs() -> Vec<(i32, String)> {
    host::logs()
}

/// Builds a precommit/postcommit input for a put of `data` with `content_type` to
/// `bucket`/`key`, as the host would send it.
pub fn put_input(bucket: &str, key: &str, content_type: &str, data: &[u8]) -> String {
    let obj = crate::Object::new(bucket, key, crate::Value::new(content_type, data));
    serde_json::json!({"op": "put", "object": obj}).to_string()
}

/// Builds a precommit/postcommit input for a delete of `bucket`/`key` (a tombstone).
pub fn delete_input(bucket: &str, key: &str) -> String {
    let mut v = crate::Value::default();
    v.metadata.deleted = true;
    let obj = crate::Object::new(bucket, key, v);
    serde_json::json!({"op": "delete", "object": obj}).to_string()
}
