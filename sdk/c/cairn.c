/*
 * cairn.c: the Cairn hook ABI v1 for C (C99). See cairn.h and README.md.
 *
 * On wasm32 this file provides the cairn_alloc and cairn_abi_v1 exports and wraps the
 * cairn.output and cairn.log imports. Natively (gcc/clang for the host) the same
 * functions record the output and log lines so hooks can be unit-tested.
 */
#include "cairn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAIRN_NPOS ((size_t)-1)

/* ---- exports and host calls -------------------------------------------------------- */

#if defined(__wasm__)
#define CAIRN_EXPORT_AS(name) __attribute__((export_name(name)))
#else
#define CAIRN_EXPORT_AS(name)
#endif

/* The input buffer: one instance serves one call at a time, so a single buffer reused
 * across calls is enough. One byte more than asked is allocated for a trailing NUL. */
static char *input_buf;
static size_t input_cap;

CAIRN_EXPORT_AS("cairn_alloc") void *cairn_alloc(uint32_t n) {
    size_t need = (size_t)n + 1;
    if (need == 0 || need > SIZE_MAX / 2) {
        __builtin_trap(); /* no memory that large */
    }
    if (need > input_cap) {
        size_t cap = input_cap ? input_cap : 256;
        while (cap < need) {
            cap *= 2;
        }
        free(input_buf);
        input_buf = malloc(cap);
        if (input_buf == NULL) {
            input_cap = 0;
            __builtin_trap(); /* the host reports the call as crashed */
        }
        input_cap = cap;
    }
    input_buf[n] = '\0';
    return input_buf;
}

CAIRN_EXPORT_AS("cairn_abi_v1") void cairn_abi_v1(void) {}

#if defined(__wasm__)

__attribute__((import_module("cairn"), import_name("output"))) void
cairn_host_output(const void *data, size_t len);
__attribute__((import_module("cairn"), import_name("log"))) void
cairn_host_log(int32_t level, const char *msg, size_t len);

void cairn_output(const void *data, size_t len) { cairn_host_output(data, len); }

void cairn_log(int32_t level, const char *msg, size_t len) { cairn_host_log(level, msg, len); }

#else /* native stand-in */

/* What the last call wrote: its output (last one wins) and its log lines. */
static char *test_out;
static size_t test_out_len;
static char *test_logs;
static size_t test_logs_len;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n);
    if (q == NULL) {
        fputs("cairn: out of memory\n", stderr);
        abort();
    }
    return q;
}

void cairn_output(const void *data, size_t len) {
    test_out = xrealloc(test_out, len + 1);
    if (len) {
        memcpy(test_out, data, len);
    }
    test_out[len] = '\0';
    test_out_len = len;
}

void cairn_log(int32_t level, const char *msg, size_t len) {
    const char *name = level <= CAIRN_LOG_DEBUG ? "debug"
                       : level == CAIRN_LOG_INFO ? "info"
                       : level == CAIRN_LOG_WARN ? "warn"
                                                 : "error";
    size_t nlen = strlen(name);
    test_logs = xrealloc(test_logs, test_logs_len + nlen + len + 3);
    memcpy(test_logs + test_logs_len, name, nlen);
    test_logs[test_logs_len + nlen] = ' ';
    if (len) {
        memcpy(test_logs + test_logs_len + nlen + 1, msg, len);
    }
    test_logs_len += nlen + 1 + len;
    test_logs[test_logs_len++] = '\n';
    test_logs[test_logs_len] = '\0';
}

int32_t cairn_test_call(cairn_hook_fn fn, const char *json) {
    size_t n = strlen(json);
    char *buf = cairn_alloc((uint32_t)n);
    free(test_out);
    test_out = NULL;
    test_out_len = 0;
    test_logs_len = 0;
    if (test_logs) {
        test_logs[0] = '\0';
    }
    memcpy(buf, json, n);
    return fn(buf, (int32_t)n);
}

const char *cairn_test_output(size_t *len) {
    if (len) {
        *len = test_out_len;
    }
    return test_out ? test_out : "";
}

const char *cairn_test_logs(void) { return test_logs ? test_logs : ""; }

#endif

void cairn_output_str(const char *s) { cairn_output(s, strlen(s)); }

void cairn_log_str(int32_t level, const char *msg) { cairn_log(level, msg, strlen(msg)); }

