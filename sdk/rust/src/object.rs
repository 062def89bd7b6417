//! The object of ABI v1: what precommit, postcommit, linkfun and map functions receive,
//! and what a precommit may return as a replacement.
//!
//! ```json
//! {"bucket_type":"default","bucket":"users","key":"u1","vclock":"a85hYGBg...",
//!  "values":[{"metadata":{"content-type":"application/json","X-Store-VTag":"4Ldx",
//!    "X-Store-Last-Modified":"Tue, 01 Jan 2030 00:00:00 GMT",
//!    "X-Store-Meta":{"X-Store-Meta-Owner":"bob"},"index":{"email_bin":"a@b.c"},
//!    "Links":[["users","u2","friend"]]},
//!   "data":"{\"name\":\"alice\"}"}]}
//! ```
//!
//! Metadata names carry the server's dialect prefix, `X-Store-` or `X-Riak-`. Both are
//! accepted on input; the prefix that was read is kept in [`Metadata::dialect`] and
//! written back on output.
//!
//! Objects must be decoded from JSON text (`serde_json::from_slice`, as the SDK does, or
//! `from_str`), not from a `serde_json::Value`: index values are read from their raw text
//! so that `_int` values beyond 2^53 keep every digit.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, SerializeTuple};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::base64;
use crate::Json;

/// The metadata name prefix of the server's dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// `X-Store-` (the default dialect).
    #[default]
    Store,
    /// `X-Riak-` (a server started with `--dialect riak`).
    Riak,
}

impl Dialect {
    /// The prefix of prefixed metadata names, e.g. `"X-Store-"`.
    pub fn prefix(self) -> &'static str {
        match self {
            Dialect::Store => "X-Store-",
            Dialect::Riak => "X-Riak-",
        }
    }
}

/// A link from one object to another: `[bucket, key, tag]` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Link {
    /// The bucket of the target object.
    pub bucket: String,
    /// The key of the target object.
    pub key: String,
    /// The link's tag.
    pub tag: String,
}

impl Link {
    /// Builds a link.
    pub fn new(bucket: impl Into<String>, key: impl Into<String>, tag: impl Into<String>) -> Link {
        Link {
            bucket: bucket.into(),
            key: key.into(),
            tag: tag.into(),
        }
    }
}

impl Serialize for Link {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(3)?;
        t.serialize_element(&self.bucket)?;
        t.serialize_element(&self.key)?;
        t.serialize_element(&self.tag)?;
        t.end()
    }
}

impl<'de> Deserialize<'de> for Link {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Link, D::Error> {
        let (bucket, key, tag) = <(String, String, String)>::deserialize(d)?;
        Ok(Link { bucket, key, tag })
    }
}

/// One secondary-index posting. `field` is lower-case and ends in `_bin` or `_int`; an
/// `_int` value is its canonical decimal text (it may exceed 64 bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexEntry {
    /// The index name, e.g. `"email_bin"`.
    pub field: String,
    /// The value as text.
    pub value: String,
}

/// The metadata of one value (sibling).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metadata {
    /// Which metadata prefix the object used (and will be written with).
    pub dialect: Dialect,
    /// The media type, e.g. `application/json`.
    pub content_type: Option<String>,
    /// The charset parameter of the content type, when one was sent.
    pub charset: Option<String>,
    /// The content encoding, when one was sent.
    pub content_encoding: Option<String>,
    /// The value's version tag (absent in a precommit's input on put).
    pub vtag: Option<String>,
    /// Last modification time, RFC 1123 in GMT (absent in a precommit's input on put).
    pub last_modified: Option<String>,
    /// User metadata as (name, value) pairs; names as the client sent them, without the
    /// `X-Store-Meta-`/`X-Riak-Meta-` prefix.
    pub usermeta: Vec<(String, String)>,
    /// Secondary-index postings.
    pub index: Vec<IndexEntry>,
    /// Links to other objects.
    pub links: Vec<Link>,
    /// True for a tombstone (a deleted value).
    pub deleted: bool,
    /// Metadata entries this SDK does not model, kept so they round-trip.
    pub other: BTreeMap<String, Json>,
}

