//! The inputs of each extension point, as the host sends them.

use serde::{Deserialize, Serialize};

use crate::object::{Link, Object};
use crate::Json;

/// The operation a commit hook sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// A write of a value.
    Put,
    /// A delete (the object is a tombstone).
    Delete,
}

/// The input of precommit and postcommit: `{"op": "put"|"delete", "object": Object}`.
///
/// A precommit on put sees the value being written (one element in `values`, the
/// client's vclock, no VTag or Last-Modified yet); on delete it sees a tombstone. A
/// postcommit sees the object as stored (all siblings, the new clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitInput {
    /// The operation.
    pub op: Op,
    /// The object.
    pub object: Object,
}

/// The place of an object; the input of chash_keyfun, and a map's missing input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The bucket type.
    #[serde(default)]
    pub bucket_type: String,
    /// The bucket.
    pub bucket: String,
    /// The key.
    pub key: String,
}

/// The input of chash_keyfun: `{"bucket_type": T, "bucket": B, "key": K}`.
pub type KeyFunInput = Place;

/// Which links a linkfun should return: a bucket and a tag, `"_"` meaning any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSpec {
    /// The wanted bucket, or `"_"`.
    pub bucket: String,
    /// The wanted tag, or `"_"`.
    pub tag: String,
}

impl LinkSpec {
    /// Reports whether `link` matches the spec.
    pub fn matches(&self, link: &Link) -> bool {
        (self.bucket == crate::WILDCARD || self.bucket == link.bucket)
            && (self.tag == crate::WILDCARD || self.tag == link.tag)
    }
}

/// The input of linkfun: `{"object": Object, "spec": {"bucket": B|"_", "tag": T|"_"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkFunInput {
    /// The object whose links are wanted.
    pub object: Object,
    /// The filter.
    pub spec: LinkSpec,
}

/// The input of map: an object (or the place of a missing one), the input's key data
/// and the phase argument (JSON null when absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapInput {
    /// The object; None when the input was not found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Object>,
    /// The missing input's place when `object` is None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found: Option<Place>,
    /// The input's key data.
    #[serde(default)]
    pub keydata: Json,
    /// The phase argument.
    #[serde(default)]
    pub arg: Json,
}

/// The input of reduce: `{"values": [...], "arg": any}`. The values may include the
/// function's own earlier output: reduce must be re-reducible.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReduceInput {
    /// The values to reduce.
    #[serde(default)]
    pub values: Vec<Json>,
    /// The phase argument.
    #[serde(default)]
    pub arg: Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_inputs() {
        let c: CommitInput = serde_json::from_str(
            r#"{"op":"delete","object":{"bucket_type":"default","bucket":"b","key":"k","vclock":"",
               "values":[{"metadata":{"X-Store-Meta":{},"X-Store-Deleted":"true"},"data":""}]}}"#,
        )
        .unwrap();
        assert_eq!(c.op, Op::Delete);
        assert!(c.object.is_deleted());

        let k: KeyFunInput =
            serde_json::from_str(r#"{"bucket_type":"t","bucket":"b","key":"k"}"#).unwrap();
        assert_eq!(
            (k.bucket_type.as_str(), k.bucket.as_str(), k.key.as_str()),
            ("t", "b", "k")
        );

        let m: MapInput = serde_json::from_str(
            r#"{"not_found":{"bucket_type":"default","bucket":"b","key":"gone"},"keydata":null,"arg":{"x":1}}"#,
        )
        .unwrap();
        assert!(m.object.is_none());
        assert_eq!(m.not_found.unwrap().key, "gone");
        assert_eq!(m.arg, serde_json::json!({"x": 1}));

        let r: ReduceInput =
            serde_json::from_str(r#"{"values":[1,"2",{"a":3}],"arg":null}"#).unwrap();
        assert_eq!(r.values.len(), 3);
        assert!(r.arg.is_null());
    }

    #[test]
    fn link_spec_matches() {
        let l = Link::new("users", "u2", "friend");
        let cases = [
            ("_", "_", true),
            ("users", "_", true),
            ("_", "friend", true),
            ("users", "friend", true),
            ("people", "_", false),
            ("_", "enemy", false),
        ];
        for (bucket, tag, want) in cases {
            let spec = LinkSpec {
                bucket: bucket.into(),
                tag: tag.into(),
            };
            assert_eq!(spec.matches(&l), want, "{} {}", bucket, tag);
        }
    }
}
