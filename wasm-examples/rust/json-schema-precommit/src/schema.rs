//! A small JSON Schema subset: `type`, `required`, `properties`, `enum`,
//! `minLength`/`maxLength`, `minimum`/`maximum` and `items`. A schema is compiled once
//! from JSON; validation reports the first failure with the JSON path of the value that
//! failed, e.g. `$.age: expected integer, got string`.

use cairn_hook::Json;

/// Keywords that only annotate a schema; accepted and ignored.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "examples",
    "default",
];

/// A JSON type name of JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Type {
    fn parse(name: &str) -> Option<Type> {
        Some(match name {
            "null" => Type::Null,
            "boolean" => Type::Boolean,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "string" => Type::String,
            "array" => Type::Array,
            "object" => Type::Object,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Type::Null => "null",
            Type::Boolean => "boolean",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::String => "string",
            Type::Array => "array",
            Type::Object => "object",
        }
    }

    /// The most specific type of `v` (integer for numbers without a fraction).
    fn of(v: &Json) -> Type {
        match v {
            Json::Null => Type::Null,
            Json::Bool(_) => Type::Boolean,
            Json::Number(n) if is_integer(n) => Type::Integer,
            Json::Number(_) => Type::Number,
            Json::String(_) => Type::String,
            Json::Array(_) => Type::Array,
            Json::Object(_) => Type::Object,
        }
    }

    fn accepts(self, v: &Json) -> bool {
        let actual = Type::of(v);
        actual == self || (self == Type::Number && actual == Type::Integer)
    }
}

fn is_integer(n: &cairn_hook::serde_json::Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .map_or(false, |f| f.is_finite() && f.fract() == 0.0)
}

/// A compiled schema.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    types: Vec<Type>,
    required: Vec<String>,
    properties: Vec<(String, Schema)>,
    enumeration: Option<Vec<Json>>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    items: Option<Box<Schema>>,
}

impl Schema {
    /// Compiles a schema from its JSON text.
    pub fn parse(text: &str) -> Result<Schema, String> {
        let v: Json = cairn_hook::serde_json::from_slice(text.as_bytes())
            .map_err(|e| format!("not JSON: {}", e))?;
        Schema::compile(&v, "#")
    }