int32_t cairn_reject(const char *reason) {
    cairn_output_str(reason);
    return CAIRN_REJECT;
}

int32_t cairn_fail(const char *msg) {
    cairn_output_str(msg);
    return CAIRN_ERROR;
}

/* ---- JSON scanning ------------------------------------------------------------------- */

static const cairn_json none = {NULL, 0};

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Skips whitespace. The common case, none, enters no loop: a host that checks for a
 * deadline at every loop header pays for each loop entered. */
static const char *skip_ws(const char *p, const char *e) {
    if (p >= e || !is_ws(*p)) {
        return p;
    }
    do {
        p++;
    } while (p < e && is_ws(*p));
    return p;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when it is not valid
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *p, const unsigned char *e) {
    unsigned c = p[0];
    size_t n, i;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) {
            lo = 0xA0;
        } else if (c == 0xED) {
            hi = 0x9F;
        }
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) {
            lo = 0x90;
        } else if (c == 0xF4) {
            hi = 0x8F;
        }
    } else {
        return 0;
    }
    if ((size_t)(e - p) < n || p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (i = 2; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) {
            return 0;
        }
    }
    return n;
}

static int hex_val(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Reads 4 hex digits at p (p+4 <= e); -1 when they are not hex. */
static long hex4(const char *p, const char *e) {
    long v = 0;
    int i;
    if (e - p < 4) {
        return -1;
    }
    for (i = 0; i < 4; i++) {
        int h = hex_val(p[i]);
        if (h < 0) {
            return -1;
        }
        v = v * 16 + h;
    }
    return v;
}

static int little_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Counts how many of the 8 bytes at p, from the first, are plain: not '"' or '\\' and,
 * with strict set, not below 0x20 or above 0x7F. Returns 8 when all are.
 *
 * Strings are scanned 8 bytes per loop iteration with this: a host that checks for a
 * deadline at every loop iteration (as the server does) makes byte-by-byte loops
 * several times slower. */
static size_t plain8(const char *p, int strict) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t x, q, b, hit;
    memcpy(&x, p, 8);
    q = x ^ (ones * '"');
    b = x ^ (ones * '\\');
    hit = ((q - ones) & ~q) | ((b - ones) & ~b);
    if (strict) {
        hit |= ((x - ones * 0x20) & ~x) | x;
    }
    hit &= highs;
    if (!hit) {
        return 8;
    }
    /* Borrows only carry upwards, so the lowest flagged byte is a real match when the
     * load is little-endian (as on wasm and x86); otherwise look byte by byte. */
    return little_endian() ? (size_t)(__builtin_ctzll(hit) >> 3) : 0;
}

/* Returns the first position in [p, e) that holds '"' or '\\'; e when there is none. */
static const char *scan_plain(const char *p, const char *e) {
    while (p < e) {
        if (e - p >= 8) {
            size_t k = plain8(p, 0);
            p += k;
            if (k == 8) {
                continue;
            }
        }
        if (*p == '"' || *p == '\\') {
            return p;
        }
        p++;
    }
    return e;
}

/* Scans a string starting at the '"' at p. With check set, rejects control characters,
 * bad escapes and invalid UTF-8. Returns the position after the closing quote, or NULL. */
static const char *scan_string(const char *p, const char *e, int check) {
    p++;
    for (;;) {
        unsigned char c;
        if (e - p >= 8) {
            size_t k = plain8(p, check);
            p += k;
            if (k == 8) {
                continue;
            }
        }
        if (p >= e) {
            return NULL;
        }
        c = (unsigned char)*p;
        if (c == '"') {
            return p + 1;
        }
        if (c == '\\') {
            if (e - p < 2) {
                return NULL;
            }
            if (check) {
                switch (p[1]) {
                case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                    break;
                case 'u':
                    if (hex4(p + 2, e) < 0) {
                        return NULL;
                    }
                    p += 4;
                    break;
                default:
                    return NULL;
                }
            }
            p += 2;
            continue;
        }
        if (check && (c < 0x20 || c > 0x7F)) {
            size_t n;
            if (c < 0x20) {
                return NULL;
            }
            n = utf8_len((const unsigned char *)p, (const unsigned char *)e);
            if (n == 0) {
                return NULL;
            }
            p += n;
            continue;
        }
        p++;
    }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Scans a number (RFC 8259 grammar) at p; returns its end or NULL. */
static const char *scan_number(const char *p, const char *e) {
    if (p < e && *p == '-') {
        p++;
    }
    if (p >= e || !is_digit(*p)) {
        return NULL;
    }
    if (*p == '0') {
        p++;
    } else {
        while (p < e && is_digit(*p)) {
            p++;
        }
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || !is_digit(*p)) {
            return NULL;
        }
        while (p < e && is_digit(*p)) {
            p++;
        }
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) {
            p++;
        }
        if (p >= e || !is_digit(*p)) {
            return NULL;
        }
        while (p < e && is_digit(*p)) {
            p++;
        }
    }
    return p;
}

