/*
 * audit-postcommit: a Cairn postcommit hook that writes one structured line per write
 * to the server log through cairn.log, e.g.
 *
 *   {"audit":"write","op":"put","bucket_type":"default","bucket":"users","key":"u1",
 *    "vtag":"4LdxAbc","size":16,"content_type":"application/json","deleted":false,
 *    "siblings":1}
 *
 * vtag, size, content_type and deleted describe the object's first value; siblings
 * counts its values (more than one after concurrent writes).
 */
#include "cairn.h"

/* Copies member `name` of obj into the writer as `key`, or null when it is missing. */
static void copy_member(cairn_jw *w, const char *key, cairn_json obj, const char *name) {
    cairn_json v = cairn_json_get(obj, name);
    cairn_jw_key(w, key);
    if (cairn_json_ok(v)) {
        cairn_jw_value(w, v);
    } else {
        cairn_jw_null(w);
    }
}

CAIRN_EXPORT(audit) {
    cairn_json in = cairn_json_parse(input, (size_t)input_len);
    cairn_json obj = cairn_json_get(in, "object");
    cairn_json values = cairn_json_get(obj, "values");
    cairn_json first = cairn_json_at(values, 0);
    cairn_json md = cairn_json_get(first, "metadata");
    cairn_json vtag = cairn_meta_get(md, "VTag");
    size_t size = cairn_value_size(first);
    char line[1024];
    cairn_jw w;

    if (cairn_json_typeof(obj) != CAIRN_JSON_OBJECT || cairn_json_typeof(values) != CAIRN_JSON_ARRAY) {
        return cairn_fail("audit: the input is not {\"op\":...,\"object\":{...}}");
    }
    cairn_jw_init(&w, line, sizeof line);
    cairn_jw_object(&w);
    cairn_jw_key(&w, "audit");
    cairn_jw_string(&w, "write");
    copy_member(&w, "op", in, "op");
    copy_member(&w, "bucket_type", obj, "bucket_type");
    copy_member(&w, "bucket", obj, "bucket");
    copy_member(&w, "key", obj, "key");
    cairn_jw_key(&w, "vtag");
    if (cairn_json_typeof(vtag) == CAIRN_JSON_STRING) {
        cairn_jw_value(&w, vtag);
    } else {
        cairn_jw_null(&w);
    }
    cairn_jw_key(&w, "size");
    if (size == (size_t)-1) {
        cairn_jw_null(&w);
    } else {
        cairn_jw_int(&w, (int64_t)size);
    }
    copy_member(&w, "content_type", md, "content-type");
    cairn_jw_key(&w, "deleted");
    cairn_jw_bool(&w, cairn_value_is_deleted(first));
    cairn_jw_key(&w, "siblings");
    cairn_jw_int(&w, (int64_t)cairn_json_count(values));
    cairn_jw_object_end(&w);
    if (!cairn_jw_ok(&w)) {
        /* Names longer than the line buffer: log what identifies the write. */
        cairn_log_str(CAIRN_LOG_WARN, "audit: write with names too long to log in full");
        return CAIRN_OK;
    }
    cairn_log(CAIRN_LOG_INFO, w.buf, w.len);
    return CAIRN_OK;
}
