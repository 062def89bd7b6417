/*
 * Native tests of the C SDK (cairn.c): JSON reader and writer, base64, the object
 * helpers and the test stand-in. Run with `make -C sdk/c test`.
 */
#include "cairn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                            \
    do {                                                            \
        if (!(cond)) {                                              \
            failures++;                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                           \
            fputc('\n', stderr);                                    \
        }                                                           \
    } while (0)

static cairn_json parse(const char *s) { return cairn_json_parse(s, strlen(s)); }

/* Returns the raw text of v as a NUL-terminated string (static buffer). */
static const char *text(cairn_json v) {
    static char buf[512];
    size_t n = v.ptr ? (v.len < sizeof buf - 1 ? v.len : sizeof buf - 1) : 0;
    if (!v.ptr) {
        return "<none>";
    }
    memcpy(buf, v.ptr, n);
    buf[n] = '\0';
    return buf;
}

static void test_parse(void) {
    static const struct {
        const char *in;
        int valid;
        cairn_json_type type;
    } cases[] = {
        {"null", 1, CAIRN_JSON_NULL},
        {" true ", 1, CAIRN_JSON_TRUE},
        {"false", 1, CAIRN_JSON_FALSE},
        {"0", 1, CAIRN_JSON_NUMBER},
        {"-12.5e+3", 1, CAIRN_JSON_NUMBER},
        {"\"a\\u00e9\\ud83d\\ude00\\n\"", 1, CAIRN_JSON_STRING},
        {"\"\xc3\xa9\"", 1, CAIRN_JSON_STRING},
        {"[]", 1, CAIRN_JSON_ARRAY},
        {"[ 1 , [2, {}], \"x\" ]", 1, CAIRN_JSON_ARRAY},
        {"{}", 1, CAIRN_JSON_OBJECT},
        {"{\"a\":{\"b\":[1,{\"c\":null}]},\"d\":\"e\"}", 1, CAIRN_JSON_OBJECT},
        {"", 0, CAIRN_JSON_NONE},
        {"   ", 0, CAIRN_JSON_NONE},
        {"nul", 0, CAIRN_JSON_NONE},
        {"01", 0, CAIRN_JSON_NONE},
        {"1.", 0, CAIRN_JSON_NONE},
        {"-", 0, CAIRN_JSON_NONE},
        {"1e", 0, CAIRN_JSON_NONE},
        {"+1", 0, CAIRN_JSON_NONE},
        {"[1,]", 0, CAIRN_JSON_NONE},
        {"[1 2]", 0, CAIRN_JSON_NONE},
        {"{\"a\" 1}", 0, CAIRN_JSON_NONE},
        {"{\"a\":1,}", 0, CAIRN_JSON_NONE},
        {"{a:1}", 0, CAIRN_JSON_NONE},
        {"[}", 0, CAIRN_JSON_NONE},
        {"{]", 0, CAIRN_JSON_NONE},
        {"[[]", 0, CAIRN_JSON_NONE},
        {"[]]", 0, CAIRN_JSON_NONE},
        {"1 2", 0, CAIRN_JSON_NONE},
        {"\"abc", 0, CAIRN_JSON_NONE},
        {"\"a\\x\"", 0, CAIRN_JSON_NONE},
        {"\"\\u12g4\"", 0, CAIRN_JSON_NONE},
        {"\"tab\there\"", 0, CAIRN_JSON_NONE},
        {"\"\xff\"", 0, CAIRN_JSON_NONE},
        {"\"\xc0\xaf\"", 0, CAIRN_JSON_NONE},     /* overlong */
        {"\"\xed\xa0\x80\"", 0, CAIRN_JSON_NONE}, /* encoded surrogate */
        {"\"\xe2\x82\"", 0, CAIRN_JSON_NONE},     /* truncated sequence */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cairn_json v = parse(cases[i].in);
        CHECK(cairn_json_ok(v) == cases[i].valid, "%s", cases[i].in);
        CHECK(cairn_json_typeof(v) == cases[i].type, "%s: type %d", cases[i].in, cairn_json_typeof(v));
    }
    /* Surrounding whitespace is not part of the value. */
    CHECK(strcmp(text(parse("  [1] \n")), "[1]") == 0, "%s", text(parse("  [1] \n")));
}

static void test_depth_limit(void) {
    size_t n = CAIRN_JSON_MAX_DEPTH + 1, i;
    char *deep = malloc(2 * n + 1);
    for (i = 0; i < n; i++) {
        deep[i] = '[';
        deep[2 * n - 1 - i] = ']';
    }
    deep[2 * n] = '\0';
    CHECK(!cairn_json_ok(parse(deep)), "depth %zu accepted", n);
    CHECK(cairn_json_ok(cairn_json_parse(deep + 1, 2 * n - 2)), "depth %zu refused", n - 1);
    free(deep);
}