static const char *scan_literal(const char *p, const char *e, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(e - p) < n || memcmp(p, lit, n) != 0) {
        return NULL;
    }
    return p + n;
}

/* Scans one scalar (string, number, literal) at p; NULL when invalid. */
static const char *scan_scalar(const char *p, const char *e, int check) {
    switch (*p) {
    case '"':
        return scan_string(p, e, check);
    case 't':
        return scan_literal(p, e, "true");
    case 'f':
        return scan_literal(p, e, "false");
    case 'n':
        return scan_literal(p, e, "null");
    default:
        return scan_number(p, e);
    }
}

/* Returns the end of the (already validated) value at p, without recursion. */
static const char *skip_value(const char *p, const char *e) {
    size_t depth = 0;
    if (p >= e) {
        return NULL;
    }
    if (*p != '{' && *p != '[') {
        return scan_scalar(p, e, 0);
    }
    while (p < e) {
        char c = *p;
        if (c == '"') {
            p = scan_string(p, e, 0);
            if (p == NULL) {
                return NULL;
            }
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                return p + 1;
            }
        }
        p++;
    }
    return NULL;
}

cairn_json cairn_json_parse(const char *text, size_t len) {
    /* An explicit stack of open containers ('{' or '['), so hostile nesting cannot
     * overflow the call stack. */
    char stack[CAIRN_JSON_MAX_DEPTH];
    size_t depth = 0;
    const char *e = text + len;
    const char *p, *start;
    if (text == NULL) {
        return none;
    }
    p = skip_ws(text, e);
    start = p;
    for (;;) {
        /* a value is expected at p */
        if (p >= e) {
            return none;
        }
        if (*p == '{' || *p == '[') {
            if (depth == CAIRN_JSON_MAX_DEPTH) {
                return none;
            }
            stack[depth++] = *p;
            p = skip_ws(p + 1, e);
            if (p < e && (*p == '}' || *p == ']') && *p == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                p++;
            } else if (stack[depth - 1] == '{') {
                goto member;
            } else {
                continue;
            }
        } else {
            p = scan_scalar(p, e, 1);
            if (p == NULL) {
                return none;
            }
        }
        /* after a value: a separator, a closing bracket, or the end */
        for (;;) {
            p = skip_ws(p, e);
            if (depth == 0) {
                if (p != e) {
                    return none;
                }
                {
                    cairn_json v;
                    const char *end = e;
                    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
                                           end[-1] == '\r')) {
                        end--;
                    }
                    v.ptr = start;
                    v.len = (size_t)(end - start);
                    return v;
                }
            }
            if (p >= e) {
                return none;
            }
            if (*p == ',') {
                p = skip_ws(p + 1, e);
                if (stack[depth - 1] == '{') {
                    goto member;
                }
                break; /* next array element */
            }
            if (*p == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                p++;
                continue;
            }
            return none;
        }
        continue;
    member:
        /* an object member is expected at p: "name" : value */
        if (p >= e || *p != '"') {
            return none;
        }
        p = scan_string(p, e, 1);
        if (p == NULL) {
            return none;
        }
        p = skip_ws(p, e);
        if (p >= e || *p != ':') {
            return none;
        }
        p = skip_ws(p + 1, e);
    }
}

cairn_json_type cairn_json_typeof(cairn_json v) {
    if (v.ptr == NULL || v.len == 0) {
        return CAIRN_JSON_NONE;
    }
    switch (v.ptr[0]) {
    case '{':
        return CAIRN_JSON_OBJECT;
    case '[':
        return CAIRN_JSON_ARRAY;
    case '"':
        return CAIRN_JSON_STRING;
    case 't':
        return CAIRN_JSON_TRUE;
    case 'f':
        return CAIRN_JSON_FALSE;
    case 'n':
        return CAIRN_JSON_NULL;
    default:
        return CAIRN_JSON_NUMBER;
    }
}