impl Metadata {
    /// Returns the user metadata value named `name` (compared ASCII case-insensitively).
    pub fn meta(&self, name: &str) -> Option<&str> {
        self.usermeta
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets user metadata `name` to `value`, replacing an entry of the same name.
    pub fn set_meta(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        match self
            .usermeta
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(&name))
        {
            Some(entry) => entry.1 = value,
            None => self.usermeta.push((name, value)),
        }
    }

    /// Returns the values of index `field` (compared case-insensitively).
    pub fn index_values(&self, field: &str) -> Vec<&str> {
        self.index
            .iter()
            .filter(|e| e.field.eq_ignore_ascii_case(field))
            .map(|e| e.value.as_str())
            .collect()
    }

    /// Adds an index posting; `field` is lower-cased and must end in `_bin` or `_int`
    /// (the server re-validates a precommit's replacement).
    pub fn add_index(&mut self, field: &str, value: impl Into<String>) {
        self.index.push(IndexEntry {
            field: field.to_ascii_lowercase(),
            value: value.into(),
        });
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    if s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
    {
        Some(&s[prefix.len()..])
    } else {
        None
    }
}

/// Splits a prefixed metadata name into its dialect and suffix.
fn split_prefixed(name: &str) -> Option<(Dialect, &str)> {
    if let Some(rest) = strip_prefix_ci(name, Dialect::Store.prefix()) {
        return Some((Dialect::Store, rest));
    }
    strip_prefix_ci(name, Dialect::Riak.prefix()).map(|rest| (Dialect::Riak, rest))
}

/// A JSON object read with its member order kept.
struct Ordered<V>(Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V2<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for V2<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered<V>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Ordered<V>, E> {
                Ok(Ordered(Vec::new()))
            }
        }
        d.deserialize_any(V2(std::marker::PhantomData))
    }
}

/// Reads one index value (a string or a number) from its raw JSON text.
fn index_scalar(text: &str) -> Result<String, String> {
    let t = text.trim();
    match t.as_bytes().first() {
        Some(b'"') => serde_json::from_slice::<String>(t.as_bytes()).map_err(|e| e.to_string()),
        Some(b'-' | b'0'..=b'9') => Ok(t.to_string()),
        _ => Err(format!("index value {} is not a string or a number", t)),
    }
}

/// Reads an index member's value: a scalar or an array of scalars.
fn index_field_values(raw: &RawValue) -> Result<Vec<String>, String> {
    let t = raw.get().trim();
    if t.starts_with('[') {
        let items: Vec<Box<RawValue>> =
            serde_json::from_slice(t.as_bytes()).map_err(|e| e.to_string())?;
        items.iter().map(|r| index_scalar(r.get())).collect()
    } else {
        index_scalar(t).map(|v| vec![v])
    }
}

/// A tombstone flag: `"true"`/`"false"` as the host writes it, or a JSON boolean.
fn deleted_flag(v: &Json) -> Result<bool, String> {
    match v {
        Json::Bool(b) => Ok(*b),
        Json::Null => Ok(false),
        Json::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Json::String(s) if s.eq_ignore_ascii_case("false") || s.is_empty() => Ok(false),
        other => Err(format!("deleted flag is {}, not a boolean", kind(other))),
    }
}

/// Names the JSON type of `v` for error messages.
fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Reads an optional string member (null is absent).
fn opt_string(name: &str, v: Json) -> Result<Option<String>, String> {
    match v {
        Json::Null => Ok(None),
        Json::String(s) => Ok(Some(s)),
        other => Err(format!("{}: want a string, have {}", name, kind(&other))),
    }
}