static void test_navigation(void) {
    cairn_json doc = parse("{\"op\":\"put\",\"object\":{\"bucket\":\"b\\u0031\",\"values\":["
                           "{\"metadata\":{\"n\":-42,\"f\":2.5,\"big\":99999999999999999999},\"data\":\"x\"},"
                           "{\"data\":\"y\"}]},\"dup\":1,\"dup\":2,\"a.b\":true}");
    cairn_json_iter it;
    cairn_json k, v;
    int64_t n;
    double d;
    size_t count = 0;
    CHECK(cairn_json_string_eq(cairn_json_get(doc, "op"), "put"), "op");
    CHECK(cairn_json_string_eq(cairn_json_path(doc, "object.bucket"), "b1"), "escaped bucket");
    CHECK(cairn_json_count(cairn_json_path(doc, "object.values")) == 2, "count");
    CHECK(cairn_json_string_eq(cairn_json_path(doc, "object.values.1.data"), "y"), "path index");
    CHECK(!cairn_json_ok(cairn_json_path(doc, "object.values.2")), "past the end");
    CHECK(!cairn_json_ok(cairn_json_path(doc, "object.values.x")), "non-numeric index");
    CHECK(!cairn_json_ok(cairn_json_path(doc, "missing.deeper")), "missing chain");
    CHECK(strcmp(text(cairn_json_get(doc, "dup")), "1") == 0, "first duplicate wins");
    CHECK(cairn_json_typeof(cairn_json_get(doc, "a.b")) == CAIRN_JSON_TRUE, "dotted name via get");
    CHECK(cairn_json_int(cairn_json_path(doc, "object.values.0.metadata.n"), &n) && n == -42, "int");
    CHECK(!cairn_json_int(cairn_json_path(doc, "object.values.0.metadata.f"), &n), "fraction is not int");
    CHECK(!cairn_json_int(cairn_json_path(doc, "object.values.0.metadata.big"), &n), "overflow");
    CHECK(cairn_json_double(cairn_json_path(doc, "object.values.0.metadata.f"), &d) && d == 2.5, "double");
    CHECK(cairn_json_int(parse("-9223372036854775808"), &n) && n == INT64_MIN, "int64 min");
    CHECK(cairn_json_int(parse("9223372036854775807"), &n) && n == INT64_MAX, "int64 max");
    CHECK(!cairn_json_int(parse("9223372036854775808"), &n), "int64 max + 1");
    CHECK(!cairn_json_int(parse("\"1\""), &n), "string is not int");
    CHECK(cairn_json_count(parse("3")) == 0, "scalar count");
    CHECK(!cairn_json_ok(cairn_json_get(parse("[1]"), "a")), "get on array");
    CHECK(!cairn_json_ok(cairn_json_at(parse("{}"), 0)), "at on object");

    it = cairn_json_iterate(doc);
    while (cairn_json_next(&it, &k, &v)) {
        count++;
    }
    CHECK(count == 5, "members %zu", count);
    it = cairn_json_iterate(parse("[1, \"a,]\" ,[2,3] , {\"x\":\"}\"}]"));
    count = 0;
    while (cairn_json_next(&it, &k, &v)) {
        static const char *want[] = {"1", "\"a,]\"", "[2,3]", "{\"x\":\"}\"}"};
        CHECK(count < 4 && strcmp(text(v), want[count]) == 0, "element %zu: %s", count, text(v));
        CHECK(!cairn_json_ok(k), "array elements have no key");
        count++;
    }
    CHECK(count == 4, "elements %zu", count);
}