int cairn_json_ok(cairn_json v) { return cairn_json_typeof(v) != CAIRN_JSON_NONE; }

cairn_json_iter cairn_json_iterate(cairn_json v) {
    cairn_json_iter it = {NULL, NULL, 0};
    cairn_json_type t = cairn_json_typeof(v);
    if ((t == CAIRN_JSON_ARRAY || t == CAIRN_JSON_OBJECT) && v.len >= 2) {
        it.pos = v.ptr + 1;
        it.end = v.ptr + v.len - 1;
        it.object = t == CAIRN_JSON_OBJECT;
    }
    return it;
}

int cairn_json_next(cairn_json_iter *it, cairn_json *key, cairn_json *val) {
    const char *p, *q;
    cairn_json k = none, v = none;
    if (it->pos == NULL) {
        return 0;
    }
    p = skip_ws(it->pos, it->end);
    if (p < it->end && *p == ',') {
        p = skip_ws(p + 1, it->end);
    }
    if (p >= it->end) {
        it->pos = NULL;
        return 0;
    }
    if (it->object) {
        q = *p == '"' ? scan_string(p, it->end, 0) : NULL;
        if (q == NULL) {
            it->pos = NULL;
            return 0;
        }
        k.ptr = p;
        k.len = (size_t)(q - p);
        p = skip_ws(q, it->end);
        if (p >= it->end || *p != ':') {
            it->pos = NULL;
            return 0;
        }
        p = skip_ws(p + 1, it->end);
    }
    q = skip_value(p, it->end);
    if (q == NULL) {
        it->pos = NULL;
        return 0;
    }
    v.ptr = p;
    v.len = (size_t)(q - p);
    it->pos = q;
    if (key) {
        *key = k;
    }
    if (val) {
        *val = v;
    }
    return 1;
}

size_t cairn_json_count(cairn_json v) {
    cairn_json_iter it = cairn_json_iterate(v);
    size_t n = 0;
    while (cairn_json_next(&it, NULL, NULL)) {
        n++;
    }
    return n;
}

/* Decodes one unit of string content at p (a byte of a UTF-8 sequence copied as is, or
 * an escape) into out; returns the position after it. *n gets the number of bytes. */
static const char *decode_unit(const char *p, const char *e, unsigned char out[4], size_t *n) {
    long cp;
    if (*p != '\\') {
        out[0] = (unsigned char)*p;
        *n = 1;
        return p + 1;
    }
    if (e - p < 2) {
        *n = 0;
        return e;
    }
    switch (p[1]) {
    case 'b': out[0] = '\b'; break;
    case 'f': out[0] = '\f'; break;
    case 'n': out[0] = '\n'; break;
    case 'r': out[0] = '\r'; break;
    case 't': out[0] = '\t'; break;
    case 'u':
        cp = hex4(p + 2, e);
        p += 6;
        if (cp < 0) {
            *n = 0;
            return e;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            long lo = hex4(p + 2, e);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD; /* an unpaired surrogate */
        }
        if (cp < 0x80) {
            out[0] = (unsigned char)cp;
            *n = 1;
        } else if (cp < 0x800) {
            out[0] = (unsigned char)(0xC0 | (cp >> 6));
            out[1] = (unsigned char)(0x80 | (cp & 0x3F));
            *n = 2;
        } else if (cp < 0x10000) {
            out[0] = (unsigned char)(0xE0 | (cp >> 12));
            out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            out[2] = (unsigned char)(0x80 | (cp & 0x3F));
            *n = 3;
        } else {
            out[0] = (unsigned char)(0xF0 | (cp >> 18));
            out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
            out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            out[3] = (unsigned char)(0x80 | (cp & 0x3F));
            *n = 4;
        }
        return p;
    default: out[0] = (unsigned char)p[1]; break; /* \" \\ \/ */
    }
    *n = 1;
    return p + 2;
}

/* Unescapes string v into dst, storing at most cap bytes, and returns the full length;
 * CAIRN_NPOS when v is not a string. */
