//! Runs the functions of examples/all_points.rs natively through cairn_hook::testing,
//! covering every extension point, the statuses and the error paths of the dispatchers.

#[path = "../examples/all_points.rs"]
mod all_points;

use all_points::*;
use cairn_hook::testing::{self, delete_input, put_input};
use cairn_hook::{CommitInput, Json, Object, ReduceInput, Verdict};

#[test]
fn precommit_statuses() {
    let cases = [
        (put_input("b", "k", "application/json", b"{}"), 0, ""),
        (
            put_input("b", "k", "text/plain", b"0123456789abcdefg"),
            1,
            "value is 17 bytes, the limit is 16",
        ),
        (delete_input("b", "k"), 0, ""),
        (
            r#"{"op":"put","object":{"bucket":"b","key":"k","values":[]}}"#.to_string(),
            1,
            "no value",
        ),
        (
            r#"{"op":"upsert","object":{}}"#.to_string(),
            2,
            "cairn-hook: bad precommit input: unknown variant `upsert`",
        ),
        ("not json".to_string(), 2, "cairn-hook: bad precommit input"),
    ];
    for (input, status, want) in cases {
        let (st, out) = testing::run_precommit(shout, &input);
        assert_eq!(st, status, "{}: {}", input, out);
        assert!(
            out.starts_with(want),
            "{}: got {:?}, want {:?}",
            input,
            out,
            want
        );
    }
}

#[test]
fn precommit_replacement_keeps_dialect_and_adds_meta() {
    let input = r#"{"op":"put","object":{"bucket_type":"default","bucket":"b","key":"k","vclock":"",
        "values":[{"metadata":{"content-type":"text/plain","X-Riak-Meta":{"X-Riak-Meta-Owner":"bob"}},"data":"hi"}]}}"#;
    let (st, out) = testing::run_precommit(shout, input);
    assert_eq!(st, 0);
    let obj: Object = serde_json::from_str(&out).unwrap();
    let v = obj.value().unwrap();
    assert_eq!(v.text(), Some("HI"));
    assert_eq!(v.metadata.meta("Owner"), Some("bob"));
    assert_eq!(v.metadata.meta("Shouted"), Some("yes"));
    assert!(
        out.contains(r#""X-Riak-Meta":{"X-Riak-Meta-Owner":"bob","X-Riak-Meta-Shouted":"yes"}"#),
        "{}",
        out
    );
}

#[test]
fn result_errors_become_status_2() {
    fn failing(_: CommitInput) -> Result<Verdict, std::io::Error> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Other,
            "disk on fire",
        ))
    }
    assert_eq!(
        testing::run_precommit(failing, &put_input("b", "k", "text/plain", b"x")),
        (2, "disk on fire".to_string())
    );
}

#[test]
fn postcommit_logs_and_fails() {
    let (st, out) = testing::run_postcommit(note, &put_input("b", "k", "text/plain", b"x"));
    assert_eq!((st, out.as_str()), (0, ""));
    assert_eq!(testing::logs(), vec![(0, "Put b/k".to_string())]);
    let (st, out) = testing::run_postcommit(note, &put_input("fail", "k", "text/plain", b"x"));
    assert_eq!((st, out.as_str()), (2, "asked to fail"));
    assert!(testing::logs().is_empty(), "logs are per run");
}

#[test]
fn keyfun_bytes_and_length_check() {
    let (st, out) = testing::run_keyfun(
        keylen,
        r#"{"bucket_type":"default","bucket":"b","key":"abc"}"#,
    );
    assert_eq!((st, out), (0, vec![3, b'a']));
    fn too_long(_: cairn_hook::KeyFunInput) -> Vec<u8> {
        vec![0; 21]
    }
    fn empty(_: cairn_hook::KeyFunInput) -> Vec<u8> {
        Vec::new()
    }
    let input = r#"{"bucket_type":"default","bucket":"b","key":"abc"}"#;
    for f in [too_long as fn(_) -> _, empty] {
        let (st, out) = testing::run_keyfun(f, input);
        assert_eq!(st, 2);
        assert!(String::from_utf8(out).unwrap().contains("want 1 to 20"));
    }
}

#[test]
fn linkfun_filters() {
    let input = r#"{"object":{"bucket_type":"default","bucket":"b","key":"k","vclock":"",
        "values":[{"metadata":{"Links":[["a","1","x"],["b","2","y"]]},"data":""}]},"spec":{"bucket":"_","tag":"y"}}"#;
    assert_eq!(
        testing::run_linkfun(links, input),
        (0, r#"[["b","2","y"]]"#.to_string())
    );
}

#[test]
fn map_found_and_not_found() {
    let found = r#"{"object":{"bucket_type":"default","bucket":"b","key":"k1","vclock":"","values":[]},"keydata":null,"arg":null}"#;
    let missing = r#"{"not_found":{"bucket_type":"default","bucket":"b","key":"k2"},"keydata":null,"arg":null}"#;
    assert_eq!(testing::run_map(keys, found), (0, r#"["k1"]"#.to_string()));
    assert_eq!(testing::run_map(keys, missing), (0, "[null]".to_string()));
}

#[test]
fn reduce_is_re_reducible() {
    let (_, first) = testing::run_reduce(count, r#"{"values":["a","b","c"],"arg":null}"#);
    assert_eq!(first, "[3]");
    let again = format!(r#"{{"values":{},"arg":null}}"#, r#"[3,"d"]"#);
    assert_eq!(testing::run_reduce(count, &again), (0, "[4]".to_string()));
    let closure = |i: ReduceInput| vec![Json::from(i.values.len() as u64 * 10)];
    assert_eq!(
        testing::run_reduce(closure, r#"{"values":[1,2]}"#),
        (0, "[20]".to_string())
    );
}