static void test_strings(void) {
    static const struct {
        const char *json;
        const char *want;
        size_t len;
    } cases[] = {
        {"\"plain\"", "plain", 5},
        {"\"q\\\"b\\\\s\\/\"", "q\"b\\s/", 6},
        {"\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t", 5},
        {"\"\\u00e9\"", "\xc3\xa9", 2},
        {"\"\\u20ac\"", "\xe2\x82\xac", 3},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\ud83d!\"", "\xef\xbf\xbd!", 4}, /* unpaired surrogate */
        {"\"a\\u0000b\"", "a\0b", 3},
    };
    size_t i;
    char buf[16];
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cairn_json v = parse(cases[i].json);
        size_t n = cairn_json_string(v, buf, sizeof buf);
        CHECK(n == cases[i].len && memcmp(buf, cases[i].want, n) == 0 && buf[n] == '\0', "%s -> %zu", cases[i].json, n);
        CHECK(cairn_json_string(v, NULL, 0) == cases[i].len, "%s length only", cases[i].json);
    }
    /* Truncation: returns the full length, stores cap-1 bytes and a NUL. */
    CHECK(cairn_json_string(parse("\"abcdef\""), buf, 4) == 6 && strcmp(buf, "abc") == 0, "truncate: %s", buf);
    CHECK(cairn_json_string(parse("1"), buf, sizeof buf) == (size_t)-1 && buf[0] == '\0', "not a string");
    CHECK(cairn_json_string_eq(parse("\"\\u0041b\""), "Ab"), "eq after unescape");
    CHECK(!cairn_json_string_eq(parse("\"Ab\""), "A"), "prefix is not equal");
    CHECK(!cairn_json_string_eq(parse("\"A\""), "Ab"), "longer is not equal");
    CHECK(cairn_json_string_eq_ci(parse("\"TRUE\""), "true"), "eq_ci");
    CHECK(cairn_json_truthy(parse("true")) && cairn_json_truthy(parse("\"True\"")), "truthy");
    CHECK(!cairn_json_truthy(parse("false")) && !cairn_json_truthy(parse("\"no\"")) && !cairn_json_truthy(parse("1")), "falsy");
}

/* Strings longer than the 8-byte scanning step, with an escape, a multi-byte character,
 * or a bad byte at every offset, read with every buffer size. */