static size_t unescape(cairn_json v, char *dst, size_t cap) {
    const char *p, *e;
    size_t total = 0;
    if (cairn_json_typeof(v) != CAIRN_JSON_STRING || v.len < 2) {
        return CAIRN_NPOS;
    }
    p = v.ptr + 1;
    e = v.ptr + v.len - 1;
    while (p < e) {
        unsigned char buf[4];
        size_t n, i;
        if (e - p >= 8 && (n = plain8(p, 0)) > 0) {
            /* n plain bytes (a valid string has no raw '"' inside) */
            if (n == 8 && total + 8 <= cap) {
                memcpy(dst + total, p, 8); /* a fixed-size copy: no loop */
            } else {
                for (i = 0; i < n && total + i < cap; i++) {
                    dst[total + i] = p[i];
                }
            }
            total += n;
            p += n;
            continue;
        }
        if (*p != '\\') {
            if (total < cap) {
                dst[total] = *p;
            }
            total++;
            p++;
            continue;
        }
        p = decode_unit(p, e, buf, &n);
        for (i = 0; i < n; i++, total++) {
            if (total < cap) {
                dst[total] = (char)buf[i];
            }
        }
    }
    return total;
}

size_t cairn_json_string(cairn_json v, char *dst, size_t cap) {
    size_t n = unescape(v, dst, cap ? cap - 1 : 0);
    if (cap) {
        if (n == CAIRN_NPOS) {
            dst[0] = '\0';
        } else {
            dst[n < cap - 1 ? n : cap - 1] = '\0';
        }
    }
    return n;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Compares string v with s[0..n) after unescaping, optionally ignoring ASCII case. */
static int string_eq_n(cairn_json v, const char *s, size_t n, int ci) {
    const char *p, *e;
    size_t at = 0;
    if (cairn_json_typeof(v) != CAIRN_JSON_STRING || v.len < 2) {
        return 0;
    }
    p = v.ptr + 1;
    e = v.ptr + v.len - 1;
    if (scan_plain(p, e) == e) { /* no escapes */
        size_t i;
        if ((size_t)(e - p) != n) {
            return 0;
        }
        if (!ci) {
            return memcmp(p, s, n) == 0;
        }
        for (i = 0; i < n; i++) {
            if (lower((unsigned char)p[i]) != lower((unsigned char)s[i])) {
                return 0;
            }
        }
        return 1;
    }
    while (p < e) {
        unsigned char buf[4];
        size_t k, i;
        p = decode_unit(p, e, buf, &k);
        for (i = 0; i < k; i++, at++) {
            if (at >= n) {
                return 0;
            }
            if (ci ? lower(buf[i]) != lower((unsigned char)s[at]) : buf[i] != (unsigned char)s[at]) {
                return 0;
            }
        }
    }
    return at == n;
}

int cairn_json_string_eq(cairn_json v, const char *s) { return string_eq_n(v, s, strlen(s), 0); }

int cairn_json_string_eq_ci(cairn_json v, const char *s) { return string_eq_n(v, s, strlen(s), 1); }

static cairn_json get_n(cairn_json v, const char *key, size_t n) {
    cairn_json k, val;
    cairn_json_iter it;
    if (cairn_json_typeof(v) != CAIRN_JSON_OBJECT) {
        return none;
    }
    it = cairn_json_iterate(v);
    while (cairn_json_next(&it, &k, &val)) {
        if (string_eq_n(k, key, n, 0)) {
            return val;
        }
    }
    return none;
}

cairn_json cairn_json_get(cairn_json v, const char *key) { return get_n(v, key, strlen(key)); }

cairn_json cairn_json_at(cairn_json v, size_t i) {
    cairn_json val;
    cairn_json_iter it;
    if (cairn_json_typeof(v) != CAIRN_JSON_ARRAY) {
        return none;
    }
    it = cairn_json_iterate(v);
    while (cairn_json_next(&it, NULL, &val)) {
        if (i-- == 0) {
            return val;
        }
    }
    return none;
}

cairn_json cairn_json_path(cairn_json v, const char *path) {
    const char *p = path;
    while (*p && cairn_json_ok(v)) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (cairn_json_typeof(v) == CAIRN_JSON_ARRAY) {
            size_t i = 0, j;
            if (n == 0) {
                return none;
            }
            for (j = 0; j < n; j++) {
                if (!is_digit(p[j])) {
                    return none;
                }
                i = i * 10 + (size_t)(p[j] - '0');
            }
            v = cairn_json_at(v, i);
        } else {
            v = get_n(v, p, n);
        }
        p += n;
        if (*p == '.') {
            p++;
        }
    }
    return v;
}