/// Reads the Links member: `[[bucket, key, tag], ...]`.
fn links(v: Json) -> Result<Vec<Link>, String> {
    let list = match v {
        Json::Null => return Ok(Vec::new()),
        Json::Array(list) => list,
        other => return Err(format!("Links: want an array, have {}", kind(&other))),
    };
    list.into_iter()
        .map(|l| match l {
            Json::Array(parts) if parts.len() == 3 && parts.iter().all(Json::is_string) => {
                let mut it = parts.into_iter().map(|p| match p {
                    Json::String(s) => s,
                    _ => String::new(),
                });
                Ok(Link {
                    bucket: it.next().unwrap_or_default(),
                    key: it.next().unwrap_or_default(),
                    tag: it.next().unwrap_or_default(),
                })
            }
            _ => Err("Links: want [bucket, key, tag] arrays of strings".to_string()),
        })
        .collect()
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Metadata, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = Metadata;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object's metadata")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Metadata, E> {
                Ok(Metadata::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Metadata, A::Error> {
                let mut md = Metadata::default();
                let mut dialect_seen = false;
                while let Some(name) = m.next_key::<String>()? {
                    let lower = name.to_ascii_lowercase();
                    // The index keeps each value's raw text; everything else goes through
                    // serde_json::Value, whose code a hook links anyway.
                    if lower == "index" {
                        let fields: Ordered<Box<RawValue>> = m.next_value()?;
                        for (field, raw) in fields.0 {
                            let values = index_field_values(&raw).map_err(|e| {
                                de::Error::custom(format!("index {}: {}", field, e))
                            })?;
                            let field = field.to_ascii_lowercase();
                            for value in values {
                                md.index.push(IndexEntry {
                                    field: field.clone(),
                                    value,
                                });
                            }
                        }
                        continue;
                    }
                    let v: Json = m.next_value()?;
                    let r = match lower.as_str() {
                        "content-type" => opt_string(&name, v).map(|s| md.content_type = s),
                        "charset" => opt_string(&name, v).map(|s| md.charset = s),
                        "content-encoding" => opt_string(&name, v).map(|s| md.content_encoding = s),
                        "links" => links(v).map(|l| md.links = l),
                        _ => match split_prefixed(&name) {
                            None => {
                                md.other.insert(name.clone(), v);
                                Ok(())
                            }
                            Some((dialect, suffix)) => {
                                if !dialect_seen {
                                    md.dialect = dialect;
                                    dialect_seen = true;
                                }
                                match suffix.to_ascii_lowercase().as_str() {
                                    "vtag" => opt_string(&name, v).map(|s| md.vtag = s),
                                    "last-modified" => {
                                        opt_string(&name, v).map(|s| md.last_modified = s)
                                    }
                                    "deleted" => deleted_flag(&v).map(|b| md.deleted = b),
                                    "meta" => user_meta(&name, v).map(|um| md.usermeta = um),
                                    _ => {
                                        md.other.insert(name.clone(), v);
                                        Ok(())
                                    }
                                }
                            }
                        },
                    };
                    r.map_err(de::Error::custom)?;
                }
                Ok(md)
            }
        }
        d.deserialize_any(MetaVisitor)
    }
}

/// Reads the user metadata object: `{"X-Store-Meta-Name": "value", ...}`. Names keep the
/// case they were sent in; null values are skipped.
fn user_meta(name: &str, v: Json) -> Result<Vec<(String, String)>, String> {
    let entries = match v {
        Json::Null => return Ok(Vec::new()),
        Json::Object(entries) => entries,
        other => return Err(format!("{}: want an object, have {}", name, kind(&other))),
    };
    let mut out = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let value = match opt_string(&k, v)? {
            Some(value) => value,
            None => continue,
        };
        let short = split_prefixed(&k)
            .and_then(|(_, rest)| strip_prefix_ci(rest, "Meta-"))
            .unwrap_or(&k);
        out.push((short.to_string(), value));
    }
    Ok(out)
}

/// True for the canonical decimal form of an integer: `0`, or an optional `-` and digits
/// without a leading zero.
fn is_canonical_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && s != "-0"
}

struct IndexScalarOut<'a> {
    value: &'a str,
    int: bool,
}

impl Serialize for IndexScalarOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.int && is_canonical_int(self.value) {
            if let Ok(n) = self.value.parse::<i64>() {
                return s.serialize_i64(n);
            }
            if let Ok(n) = self.value.parse::<u64>() {
                return s.serialize_u64(n);
            }
            let raw: Box<RawValue> =
                serde_json::from_slice(self.value.as_bytes()).map_err(serde::ser::Error::custom)?;
            return raw.serialize(s);
        }
        s.serialize_str(self.value)
    }
}

struct IndexFieldOut<'a> {
    values: Vec<&'a str>,
    int: bool,
}

impl Serialize for IndexFieldOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let int = self.int;
        if self.values.len() == 1 {
            return IndexScalarOut {
                value: self.values[0],
                int,
            }
            .serialize(s);
        }
        let mut seq = s.serialize_seq(Some(self.values.len()))?;
        for value in &self.values {
            seq.serialize_element(&IndexScalarOut { value, int })?;
        }
        seq.end()
    }
}

struct IndexOut<'a>(&'a [IndexEntry]);

