//! One small function per extension point, exported with the SDK's macros. Built as a
//! cdylib for wasm32 it is a complete hook module; `tests/points.rs` runs the same
//! functions natively.
//!
//! ```sh
//! RUSTC=/usr/bin/rustc /usr/bin/cargo build --release --target wasm32-wasi --example all_points
//! ```

use cairn_hook::{
    log, CommitInput, Json, KeyFunInput, Link, LinkFunInput, MapInput, Op, ReduceInput, Verdict,
};

/// Precommit: rejects values over 16 bytes, upper-cases text/plain values, accepts the rest.
pub fn shout(input: CommitInput) -> Verdict {
    if input.op == Op::Delete {
        return Verdict::Accept;
    }
    let mut obj = input.object;
    let v = match obj.value_mut() {
        Some(v) => v,
        None => return Verdict::reject("no value"),
    };
    if v.bytes().len() > 16 {
        return Verdict::reject(format!(
            "value is {} bytes, the limit is 16",
            v.bytes().len()
        ));
    }
    if v.metadata.content_type.as_deref() != Some("text/plain") {
        return Verdict::Accept;
    }
    let upper = v.text().unwrap_or_default().to_uppercase();
    v.set_text(upper);
    v.metadata.set_meta("Shouted", "yes");
    Verdict::Replace(obj)
}

/// Postcommit: logs the write; fails for bucket "fail".
pub fn note(input: CommitInput) -> Result<(), String> {
    if input.object.bucket == "fail" {
        return Err("asked to fail".to_string());
    }
    log::info(&format!(
        "{:?} {}/{}",
        input.op, input.object.bucket, input.object.key
    ));
    Ok(())
}

/// chash_keyfun: the key's length and first byte, as a 2-byte hash.
pub fn keylen(input: KeyFunInput) -> Vec<u8> {
    vec![input.key.len() as u8, input.key.bytes().next().unwrap_or(0)]
}

/// linkfun: the links that match the spec.
pub fn links(input: LinkFunInput) -> Vec<Link> {
    let spec = input.spec;
    input
        .object
        .values
        .iter()
        .flat_map(|v| v.metadata.links.iter())
        .filter(|l| spec.matches(l))
        .cloned()
        .collect()
}

/// map: the key of each found object, `null` for a missing one.
pub fn keys(input: MapInput) -> Vec<Json> {
    match input.object {
        Some(o) => vec![Json::String(o.key)],
        None => vec![Json::Null],
    }
}

/// reduce: counts the values (re-reducible: a previous count arrives as a number).
pub fn count(input: ReduceInput) -> Vec<Json> {
    let n: u64 = input.values.iter().map(|v| v.as_u64().unwrap_or(1)).sum();
    vec![Json::from(n)]
}

cairn_hook::precommit!(shout);
cairn_hook::postcommit!(note);
cairn_hook::keyfun!(keylen);
cairn_hook::linkfun!(links);
cairn_hook::map!(keys);
cairn_hook::reduce!(count);