int cairn_json_int(cairn_json v, int64_t *out) {
    const char *p, *e;
    int neg = 0;
    uint64_t acc = 0;
    uint64_t limit;
    if (cairn_json_typeof(v) != CAIRN_JSON_NUMBER) {
        return 0;
    }
    p = v.ptr;
    e = v.ptr + v.len;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < e; p++) {
        unsigned d;
        if (!is_digit(*p)) {
            return 0; /* a fraction or an exponent */
        }
        d = (unsigned)(*p - '0');
        if (acc > (limit - d) / 10) {
            return 0;
        }
        acc = acc * 10 + d;
    }
    if (out) {
        *out = neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
    }
    return 1;
}

int cairn_json_double(cairn_json v, double *out) {
    char small[64];
    char *buf = small;
    double d;
    if (cairn_json_typeof(v) != CAIRN_JSON_NUMBER) {
        return 0;
    }
    if (v.len >= sizeof small) {
        buf = malloc(v.len + 1);
        if (buf == NULL) {
            return 0;
        }
    }
    memcpy(buf, v.ptr, v.len);
    buf[v.len] = '\0';
    d = strtod(buf, NULL);
    if (buf != small) {
        free(buf);
    }
    if (out) {
        *out = d;
    }
    return 1;
}

int cairn_json_truthy(cairn_json v) {
    return cairn_json_typeof(v) == CAIRN_JSON_TRUE || cairn_json_string_eq_ci(v, "true");
}

/* ---- JSON writer --------------------------------------------------------------------- */

void cairn_jw_init(cairn_jw *w, char *buf, size_t cap) {
    memset(w, 0, sizeof *w);
    w->buf = buf;
    w->cap = buf ? cap : 0;
    w->heap = buf == NULL;
}

void cairn_jw_free(cairn_jw *w) {
    if (w->heap) {
        free(w->buf);
    }
    w->buf = NULL;
    w->len = w->cap = 0;
}

static void put(cairn_jw *w, const char *s, size_t n) {
    if (w->failed) {
        return;
    }
    if (n > w->cap - w->len) {
        size_t cap = w->cap ? w->cap : 256;
        char *nb;
        if (!w->heap || n > SIZE_MAX / 4 - w->len) {
            w->failed = 1;
            return;
        }
        while (cap - w->len < n) {
            cap *= 2;
        }
        nb = realloc(w->buf, cap);
        if (nb == NULL) {
            w->failed = 1;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void put_c(cairn_jw *w, char c) { put(w, &c, 1); }

/* Adds the comma that separates this value from the previous one, if needed. */
static void sep(cairn_jw *w) {
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (!w->first[w->depth]) {
            put_c(w, ',');
        }
        w->first[w->depth] = 0;
    }
}

static void open_c(cairn_jw *w, char c) {
    sep(w);
    if (w->depth == CAIRN_JW_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    put_c(w, c);
    w->depth++;
    w->first[w->depth] = 1;
}

static void close_c(cairn_jw *w, char c) {
    if (w->depth == 0 || w->after_key) {
        w->failed = 1;
        return;
    }
    put_c(w, c);
    w->depth--;
}

void cairn_jw_object(cairn_jw *w) { open_c(w, '{'); }
void cairn_jw_object_end(cairn_jw *w) { close_c(w, '}'); }
void cairn_jw_array(cairn_jw *w) { open_c(w, '['); }
void cairn_jw_array_end(cairn_jw *w) { close_c(w, ']'); }

/* Writes s[0..n) as a JSON string; invalid UTF-8 becomes U+FFFD. */
static void put_string(cairn_jw *w, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    put_c(w, '"');
    while (p < e) {
        const unsigned char *run = p;
        size_t k;
        while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
            p++;
        }
        put(w, (const char *)run, (size_t)(p - run));
        if (p >= e) {
            break;
        }
        if (*p >= 0x80) {
            k = utf8_len(p, e);
            if (k == 0) {
                put(w, "\\ufffd", 6);
                p++;
            } else {
                put(w, (const char *)p, k);
                p += k;
            }
            continue;
        }
        switch (*p) {
        case '"': put(w, "\\\"", 2); break;
        case '\\': put(w, "\\\\", 2); break;
        case '\n': put(w, "\\n", 2); break;
        case '\r': put(w, "\\r", 2); break;
        case '\t': put(w, "\\t", 2); break;
        case '\b': put(w, "\\b", 2); break;
        case '\f': put(w, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', 0, 0};
            u[4] = hex[*p >> 4];
            u[5] = hex[*p & 15];
            put(w, u, 6);
        }
        }
        p++;
    }
    put_c(w, '"');
}

void cairn_jw_keyn(cairn_jw *w, const char *key, size_t n) {
    if (w->depth == 0 || w->after_key) {
        w->failed = 1;
        return;
    }
    sep(w);
    put_string(w, key, n);
    put_c(w, ':');
    w->after_key = 1;
}

void cairn_jw_key(cairn_jw *w, const char *key) { cairn_jw_keyn(w, key, strlen(key)); }

void cairn_jw_stringn(cairn_jw *w, const char *s, size_t n) {
    sep(w);
    put_string(w, s, n);
}

void cairn_jw_string(cairn_jw *w, const char *s) { cairn_jw_stringn(w, s, strlen(s)); }

void cairn_jw_int(cairn_jw *w, int64_t v) {
    char buf[24];
    char *p = buf + sizeof buf;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) {
        *--p = '-';
    }
    sep(w);
    put(w, p, (size_t)(buf + sizeof buf - p));
}

void cairn_jw_double(cairn_jw *w, double v) {
    char buf[32];
    int n;
    if (!isfinite(v)) {
        cairn_jw_null(w);
        return;
    }
    /* The shortest of %.15g and %.17g that reads back as the same double. */
    n = snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v) {
        n = snprintf(buf, sizeof buf, "%.17g", v);
    }
    sep(w);
    put(w, buf, (size_t)n);
}