impl Serialize for IndexOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Group by field, in order of first appearance.
        let mut fields: Vec<(&str, Vec<&str>)> = Vec::new();
        for e in self.0 {
            match fields.iter_mut().find(|(f, _)| *f == e.field) {
                Some((_, vs)) => vs.push(&e.value),
                None => fields.push((&e.field, vec![&e.value])),
            }
        }
        let mut m = s.serialize_map(Some(fields.len()))?;
        for (field, values) in fields {
            let int = field.to_ascii_lowercase().ends_with("_int");
            m.serialize_entry(field, &IndexFieldOut { values, int })?;
        }
        m.end()
    }
}

struct UserMetaOut<'a> {
    entries: &'a [(String, String)],
    dialect: Dialect,
}

impl Serialize for UserMetaOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in self.entries {
            m.serialize_entry(&format!("{}Meta-{}", self.dialect.prefix(), k), v)?;
        }
        m.end()
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.dialect.prefix();
        let mut m = s.serialize_map(None)?;
        if let Some(v) = &self.content_type {
            m.serialize_entry("content-type", v)?;
        }
        if let Some(v) = &self.charset {
            m.serialize_entry("charset", v)?;
        }
        if let Some(v) = &self.content_encoding {
            m.serialize_entry("content-encoding", v)?;
        }
        if let Some(v) = &self.vtag {
            m.serialize_entry(&format!("{}VTag", p), v)?;
        }
        if let Some(v) = &self.last_modified {
            m.serialize_entry(&format!("{}Last-Modified", p), v)?;
        }
        m.serialize_entry(
            &format!("{}Meta", p),
            &UserMetaOut {
                entries: &self.usermeta,
                dialect: self.dialect,
            },
        )?;
        if !self.index.is_empty() {
            m.serialize_entry("index", &IndexOut(&self.index))?;
        }
        if !self.links.is_empty() {
            m.serialize_entry("Links", &self.links)?;
        }
        if self.deleted {
            m.serialize_entry(&format!("{}Deleted", p), "true")?;
        }
        for (k, v) in &self.other {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// One value of an object (a sibling): its metadata and its bytes. On the wire the bytes
/// are `"data"` when they are valid UTF-8 and `"data_b64"` (standard base64) otherwise.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(try_from = "ValueWire")]
pub struct Value {
    /// The value's metadata.
    pub metadata: Metadata,
    data: Vec<u8>,
}

#[derive(Deserialize)]
struct ValueWire {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    data_b64: Option<String>,
}

impl TryFrom<ValueWire> for Value {
    type Error = String;
    fn try_from(w: ValueWire) -> Result<Value, String> {
        let data = match (w.data_b64, w.data) {
            (Some(_), Some(_)) => return Err("both data and data_b64 are set".to_string()),
            (Some(b), None) => base64::decode(&b).map_err(|e| format!("data_b64: {}", e))?,
            (None, Some(d)) => d.into_bytes(),
            (None, None) => Vec::new(),
        };
        Ok(Value {
            metadata: w.metadata,
            data,
        })
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("metadata", &self.metadata)?;
        match std::str::from_utf8(&self.data) {
            Ok(text) => m.serialize_entry("data", text)?,
            Err(_) => m.serialize_entry("data_b64", &base64::encode(&self.data))?,
        }
        m.end()
    }
}

impl Value {
    /// Builds a value with the given content type and bytes.
    pub fn new(content_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Value {
        Value {
            metadata: Metadata {
                content_type: Some(content_type.into()),
                ..Metadata::default()
            },
            data: data.into(),
        }
    }

    /// The value's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// The value as text, or None when it is not valid UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.data).ok()
    }

    /// Parses the value as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.data)
    }

    /// Replaces the value's bytes.
    pub fn set_bytes(&mut self, data: impl Into<Vec<u8>>) {
        self.data = data.into();
    }

    /// Replaces the value with text.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.data = text.into().into_bytes();
    }

    /// Replaces the value with `v` encoded as JSON (the content type is left as is).
    pub fn set_json<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), serde_json::Error> {
        self.data = serde_json::to_vec(v)?;
        Ok(())
    }

    /// Takes the value's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.data
    }

    /// True for a tombstone.
    pub fn is_deleted(&self) -> bool {
        self.metadata.deleted
    }
}