static void test_long_strings(void) {
    static const struct {
        const char *raw;     /* JSON text of the inserted piece */
        const char *decoded; /* what it decodes to */
        int valid;
    } pieces[] = {
        {"\\n", "\n", 1},
        {"\\\"", "\"", 1},
        {"\\u00e9", "\xc3\xa9", 1},
        {"\xe2\x82\xac", "\xe2\x82\xac", 1},
        {"\x01", NULL, 0},
        {"\xff", NULL, 0},
    };
    static const int tails[] = {0, 3, 20};
    size_t i, off, t;
    for (i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        for (off = 0; off <= 24; off++) {
          for (t = 0; t < sizeof tails / sizeof tails[0]; t++) {
            char json[128], want[128], got[128];
            size_t n, cap;
            cairn_json v;
            int k = snprintf(json, sizeof json, "\"%.*s%s%.*s\"", (int)off, "abcdefghijklmnopqrstuvwxyz",
                             pieces[i].raw, tails[t], "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
            v = cairn_json_parse(json, (size_t)k);
            CHECK(cairn_json_ok(v) == pieces[i].valid, "piece %zu at %zu: %s", i, off, json);
            if (!pieces[i].valid) {
                continue;
            }
            snprintf(want, sizeof want, "%.*s%s%.*s", (int)off, "abcdefghijklmnopqrstuvwxyz", pieces[i].decoded,
                     tails[t], "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
            n = cairn_json_string(v, got, sizeof got);
            CHECK(n == strlen(want) && strcmp(got, want) == 0, "piece %zu at %zu: %s", i, off, got);
            CHECK(cairn_json_string_eq(v, want), "eq, piece %zu at %zu", i, off);
            /* Every buffer size stores a prefix and a NUL, and nothing beyond. */
            for (cap = 1; cap <= n + 10; cap++) {
                char buf[128];
                size_t j, end = cap - 1 < n ? cap - 1 : n;
                memset(buf, '#', sizeof buf);
                CHECK(cairn_json_string(v, buf, cap) == n, "len, cap %zu", cap);
                CHECK(strncmp(buf, want, end) == 0 && buf[end] == '\0', "cap %zu: %s", cap, buf);
                for (j = end + 1; j < sizeof buf; j++) {
                    if (buf[j] != '#') {
                        CHECK(0, "cap %zu: byte %zu written past the NUL", cap, j);
                        break;
                    }
                }
            }
            /* Embedded in an object, the string is skipped correctly. */
            {
                char doc[256];
                int m = snprintf(doc, sizeof doc, "{\"a\":%s,\"b\":7}", json);
                int64_t b = 0;
                CHECK(cairn_json_int(cairn_json_get(cairn_json_parse(doc, (size_t)m), "b"), &b) && b == 7, "skip %s", doc);
            }
          }
        }
    }
}

static void test_writer(void) {
    cairn_jw w;
    char small[8];
    cairn_jw_init(&w, NULL, 0);
    cairn_jw_object(&w);
    cairn_jw_key(&w, "s");
    cairn_jw_string(&w, "q\"\\\n\t\x01 \xc3\xa9 \xff");
    cairn_jw_key(&w, "n");
    cairn_jw_int(&w, INT64_MIN);
    cairn_jw_key(&w, "a");
    cairn_jw_array(&w);
    cairn_jw_int(&w, 0);
    cairn_jw_double(&w, 0.1);
    cairn_jw_double(&w, 1e300 * 1e300);
    cairn_jw_bool(&w, 1);
    cairn_jw_bool(&w, 0);
    cairn_jw_null(&w);
    cairn_jw_array(&w);
    cairn_jw_array_end(&w);
    cairn_jw_object(&w);
    cairn_jw_object_end(&w);
    cairn_jw_value(&w, parse(" {\"k\": [1]} "));
    cairn_jw_base64(&w, "\x00\x01\x02\xfe\xff", 5);
    cairn_jw_base64(&w, "f", 1);
    cairn_jw_array_end(&w);
    cairn_jw_object_end(&w);
    CHECK(cairn_jw_ok(&w), "ok");
    {
        const char *want = "{\"s\":\"q\\\"\\\\\\n\\t\\u0001 \xc3\xa9 \\ufffd\",\"n\":-9223372036854775808,"
                           "\"a\":[0,0.1,null,true,false,null,[],{},{\"k\": [1]},\"AAEC/v8=\",\"Zg==\"]}";
        CHECK(w.len == strlen(want) && memcmp(w.buf, want, w.len) == 0, "got %.*s", (int)w.len, w.buf);
        /* What the writer wrote parses. */
        CHECK(cairn_json_ok(cairn_json_parse(w.buf, w.len)), "output parses");
    }
    CHECK(cairn_jw_output(&w) == CAIRN_OK, "output status");
    cairn_jw_free(&w);

    /* A fixed buffer that is too small fails, and output then reports an error. */
    cairn_jw_init(&w, small, sizeof small);
    cairn_jw_array(&w);
    cairn_jw_string(&w, "longer than eight");
    cairn_jw_array_end(&w);
    CHECK(!cairn_jw_ok(&w), "overflow detected");
    CHECK(cairn_jw_output(&w) == CAIRN_ERROR, "overflow output");
    CHECK(strcmp(cairn_test_output(NULL), "cairn: JSON output incomplete") == 0, "%s", cairn_test_output(NULL));

    /* Misuse: unbalanced or a key outside an object. */
    cairn_jw_init(&w, NULL, 0);
    cairn_jw_array(&w);
    CHECK(!cairn_jw_ok(&w), "unclosed array");
    cairn_jw_free(&w);
    cairn_jw_init(&w, NULL, 0);
    cairn_jw_key(&w, "k");
    CHECK(!cairn_jw_ok(&w), "key at top level");
    cairn_jw_free(&w);
    cairn_jw_init(&w, NULL, 0);
    cairn_jw_object(&w);
    cairn_jw_key(&w, "k");
    cairn_jw_object_end(&w);
    CHECK(!cairn_jw_ok(&w), "key without value");
    cairn_jw_free(&w);
}

static void test_base64(void) {
    static const struct {
        const char *in;
        const char *want;
        size_t len;
    } cases[] = {
        {"", "", 0},
        {"Zg==", "f", 1},
        {"Zm8=", "fo", 2},
        {"Zm9v", "foo", 3},
        {"Zm9vYmFy", "foobar", 6},
        {"Zg", "f", 1},
        {"AAEC/v8=", "\x00\x01\x02\xfe\xff", 5},
        {"Z", NULL, 0},
        {"Zm9v!A==", NULL, 0},
        {"Zg=a", NULL, 0},
        {"Zg===", NULL, 0},
        {"Zh==", NULL, 0},
        {"Zg=", NULL, 0},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char out[16];
        size_t n = cairn_base64_decode(cases[i].in, strlen(cases[i].in), out);
        if (cases[i].want == NULL) {
            CHECK(n == (size_t)-1, "%s: decoded %zu bytes", cases[i].in, n);
        } else {
            CHECK(n == cases[i].len && memcmp(out, cases[i].want, n) == 0, "%s: %zu", cases[i].in, n);
        }
    }
}

static void test_object_helpers(void) {
    static const struct {
        const char *value;
        size_t size;
        const char *data;
        int deleted;
        const char *vtag;
        const char *owner;
    } cases[] = {
        {"{\"metadata\":{\"X-Store-VTag\":\"v1\",\"X-Store-Meta\":{\"X-Store-Meta-Owner\":\"bob\"}},\"data\":\"h\\u00e9\"}",
         3, "h\xc3\xa9", 0, "v1", "bob"},
        {"{\"metadata\":{\"X-Riak-VTag\":\"v2\",\"X-Riak-Meta\":{\"X-Riak-Meta-owner\":\"al\"},\"X-Riak-Deleted\":\"true\"},\"data\":\"\"}",
         0, "", 1, "v2", "al"},
        {"{\"metadata\":{\"x-store-deleted\":true,\"X-Store-Meta\":{}},\"data_b64\":\"AAEC\\/w==\"}",
         4, "\x00\x01\x02\xff", 1, NULL, NULL},
        {"{\"metadata\":{}}", (size_t)-1, NULL, 0, NULL, NULL},
        {"{\"metadata\":{},\"data_b64\":\"!!\"}", (size_t)-1, NULL, 0, NULL, NULL},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cairn_json v = parse(cases[i].value);
        cairn_json md = cairn_json_get(v, "metadata");
        char buf[8];
        size_t n = cairn_value_size(v);
        CHECK(n == cases[i].size, "%zu: size %zu", i, n);
        if (cases[i].data) {
            CHECK(cairn_value_data(v, buf, sizeof buf) == n && memcmp(buf, cases[i].data, n) == 0, "%zu: data", i);
        }
        CHECK(cairn_value_is_deleted(v) == cases[i].deleted, "%zu: deleted", i);
        if (cases[i].vtag) {
            CHECK(cairn_json_string_eq(cairn_meta_get(md, "VTag"), cases[i].vtag), "%zu: vtag", i);
        } else {
            CHECK(!cairn_json_ok(cairn_meta_get(md, "VTag")), "%zu: no vtag", i);
        }
        if (cases[i].owner) {
            CHECK(cairn_json_string_eq(cairn_usermeta_get(md, "OWNER"), cases[i].owner), "%zu: owner", i);
        } else {
            CHECK(!cairn_json_ok(cairn_usermeta_get(md, "owner")), "%zu: no owner", i);
        }
    }
}

/* A hook used to test cairn_test_call: echoes "op", logs, rejects deletes. */
static CAIRN_EXPORT(echo_op) {
    cairn_json in = cairn_json_parse(input, (size_t)input_len);
    cairn_json op = cairn_json_get(in, "op");
    char buf[16];
    if (!cairn_json_ok(in)) {
        return cairn_fail("bad input");
    }
    if (input[input_len] != '\0') {
        return cairn_fail("input is not NUL-terminated");
    }
    cairn_log_str(CAIRN_LOG_INFO, "seen");
    cairn_log(CAIRN_LOG_WARN, "twice!", 5);
    if (cairn_json_string_eq(op, "delete")) {
        return cairn_reject("no deletes");
    }
    cairn_json_string(op, buf, sizeof buf);
    cairn_output_str(buf);
    return CAIRN_OK;
}

static void test_call(void) {
    size_t len;
    CHECK(cairn_test_call(echo_op, "{\"op\":\"put\"}") == CAIRN_OK, "put");
    CHECK(strcmp(cairn_test_output(&len), "put") == 0 && len == 3, "output %s", cairn_test_output(NULL));
    CHECK(strcmp(cairn_test_logs(), "info seen\nwarn twice\n") == 0, "logs %s", cairn_test_logs());
    CHECK(cairn_test_call(echo_op, "{\"op\":\"delete\"}") == CAIRN_REJECT, "delete");
    CHECK(strcmp(cairn_test_output(NULL), "no deletes") == 0, "reason");
    CHECK(cairn_test_call(echo_op, "{") == CAIRN_ERROR, "bad input");
    CHECK(strcmp(cairn_test_logs(), "") == 0, "logs reset: %s", cairn_test_logs());
    /* A bigger input makes cairn_alloc grow its buffer. */
    {
        size_t n = 100000, i;
        char *big = malloc(n + 32);
        strcpy(big, "{\"op\":\"put\",\"pad\":\"");
        for (i = strlen(big); i < n; i++) {
            big[i] = 'x';
        }
        strcpy(big + n, "\"}");
        CHECK(cairn_test_call(echo_op, big) == CAIRN_OK, "big input");
        free(big);
    }
}

int main(void) {
    test_parse();
    test_depth_limit();
    test_navigation();
    test_strings();
    test_long_strings();
    test_writer();
    test_base64();
    test_object_helpers();
    test_call();
    if (failures) {
        fprintf(stderr, "FAIL: %d checks failed\n", failures);
        return 1;
    }
    printf("ok: sdk/c\n");
    return 0;
}