void cairn_jw_bool(cairn_jw *w, int v) {
    sep(w);
    if (v) {
        put(w, "true", 4);
    } else {
        put(w, "false", 5);
    }
}

void cairn_jw_null(cairn_jw *w) {
    sep(w);
    put(w, "null", 4);
}

void cairn_jw_value(cairn_jw *w, cairn_json v) {
    if (!cairn_json_ok(v)) {
        w->failed = 1;
        return;
    }
    sep(w);
    put(w, v.ptr, v.len);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void cairn_jw_base64(cairn_jw *w, const void *data, size_t n) {
    const unsigned char *p = data;
    size_t i;
    sep(w);
    put_c(w, '"');
    for (i = 0; i < n; i += 3) {
        char q[4];
        unsigned long b = (unsigned long)p[i] << 16;
        if (i + 1 < n) {
            b |= (unsigned long)p[i + 1] << 8;
        }
        if (i + 2 < n) {
            b |= p[i + 2];
        }
        q[0] = b64[(b >> 18) & 63];
        q[1] = b64[(b >> 12) & 63];
        q[2] = i + 1 < n ? b64[(b >> 6) & 63] : '=';
        q[3] = i + 2 < n ? b64[b & 63] : '=';
        put(w, q, 4);
    }
    put_c(w, '"');
}

int cairn_jw_ok(const cairn_jw *w) { return !w->failed && w->depth == 0 && !w->after_key; }

int32_t cairn_jw_output(cairn_jw *w) {
    if (!cairn_jw_ok(w)) {
        return cairn_fail("cairn: JSON output incomplete");
    }
    cairn_output(w->buf, w->len);
    return CAIRN_OK;
}

/* ---- base64 ------------------------------------------------------------------------ */

static int b64_val(char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

size_t cairn_base64_decoded_max(size_t n) { return n / 4 * 3 + 3; }

size_t cairn_base64_decode(const char *src, size_t n, unsigned char *dst) {
    size_t body = n, i, out = 0;
    const char *eq = memchr(src, '=', n);
    if (eq) {
        size_t pad = n - (size_t)(eq - src);
        body = (size_t)(eq - src);
        if (pad > 2 || n % 4 != 0 || (pad == 2 && src[n - 1] != '=')) {
            return CAIRN_NPOS;
        }
    }
    if (body % 4 == 1) {
        return CAIRN_NPOS;
    }
    for (i = 0; i < body; i += 4) {
        size_t k = body - i < 4 ? body - i : 4, j;
        unsigned long b = 0;
        for (j = 0; j < k; j++) {
            int v = b64_val(src[i + j]);
            if (v < 0) {
                return CAIRN_NPOS;
            }
            b |= (unsigned long)v << (18 - 6 * j);
        }
        /* the bits of a partial group beyond the kept bytes must be zero */
        if (k < 4 && (b & ((1UL << (8 * (4 - k))) - 1)) != 0) {
            return CAIRN_NPOS;
        }
        dst[out++] = (unsigned char)(b >> 16);
        if (k > 2) {
            dst[out++] = (unsigned char)(b >> 8);
        }
        if (k > 3) {
            dst[out++] = (unsigned char)b;
        }
    }
    return out;
}

/* ---- the ABI's object ---------------------------------------------------------------- */

/* Returns the rest of s after a dialect prefix ("X-Store-" or "X-Riak-", any case). */
static const char *cut_dialect(const char *s, size_t n, size_t *rest) {
    static const char *const prefixes[] = {"x-store-", "x-riak-"};
    size_t i, j;
    for (i = 0; i < 2; i++) {
        size_t m = strlen(prefixes[i]);
        if (n < m) {
            continue;
        }
        for (j = 0; j < m && lower((unsigned char)s[j]) == prefixes[i][j]; j++) {
        }
        if (j == m) {
            *rest = n - m;
            return s + m;
        }
    }
    return NULL;
}

static int eq_ci(const char *a, size_t n, const char *b) {
    size_t i;
    if (strlen(b) != n) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i])) {
            return 0;
        }
    }
    return 1;
}

