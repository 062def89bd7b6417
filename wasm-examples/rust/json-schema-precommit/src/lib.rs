//! A Cairn precommit hook that validates every JSON value written to a bucket against
//! the JSON Schema in `schema.json`, which is compiled into the module.
//!
//! * A value that satisfies the schema is accepted unchanged.
//! * A value that does not is rejected (the client gets 403) with a reason naming the
//!   failing path, e.g. `$.age: expected integer, got string`.
//! * A value that is not JSON (or not UTF-8) is rejected.
//! * Deletes are accepted.

mod schema;

use cairn_hook::{CommitInput, Json, Op, Verdict};
use schema::Schema;

/// The schema, compiled into the module.
const SCHEMA_JSON: &str = include_str!("../schema.json");

thread_local! {
    // Compiled once per instance, on first use.
    static SCHEMA: Result<Schema, String> = Schema::parse(SCHEMA_JSON);
}

/// The precommit: accepts values that match the schema, rejects the others.
pub fn validate(input: CommitInput) -> Result<Verdict, String> {
    if input.op == Op::Delete {
        return Ok(Verdict::Accept);
    }
    SCHEMA.with(|compiled| {
        let schema = compiled
            .as_ref()
            .map_err(|e| format!("schema.json: {}", e))?;
        for value in input.object.values.iter().filter(|v| !v.is_deleted()) {
            if value.text().is_none() {
                return Ok(Verdict::reject("value is not JSON: it is not UTF-8"));
            }
            let doc: Json = match value.json() {
                Ok(d) => d,
                Err(e) => return Ok(Verdict::reject(format!("value is not JSON: {}", e))),
            };
            if let Err(reason) = schema.validate(&doc) {
                return Ok(Verdict::Reject(reason));
            }
        }
        Ok(Verdict::Accept)
    })
}

cairn_hook::precommit!(validate);

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_hook::testing::{delete_input, put_input, run_precommit};

    #[test]
    fn the_compiled_in_schema_is_valid() {
        Schema::parse(SCHEMA_JSON).unwrap();
    }

    #[test]
    fn verdicts() {
        let put = |data: &str| put_input("users", "u1", "application/json", data.as_bytes());
        let cases = [
            (put(r#"{"name":"alice","email":"a@b.c","age":30}"#), 0, ""),
            (
                put(r#"{"name":"bob","email":"b@b.c","age":7,"role":"guest","tags":["x","y"]}"#),
                0,
                "",
            ),
            (
                put(r#"{"name":"alice","email":"a@b.c","age":"30"}"#),
                1,
                "$.age: expected integer, got string",
            ),
            (
                put(r#"{"name":"alice","age":30}"#),
                1,
                "$.email: required property missing",
            ),
            (
                put(r#"{"name":"","email":"a@b.c","age":30}"#),
                1,
                "$.name: length 0 is below minLength 1",
            ),
            (
                put(r#"{"name":"a","email":"a@b.c","age":200}"#),
                1,
                "$.age: 200 is above maximum 150",
            ),
            (
                put(r#"{"name":"a","email":"a@b.c","age":1,"role":"root"}"#),
                1,
                r#"$.role: must be one of "admin", "member", "guest""#,
            ),
            (
                put(r#"{"name":"a","email":"a@b.c","age":1,"tags":["ok",5]}"#),
                1,
                "$.tags[1]: expected string, got integer",
            ),
            (put("[1,2]"), 1, "$: expected object, got array"),
            (
                put("hello"),
                1,
                "value is not JSON: expected value at line 1 column 1",
            ),
            (
                put_input("users", "u1", "application/octet-stream", &[0xff, 0xfe]),
                1,
                "value is not JSON: it is not UTF-8",
            ),
            (delete_input("users", "u1"), 0, ""),
        ];
        for (input, status, want) in cases {
            assert_eq!(
                run_precommit(validate, &input),
                (status, want.to_string()),
                "{}",
                input
            );
        }
    }
}
