//! The hooks shown in README.md, so that the README's code keeps compiling and working.

use cairn_hook::testing::{delete_input, put_input, run_precommit};
use cairn_hook::{CommitInput, Object, Op, Verdict};

/// Refuses values larger than 1 KiB.
pub fn limit(input: CommitInput) -> Verdict {
    if input.op == Op::Delete {
        return Verdict::Accept;
    }
    match input.object.value() {
        Some(v) if v.bytes().len() > 1024 => Verdict::reject("values are limited to 1 KiB"),
        _ => Verdict::Accept,
    }
}

cairn_hook::precommit!(limit);

/// Tags every value with the user metadata Checked: yes.
pub fn tag(input: CommitInput) -> Verdict {
    let mut obj = input.object;
    match obj.value_mut() {
        Some(v) => v.metadata.set_meta("Checked", "yes"),
        None => return Verdict::Accept,
    }
    Verdict::Replace(obj)
}

#[test]
fn limits_size() {
    let big = vec![b'x'; 2000];
    assert_eq!(
        run_precommit(limit, &put_input("b", "k", "text/plain", &big)),
        (1, "values are limited to 1 KiB".to_string())
    );
    assert_eq!(
        run_precommit(limit, &delete_input("b", "k")),
        (0, String::new())
    );
    assert_eq!(
        run_precommit(limit, &put_input("b", "k", "text/plain", b"small")),
        (0, String::new())
    );
}

#[test]
fn tags_in_the_objects_dialect() {
    let input = r#"{"op":"put","object":{"bucket_type":"default","bucket":"b","key":"k","vclock":"",
        "values":[{"metadata":{"content-type":"text/plain","X-Riak-Meta":{}},"data":"x"}]}}"#;
    let (status, out) = run_precommit(tag, input);
    assert_eq!(status, 0);
    assert!(
        out.contains(r#""X-Riak-Meta":{"X-Riak-Meta-Checked":"yes"}"#),
        "{}",
        out
    );
    let obj: Object = serde_json::from_str(&out).unwrap();
    assert_eq!(obj.value().unwrap().metadata.meta("checked"), Some("yes"));
}