cairn_json cairn_meta_get(cairn_json metadata, const char *suffix) {
    cairn_json k, v;
    cairn_json_iter it = cairn_json_iterate(metadata);
    if (cairn_json_typeof(metadata) != CAIRN_JSON_OBJECT) {
        return none;
    }
    while (cairn_json_next(&it, &k, &v)) {
        char name[64];
        size_t n = cairn_json_string(k, name, sizeof name), rn;
        const char *rest;
        if (n >= sizeof name) {
            continue;
        }
        rest = cut_dialect(name, n, &rn);
        if (rest && eq_ci(rest, rn, suffix)) {
            return v;
        }
    }
    return none;
}

cairn_json cairn_usermeta_get(cairn_json metadata, const char *name) {
    cairn_json meta = cairn_meta_get(metadata, "Meta");
    cairn_json k, v;
    cairn_json_iter it = cairn_json_iterate(meta);
    if (cairn_json_typeof(meta) != CAIRN_JSON_OBJECT) {
        return none;
    }
    while (cairn_json_next(&it, &k, &v)) {
        char full[256];
        size_t n = cairn_json_string(k, full, sizeof full), rn;
        const char *rest;
        if (n >= sizeof full) {
            continue;
        }
        rest = cut_dialect(full, n, &rn);
        if (rest && rn >= 5 && eq_ci(rest, 5, "Meta-") && eq_ci(rest + 5, rn - 5, name)) {
            return v;
        }
    }
    return none;
}

/* Decodes a value's "data_b64" string into a new heap buffer; *n gets its length. */
static unsigned char *decode_b64_member(cairn_json s, size_t *n) {
    size_t len = unescape(s, NULL, 0);
    char *text;
    unsigned char *bytes;
    if (len == CAIRN_NPOS) {
        return NULL;
    }
    text = malloc(len + 1);
    bytes = malloc(cairn_base64_decoded_max(len));
    if (text == NULL || bytes == NULL) {
        free(text);
        free(bytes);
        return NULL;
    }
    unescape(s, text, len);
    *n = cairn_base64_decode(text, len, bytes);
    free(text);
    if (*n == CAIRN_NPOS) {
        free(bytes);
        return NULL;
    }
    return bytes;
}

size_t cairn_value_data(cairn_json value, char *dst, size_t cap) {
    cairn_json b = cairn_json_get(value, "data_b64");
    cairn_json d = cairn_json_get(value, "data");
    if (cairn_json_typeof(b) == CAIRN_JSON_STRING) {
        size_t n;
        unsigned char *bytes = decode_b64_member(b, &n);
        if (bytes == NULL) {
            return CAIRN_NPOS;
        }
        if (dst && cap) {
            memcpy(dst, bytes, n < cap ? n : cap);
        }
        free(bytes);
        return n;
    }
    return unescape(d, dst, dst ? cap : 0);
}

size_t cairn_value_size(cairn_json value) { return cairn_value_data(value, NULL, 0); }

int cairn_value_is_deleted(cairn_json value) {
    return cairn_json_truthy(cairn_meta_get(cairn_json_get(value, "metadata"), "Deleted"));
}