    /// Compiles the schema `v` found at `at` (a JSON pointer, for error messages).
    fn compile(v: &Json, at: &str) -> Result<Schema, String> {
        let obj = v
            .as_object()
            .ok_or_else(|| format!("{}: a schema must be an object", at))?;
        let mut s = Schema::default();
        for (k, val) in obj {
            let here = format!("{}/{}", at, k);
            match k.as_str() {
                "type" => {
                    let names: Vec<&Json> = match val {
                        Json::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    for n in names {
                        let t = n.as_str().and_then(Type::parse);
                        s.types.push(
                            t.ok_or_else(|| format!("{}: unknown type {}", here, json_text(n)))?,
                        );
                    }
                }
                "required" => {
                    let list = val
                        .as_array()
                        .ok_or_else(|| format!("{}: want an array of names", here))?;
                    for n in list {
                        let name = n
                            .as_str()
                            .ok_or_else(|| format!("{}: want an array of names", here))?;
                        s.required.push(name.to_string());
                    }
                }
                "properties" => {
                    let props = val
                        .as_object()
                        .ok_or_else(|| format!("{}: want an object", here))?;
                    for (name, sub) in props {
                        s.properties.push((
                            name.clone(),
                            Schema::compile(sub, &format!("{}/{}", here, name))?,
                        ));
                    }
                }
                "enum" => {
                    let list = val
                        .as_array()
                        .ok_or_else(|| format!("{}: want an array", here))?;
                    s.enumeration = Some(list.clone());
                }
                "minLength" => s.min_length = Some(count(val, &here)?),
                "maxLength" => s.max_length = Some(count(val, &here)?),
                "minimum" => s.minimum = Some(number(val, &here)?),
                "maximum" => s.maximum = Some(number(val, &here)?),
                "items" => s.items = Some(Box::new(Schema::compile(val, &here)?)),
                k if ANNOTATIONS.contains(&k) => {}
                _ => return Err(format!("{}: keyword not supported by this validator", here)),
            }
        }
        Ok(s)
    }

    /// Checks `v`; the error names the path of the first value that fails.
    pub fn validate(&self, v: &Json) -> Result<(), String> {
        self.check(v, &mut String::from("$"))
    }

    fn check(&self, v: &Json, path: &mut String) -> Result<(), String> {
        if !self.types.is_empty() && !self.types.iter().any(|t| t.accepts(v)) {
            let want: Vec<&str> = self.types.iter().map(|t| t.name()).collect();
            return Err(format!(
                "{}: expected {}, got {}",
                path,
                want.join(" or "),
                Type::of(v).name()
            ));
        }
        if let Some(allowed) = &self.enumeration {
            if !allowed.iter().any(|a| json_eq(a, v)) {
                let list: Vec<String> = allowed.iter().map(json_text).collect();
                return Err(format!("{}: must be one of {}", path, list.join(", ")));
            }
        }
        match v {
            Json::String(text) => {
                let n = text.chars().count() as u64;
                if let Some(min) = self.min_length.filter(|&min| n < min) {
                    return Err(format!("{}: length {} is below minLength {}", path, n, min));
                }
                if let Some(max) = self.max_length.filter(|&max| n > max) {
                    return Err(format!("{}: length {} is above maxLength {}", path, n, max));
                }
            }
            Json::Number(num) => {
                let x = num.as_f64().unwrap_or(f64::NAN);
                if let Some(min) = self.minimum.filter(|&min| x < min) {
                    return Err(format!("{}: {} is below minimum {}", path, num, min));
                }
                if let Some(max) = self.maximum.filter(|&max| x > max) {
                    return Err(format!("{}: {} is above maximum {}", path, num, max));
                }
            }
            Json::Object(members) => {
                for name in &self.required {
                    if !members.contains_key(name) {
                        let at = path.len();
                        push_name(path, name);
                        let msg = format!("{}: required property missing", path);
                        path.truncate(at);
                        return Err(msg);
                    }
                }
                for (name, sub) in &self.properties {
                    if let Some(child) = members.get(name) {
                        let at = path.len();
                        push_name(path, name);
                        sub.check(child, path)?;
                        path.truncate(at);
                    }
                }
            }
            Json::Array(elems) => {
                if let Some(sub) = &self.items {
                    for (i, child) in elems.iter().enumerate() {
                        let at = path.len();
                        path.push_str(&format!("[{}]", i));
                        sub.check(child, path)?;
                        path.truncate(at);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// JSON equality where numbers compare by value (1 equals 1.0).
fn json_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).map_or(false, |q| json_eq(p, q)))
        }
        _ => a == b,
    }
}

/// Appends `.name`, or `["name"]` when name is not a plain identifier.
fn push_name(path: &mut String, name: &str) {
    let plain = name
        .chars()
        .next()
        .map_or(false, |c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(name);
    } else {
        path.push('[');
        path.push_str(&json_text(&Json::String(name.to_string())));
        path.push(']');
    }
}

/// Encodes `v` as JSON text.
fn json_text(v: &Json) -> String {
    cairn_hook::serde_json::to_string(v).unwrap_or_default()
}

fn count(v: &Json, at: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("{}: want a non-negative integer", at))
}

fn number(v: &Json, at: &str) -> Result<f64, String> {
    v.as_f64().ok_or_else(|| format!("{}: want a number", at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_errors() {
        let cases = [
            ("[]", "#: a schema must be an object"),
            (r#"{"type":"float"}"#, "#/type: unknown type \"float\""),
            (r#"{"required":"a"}"#, "#/required: want an array of names"),
            (
                r#"{"properties":{"a":{"minLength":-1}}}"#,
                "#/properties/a/minLength: want a non-negative integer",
            ),
            (
                r#"{"items":{"pattern":"x"}}"#,
                "#/items/pattern: keyword not supported by this validator",
            ),
            ("{", "not JSON"),
        ];
        for (text, want) in cases {
            let err = Schema::parse(text).unwrap_err();
            assert!(err.starts_with(want), "{}: {}", text, err);
        }
        assert!(Schema::parse(r#"{"$schema":"x","title":"t","description":"d"}"#).is_ok());
    }

    #[test]
    fn validation() {
        let schema = Schema::parse(
            r#"{"type":"object","required":["id"],
                "properties":{"id":{"type":"integer","minimum":1},
                              "score":{"type":["number","null"],"maximum":10},
                              "first name":{"type":"string","minLength":2,"maxLength":3},
                              "kind":{"enum":["a",1,{"x":[1]}]},
                              "list":{"type":"array","items":{"type":"object","required":["v"]}}}}"#,
        )
        .unwrap();
        let cases = [
            (r#"{"id":1}"#, Ok(())),
            (r#"{"id":1.0,"score":null}"#, Ok(())),
            (
                r#"{"id":1,"score":9.5,"first name":"żół","kind":{"x":[1.0]},"list":[{"v":0}]}"#,
                Ok(()),
            ),
            (r#"[]"#, Err("$: expected object, got array")),
            (r#"{}"#, Err("$.id: required property missing")),
            (r#"{"id":"7"}"#, Err("$.id: expected integer, got string")),
            (r#"{"id":1.5}"#, Err("$.id: expected integer, got number")),
            (r#"{"id":0}"#, Err("$.id: 0 is below minimum 1")),
            (
                r#"{"id":1,"score":11}"#,
                Err("$.score: 11 is above maximum 10"),
            ),
            (
                r#"{"id":1,"score":true}"#,
                Err("$.score: expected number or null, got boolean"),
            ),
            (
                r#"{"id":1,"first name":"a"}"#,
                Err("$[\"first name\"]: length 1 is below minLength 2"),
            ),
            (
                r#"{"id":1,"first name":"abcd"}"#,
                Err("$[\"first name\"]: length 4 is above maxLength 3"),
            ),
            (
                r#"{"id":1,"kind":"b"}"#,
                Err("$.kind: must be one of \"a\", 1, {\"x\":[1]}"),
            ),
            (
                r#"{"id":1,"list":[{"v":1},{}]}"#,
                Err("$.list[1].v: required property missing"),
            ),
            (
                r#"{"id":1,"list":[{"v":1},3]}"#,
                Err("$.list[1]: expected object, got integer"),
            ),
        ];
        for (doc, want) in cases {
            let v: Json = cairn_hook::serde_json::from_str(doc).unwrap();
            assert_eq!(schema.validate(&v), want.map_err(String::from), "{}", doc);
        }
    }
}