/// An object: its place, its causal context (opaque, base64) and its values, one per
/// sibling.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Object {
    /// The bucket type, `"default"` for plain buckets.
    #[serde(default)]
    pub bucket_type: String,
    /// The bucket.
    pub bucket: String,
    /// The key.
    pub key: String,
    /// The opaque causal context, standard base64 (`""` when there is none).
    #[serde(default)]
    pub vclock: String,
    /// The values; more than one means siblings (a conflict).
    #[serde(default)]
    pub values: Vec<Value>,
}

impl Object {
    /// Builds an object of the default bucket type with one value.
    pub fn new(bucket: impl Into<String>, key: impl Into<String>, value: Value) -> Object {
        Object {
            bucket_type: "default".to_string(),
            bucket: bucket.into(),
            key: key.into(),
            vclock: String::new(),
            values: vec![value],
        }
    }

    /// The first value, if any (a precommit on put sees exactly one).
    pub fn value(&self) -> Option<&Value> {
        self.values.first()
    }

    /// The first value, mutably.
    pub fn value_mut(&mut self) -> Option<&mut Value> {
        self.values.first_mut()
    }

    /// True when the object has siblings.
    pub fn has_siblings(&self) -> bool {
        self.values.len() > 1
    }

    /// True when every value is a tombstone.
    pub fn is_deleted(&self) -> bool {
        !self.values.is_empty() && self.values.iter().all(Value::is_deleted)
    }

    /// The decoded causal context bytes.
    pub fn vclock_bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        base64::decode(&self.vclock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"{"bucket_type":"default","bucket":"users","key":"u1","vclock":"AAEC",
      "values":[{"metadata":{"content-type":"application/json","charset":"utf-8",
        "X-Store-VTag":"4Ldx","X-Store-Last-Modified":"Tue, 01 Jan 2030 00:00:00 GMT",
        "X-Store-Meta":{"X-Store-Meta-Owner":"bob"},
        "index":{"email_bin":"a@b.c","age_int":[1,123456789012345678901234567890]},
        "Links":[["users","u2","friend"]]},
        "data":"{\"name\":\"alice\"}"},
       {"metadata":{"X-Store-Meta":{},"X-Store-Deleted":"true"},"data":""},
       {"metadata":{"content-type":"application/octet-stream","X-Store-Meta":{}},"data_b64":"AAEC/w=="}]}"#;

