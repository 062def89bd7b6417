//! A Cairn reduce function that sums numbers: `sum(values) -> [total]`.
//!
//! * JSON numbers and numeric strings (`"42"`, `" 2.5 "`, `"-1e3"`) are added.
//! * `{"not_found": ...}` objects (what a map phase passes on for missing keys) are
//!   skipped.
//! * Anything else (other objects, arrays, booleans, null, non-numeric strings) fails
//!   the call with a message naming the value's position.
//! * The result is `[total]`, `[0]` for no values: an integer while every input is an
//!   integer and the total fits in 64 bits, otherwise a float. Feeding `[total]` back
//!   with more values gives the same total as summing everything at once, so the
//!   function is re-reducible, as the host requires.

use cairn_hook::{Json, ReduceInput};

/// A running total.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Total {
    Int(i128),
    Float(f64),
}

impl Total {
    fn add_int(self, n: i128) -> Total {
        match self {
            Total::Int(t) => match t.checked_add(n) {
                Some(s) => Total::Int(s),
                None => Total::Float(t as f64 + n as f64),
            },
            Total::Float(t) => Total::Float(t + n as f64),
        }
    }

    fn add_float(self, x: f64) -> Total {
        match self {
            Total::Int(t) => Total::Float(t as f64 + x),
            Total::Float(t) => Total::Float(t + x),
        }
    }

    fn into_json(self) -> Result<Json, String> {
        match self {
            Total::Int(t) => {
                if let Ok(n) = i64::try_from(t) {
                    Ok(Json::from(n))
                } else if let Ok(n) = u64::try_from(t) {
                    Ok(Json::from(n))
                } else {
                    Total::Float(t as f64).into_json()
                }
            }
            Total::Float(x) => cairn_hook::serde_json::Number::from_f64(x)
                .map(Json::Number)
                .ok_or_else(|| "sum-reduce: the sum is not a finite number".to_string()),
        }
    }
}

/// Parses a numeric string: an integer, or a finite decimal/exponent number.
fn parse_number(s: &str) -> Option<Total> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i128>() {
        return Some(Total::Int(n));
    }
    // Rust also parses "inf" and "NaN"; only digits, signs, '.', 'e' and 'E' may appear.
    if t.is_empty()
        || !t
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return None;
    }
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(Total::Float)
}

/// The reduce: sums the numbers in `values`.
pub fn sum(input: ReduceInput) -> Result<Vec<Json>, String> {
    let mut total = Total::Int(0);
    for (i, v) in input.values.iter().enumerate() {
        total = match v {
            Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(x), _, _) => total.add_int(i128::from(x)),
                (None, Some(x), _) => total.add_int(i128::from(x)),
                (None, None, Some(x)) => total.add_float(x),
                _ => return Err(format!("sum-reduce: value {} is not a finite number", i)),
            },
            Json::String(s) => match parse_number(s) {
                Some(Total::Int(n)) => total.add_int(n),
                Some(Total::Float(x)) => total.add_float(x),
                None => {
                    return Err(format!(
                        "sum-reduce: value {} is a string that is not a number",
                        i
                    ))
                }
            },
            Json::Object(o) if o.contains_key("not_found") => total,
            other => {
                let kind = match other {
                    Json::Null => "null",
                    Json::Bool(_) => "a boolean",
                    Json::Array(_) => "an array",
                    _ => "an object",
                };
                return Err(format!("sum-reduce: value {} is {}, not a number", i, kind));
            }
        };
    }
    Ok(vec![total.into_json()?])
}

cairn_hook::reduce!(sum);

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_hook::testing::run_reduce;

    fn reduce(values: &str) -> (i32, String) {
        run_reduce(sum, &format!(r#"{{"values":{},"arg":null}}"#, values))
    }

    #[test]
    fn sums() {
        let cases = [
            ("[]", 0, "[0]"),
            ("[1,2,3]", 0, "[6]"),
            (r#"[1,"2"," 3 ",-4]"#, 0, "[2]"),
            (r#"[1.5,"2.5"]"#, 0, "[4.0]"),
            (r#"["1e3",1]"#, 0, "[1001.0]"),
            (
                r#"[1,{"not_found":{"bucket_type":"default","bucket":"b","key":"k"}},2]"#,
                0,
                "[3]",
            ),
            ("[9223372036854775807,1]", 0, "[9223372036854775808]"),
            (
                "[18446744073709551615,18446744073709551615]",
                0,
                "[3.6893488147419103e19]",
            ),
            ("[-9223372036854775808,-1]", 0, "[-9.223372036854776e18]"),
            (
                r#"[1,"x"]"#,
                2,
                "sum-reduce: value 1 is a string that is not a number",
            ),
            (
                r#"["inf"]"#,
                2,
                "sum-reduce: value 0 is a string that is not a number",
            ),
            (
                r#"["NaN"]"#,
                2,
                "sum-reduce: value 0 is a string that is not a number",
            ),
            (
                r#"[true]"#,
                2,
                "sum-reduce: value 0 is a boolean, not a number",
            ),
            (
                r#"[1,null]"#,
                2,
                "sum-reduce: value 1 is null, not a number",
            ),
            (
                r#"[[1]]"#,
                2,
                "sum-reduce: value 0 is an array, not a number",
            ),
            (
                r#"[{"a":1}]"#,
                2,
                "sum-reduce: value 0 is an object, not a number",
            ),
            (
                "[1e308,1e308]",
                2,
                "sum-reduce: the sum is not a finite number",
            ),
        ];
        for (values, status, want) in cases {
            assert_eq!(reduce(values), (status, want.to_string()), "{}", values);
        }
    }

    #[test]
    fn re_reducible() {
        let all = reduce(r#"[1,"2",3,4.5,{"not_found":{}},6]"#);
        let (_, first) = reduce(r#"[1,"2",3]"#);
        let (_, second) = reduce(r#"[4.5,{"not_found":{}}]"#);
        // Concatenate the partial results (two one-element arrays) with a leftover value.
        let partials = format!(
            "[{},{},6]",
            &first[1..first.len() - 1],
            &second[1..second.len() - 1]
        );
        assert_eq!(reduce(&partials), all);
        assert_eq!(all, (0, "[16.5]".to_string()));
    }
}