    #[test]
    fn decodes_every_field() {
        let o: Object = serde_json::from_str(FULL).unwrap();
        assert_eq!(
            (o.bucket_type.as_str(), o.bucket.as_str(), o.key.as_str()),
            ("default", "users", "u1")
        );
        assert_eq!(o.vclock_bytes().unwrap(), vec![0, 1, 2]);
        assert_eq!(o.values.len(), 3);
        let v = &o.values[0];
        let md = &v.metadata;
        assert_eq!(md.dialect, Dialect::Store);
        assert_eq!(md.content_type.as_deref(), Some("application/json"));
        assert_eq!(md.charset.as_deref(), Some("utf-8"));
        assert_eq!(md.vtag.as_deref(), Some("4Ldx"));
        assert_eq!(
            md.last_modified.as_deref(),
            Some("Tue, 01 Jan 2030 00:00:00 GMT")
        );
        assert_eq!(md.meta("owner"), Some("bob"));
        assert_eq!(md.index_values("email_bin"), vec!["a@b.c"]);
        assert_eq!(
            md.index_values("age_int"),
            vec!["1", "123456789012345678901234567890"]
        );
        assert_eq!(md.links, vec![Link::new("users", "u2", "friend")]);
        assert_eq!(v.text(), Some(r#"{"name":"alice"}"#));
        assert!(!v.is_deleted());
        assert!(o.values[1].is_deleted());
        assert_eq!(o.values[2].bytes(), &[0, 1, 2, 0xff]);
        assert_eq!(o.values[2].text(), None);
        assert!(o.has_siblings());
        assert!(!o.is_deleted());
    }

    #[test]
    fn round_trips_through_json() {
        let o: Object = serde_json::from_str(FULL).unwrap();
        let text = serde_json::to_string(&o).unwrap();
        let back: Object = serde_json::from_str(&text).unwrap();
        assert_eq!(back, o);
        assert!(
            text.contains(r#""age_int":[1,123456789012345678901234567890]"#),
            "{}",
            text
        );
        assert!(text.contains(r#""email_bin":"a@b.c""#), "{}", text);
        assert!(text.contains(r#""data_b64":"AAEC/w==""#), "{}", text);
        assert!(text.contains(r#""X-Store-Deleted":"true""#), "{}", text);
    }

    #[test]
    fn dialects() {
        let cases = [
            (
                r#"{"X-Riak-VTag":"v","X-Riak-Meta":{"X-Riak-Meta-Owner":"bob"},"X-Riak-Deleted":"true"}"#,
                Dialect::Riak,
            ),
            (
                r#"{"X-Store-VTag":"v","X-Store-Meta":{"X-Store-Meta-Owner":"bob"},"X-Store-Deleted":true}"#,
                Dialect::Store,
            ),
            (
                r#"{"x-riak-vtag":"v","x-riak-meta":{"x-riak-meta-Owner":"bob"},"x-riak-deleted":"TRUE"}"#,
                Dialect::Riak,
            ),
        ];
        for (json, dialect) in cases {
            let md: Metadata = serde_json::from_str(json).unwrap();
            assert_eq!(md.dialect, dialect, "{}", json);
            assert_eq!(md.vtag.as_deref(), Some("v"), "{}", json);
            assert_eq!(
                md.usermeta,
                vec![("Owner".to_string(), "bob".to_string())],
                "{}",
                json
            );
            assert!(md.deleted, "{}", json);
            let out = serde_json::to_string(&md).unwrap();
            let p = dialect.prefix();
            let want = format!(
                r#"{{"{p}VTag":"v","{p}Meta":{{"{p}Meta-Owner":"bob"}},"{p}Deleted":"true"}}"#
            );
            assert_eq!(out, want);
        }
    }

    #[test]
    fn metadata_output_shape() {
        let mut md = Metadata {
            content_type: Some("text/plain".into()),
            ..Metadata::default()
        };
        md.set_meta("Owner", "bob");
        md.set_meta("owner", "carol");
        md.add_index("Email_BIN", "x@y");
        md.add_index("n_int", "7");
        md.add_index("n_int", "-12");
        md.add_index("big_int", "98765432109876543210");
        md.add_index("odd_int", "007");
        md.links.push(Link::new("b", "k", "t"));
        let out = serde_json::to_string(&md).unwrap();
        assert_eq!(
            out,
            r#"{"content-type":"text/plain","X-Store-Meta":{"X-Store-Meta-Owner":"carol"},"index":{"email_bin":"x@y","n_int":[7,-12],"big_int":98765432109876543210,"odd_int":"007"},"Links":[["b","k","t"]]}"#
        );
    }

    #[test]
    fn rejects_bad_input() {
        let cases = [
            (
                r#"{"metadata":{"index":{"x_bin":true}},"data":""}"#,
                "not a string or a number",
            ),
            (
                r#"{"metadata":{"index":{"x_bin":[{}]}},"data":""}"#,
                "not a string or a number",
            ),
            (
                r#"{"metadata":{"Links":[["a","b"]]},"data":""}"#,
                "want [bucket, key, tag]",
            ),
            (
                r#"{"metadata":{"X-Store-Deleted":7},"data":""}"#,
                "deleted flag is a number, not a boolean",
            ),
            (
                r#"{"metadata":{"content-type":1},"data":""}"#,
                "content-type: want a string, have a number",
            ),
            (
                r#"{"metadata":{"X-Store-Meta":[]},"data":""}"#,
                "X-Store-Meta: want an object, have an array",
            ),
            (r#"{"metadata":{},"data_b64":"!!"}"#, "data_b64"),
            (
                r#"{"metadata":{},"data":"a","data_b64":"YQ=="}"#,
                "both data and data_b64 are set",
            ),
        ];
        for (json, want) in cases {
            let err = serde_json::from_str::<Value>(json).unwrap_err().to_string();
            assert!(err.contains(want), "{}: {}", json, err);
        }
    }

    #[test]
    fn canonical_ints() {
        let cases = [
            ("0", true),
            ("-1", true),
            ("10", true),
            ("-0", false),
            ("01", false),
            ("", false),
            ("-", false),
            ("1.0", false),
            ("1e3", false),
        ];
        for (s, want) in cases {
            assert_eq!(is_canonical_int(s), want, "{:?}", s);
        }
    }
}
