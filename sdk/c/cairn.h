/*
 * cairn.h: write Cairn hooks in C (C99) for the Cairn hook ABI v1.
 *
 * Build a hook module with wasi-libc's clang:
 *
 *     clang --target=wasm32-wasi -O2 -mexec-model=reactor -I sdk/c \
 *         -o hook.wasm hook.c sdk/c/cairn.c
 *
 * cairn.c provides the ABI's exports (cairn_alloc, the cairn_abi_v1 marker) and
 * imports (cairn.output, cairn.log), a small JSON reader and writer, and base64. The
 * same two files compile natively with gcc or clang for unit tests: there, cairn_output
 * and cairn_log record what the hook wrote, and cairn_test_call() runs a hook function on
 * a JSON input (see README.md).
 *
 * A hook function:
 *
 *     #include "cairn.h"
 *
 *     CAIRN_EXPORT(validate) {
 *         cairn_json in = cairn_json_parse(input, input_len);
 *         cairn_json data = cairn_json_path(in, "object.values.0.data");
 *         if (cairn_json_typeof(data) != CAIRN_JSON_STRING)
 *             return cairn_reject("value is not text");
 *         return CAIRN_OK;
 *     }
 *
 * CAIRN_EXPORT(name) declares `int32_t name(const char *input, int32_t input_len)` and
 * exports it under `name`. The input is the JSON document of the extension point (see
 * docs/abi.md); it stays valid for the whole call and is followed by a NUL byte.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header implements. */
#define CAIRN_ABI_VERSION 1

/* Statuses an exported function returns. */
#define CAIRN_OK 0     /* success; the output (possibly none) is the result */
#define CAIRN_REJECT 1 /* precommit only: refuse the write; the output is the reason */
#define CAIRN_ERROR 2  /* failure; the output is a message */

/* Log levels of cairn_log. */
#define CAIRN_LOG_DEBUG (-1)
#define CAIRN_LOG_INFO 0
#define CAIRN_LOG_WARN 1
#define CAIRN_LOG_ERROR 2

/* The longest chash_keyfun result, in bytes. */
#define CAIRN_KEY_HASH_MAX 20

/* CAIRN_EXPORT(name) begins the definition of an exported hook function. */
#if defined(__wasm__)
#define CAIRN_EXPORT(name) \
    __attribute__((export_name(#name))) int32_t name(const char *input, int32_t input_len)
#else
#define CAIRN_EXPORT(name) int32_t name(const char *input, int32_t input_len)
#endif

/* The signature of a hook function, for cairn_test_call. */
typedef int32_t (*cairn_hook_fn)(const char *input, int32_t input_len);

/* ---- exports (called by the host, not by hooks) ------------------------------------ */

/* Returns a buffer of at least n bytes (plus a NUL after them) for the next input; the
 * buffer is reused by the next call. Traps when memory runs out. */
void *cairn_alloc(uint32_t n);

/* The ABI v1 marker; never called. */
void cairn_abi_v1(void);

/* ---- host calls ---------------------------------------------------------------- */

/* Sends the call's result bytes to the host, which copies them at once. When called
 * more than once in a call, the last call wins. */
void cairn_output(const void *data, size_t len);

/* Writes one line to the server log at level (CAIRN_LOG_*). The host caps what one call
 * may log (64 KiB). */
void cairn_log(int32_t level, const char *msg, size_t len);

/* cairn_output of a NUL-terminated string. */
void cairn_output_str(const char *s);

/* cairn_log of a NUL-terminated string. */
void cairn_log_str(int32_t level, const char *msg);

/* Outputs reason and returns CAIRN_REJECT: `return cairn_reject("too big");`. */
int32_t cairn_reject(const char *reason);

/* Outputs msg and returns CAIRN_ERROR: `return cairn_fail("bad input");`. */
int32_t cairn_fail(const char *msg);

/* ---- JSON reader ----------------------------------------------------------------- */

/* One JSON value: a span of JSON text. ptr is NULL for a missing or invalid value, and
 * every reader function accepts such a value and returns "nothing" for it, so lookups
 * can be chained without checks in between. */
typedef struct {
    const char *ptr;
    size_t len;
} cairn_json;

typedef enum {
    CAIRN_JSON_NONE = 0, /* missing or invalid */
    CAIRN_JSON_NULL,
    CAIRN_JSON_FALSE,
    CAIRN_JSON_TRUE,
    CAIRN_JSON_NUMBER,
    CAIRN_JSON_STRING,
    CAIRN_JSON_ARRAY,
    CAIRN_JSON_OBJECT
} cairn_json_type;

/* The deepest nesting cairn_json_parse accepts. */
#define CAIRN_JSON_MAX_DEPTH 512

/* Validates text (RFC 8259, UTF-8; surrounding whitespace allowed) and returns its
 * value, or a NONE value when it is not exactly one valid JSON value. Parse once; the
 * other reader functions rely on the text being valid. */
cairn_json cairn_json_parse(const char *text, size_t len);

/* The type of v. */
cairn_json_type cairn_json_typeof(cairn_json v);

/* Nonzero when v is present (not NONE). */
int cairn_json_ok(cairn_json v);

/* The member `key` of object v (the first one when repeated), or NONE. key is compared
 * with the member name after unescaping. */
cairn_json cairn_json_get(cairn_json v, const char *key);

/* Element i of array v, or NONE. */
cairn_json cairn_json_at(cairn_json v, size_t i);

/* The number of elements of an array or members of an object; 0 for anything else. */
size_t cairn_json_count(cairn_json v);

/* Follows a dotted path of member names and array indexes, e.g.
 * "object.values.0.metadata"; NONE when any step is missing. (Member names containing
 * '.' need cairn_json_get.) */
cairn_json cairn_json_path(cairn_json v, const char *path);

/* Iteration over an array's elements or an object's members:
 *
 *     cairn_json_iter it = cairn_json_iterate(obj);
 *     cairn_json key, val;
 *     while (cairn_json_next(&it, &key, &val)) { ... }
 *
 * key is the member name (a string value) for objects and NONE for arrays; either
 * pointer may be NULL. */
typedef struct {
    const char *pos;
    const char *end;
    int object;
} cairn_json_iter;

cairn_json_iter cairn_json_iterate(cairn_json v);
int cairn_json_next(cairn_json_iter *it, cairn_json *key, cairn_json *val);

/* Unescapes string v into dst (at most cap-1 bytes, then a NUL; dst may be NULL when
 * cap is 0). Returns the full unescaped length in bytes, which may exceed cap-1, or
 * (size_t)-1 when v is not a string. A string may contain NUL bytes ("\u0000"). */
size_t cairn_json_string(cairn_json v, char *dst, size_t cap);

/* Nonzero when v is a string equal to s (after unescaping). */
int cairn_json_string_eq(cairn_json v, const char *s);

/* Nonzero when v is a string equal to s ignoring ASCII case. */
int cairn_json_string_eq_ci(cairn_json v, const char *s);

/* Stores v in *out and returns nonzero when v is an integer number (no fraction or
 * exponent) that fits in int64_t. */
int cairn_json_int(cairn_json v, int64_t *out);

/* Stores v in *out and returns nonzero when v is a number. */
int cairn_json_double(cairn_json v, double *out);

/* Nonzero when v is true (or the string "true", ignoring case, as the host writes the
 * tombstone flag). */
int cairn_json_truthy(cairn_json v);

/* ---- JSON writer ----------------------------------------------------------------- */

/* A JSON writer into a caller's buffer (cairn_jw_init(w, buf, cap)) or a growing heap
 * buffer (cairn_jw_init(w, NULL, 0); release it with cairn_jw_free). Commas and colons
 * are added as needed. Writes that do not fit set `failed` and are dropped. */
#define CAIRN_JW_MAX_DEPTH 64

typedef struct {
    char *buf;
    size_t len;
    size_t cap;
    int heap;
    int failed;
    int depth;
    int after_key;
    unsigned char first[CAIRN_JW_MAX_DEPTH + 1];
} cairn_jw;

void cairn_jw_init(cairn_jw *w, char *buf, size_t cap);
void cairn_jw_free(cairn_jw *w);
void cairn_jw_object(cairn_jw *w);     /* { */
void cairn_jw_object_end(cairn_jw *w); /* } */
void cairn_jw_array(cairn_jw *w);      /* [ */
void cairn_jw_array_end(cairn_jw *w);  /* ] */
void cairn_jw_key(cairn_jw *w, const char *key);
void cairn_jw_keyn(cairn_jw *w, const char *key, size_t n);
void cairn_jw_string(cairn_jw *w, const char *s);
void cairn_jw_stringn(cairn_jw *w, const char *s, size_t n);
void cairn_jw_int(cairn_jw *w, int64_t v);
void cairn_jw_double(cairn_jw *w, double v); /* non-finite values are written as null */
void cairn_jw_bool(cairn_jw *w, int v);
void cairn_jw_null(cairn_jw *w);
/* Copies a JSON value (from the reader) verbatim. */
void cairn_jw_value(cairn_jw *w, cairn_json v);
/* Writes bytes as a standard base64 string (for "data_b64"). */
void cairn_jw_base64(cairn_jw *w, const void *data, size_t n);

/* Nonzero when everything fit and every object and array was closed. */
int cairn_jw_ok(const cairn_jw *w);

/* Sends the written JSON as the call's output and returns CAIRN_OK, or returns
 * cairn_fail("cairn: JSON output incomplete") when cairn_jw_ok is false. */
int32_t cairn_jw_output(cairn_jw *w);

/* ---- base64 ------------------------------------------------------------------------ */

/* Decodes standard base64 (padding optional) into dst, which needs room for
 * cairn_base64_decoded_max(n) bytes. Returns the decoded length, or (size_t)-1 for
 * invalid input. */
size_t cairn_base64_decode(const char *src, size_t n, unsigned char *dst);

/* An upper bound of the decoded length of n base64 characters. */
size_t cairn_base64_decoded_max(size_t n);

/* ---- the ABI's object -------------------------------------------------------------- */

/* The metadata member "<prefix><suffix>" of a value's metadata object, where prefix is
 * the dialect's "X-Store-" or "X-Riak-" (both accepted): suffix "VTag",
 * "Last-Modified", "Meta" or "Deleted". */
cairn_json cairn_meta_get(cairn_json metadata, const char *suffix);

/* The user metadata entry `name` (without the "X-Store-Meta-" prefix, ASCII
 * case-insensitive) of a value's metadata object. */
cairn_json cairn_usermeta_get(cairn_json metadata, const char *name);

/* The size in bytes of a value element ({"metadata":..., "data"|"data_b64":...}), or
 * (size_t)-1 when it has neither. */
size_t cairn_value_size(cairn_json value);

/* Copies the bytes of a value element into dst (at most cap bytes, no NUL added) and
 * returns the full size, or (size_t)-1 when it is malformed. */
size_t cairn_value_data(cairn_json value, char *dst, size_t cap);

/* Nonzero when a value element is a tombstone. */
int cairn_value_is_deleted(cairn_json value);

/* ---- native testing (not on wasm) -------------------------------------------------- */
#if !defined(__wasm__)
/* Runs fn on the NUL-terminated JSON input as the host would (through cairn_alloc),
 * clearing the recorded output and log first; returns fn's status. */
int32_t cairn_test_call(cairn_hook_fn fn, const char *json);

/* The output of the last call (NUL-terminated; *len, when not NULL, gets its length),
 * "" when there was none. */
const char *cairn_test_output(size_t *len);

/* The log lines of the last call, each as "LEVEL message\n" (LEVEL: debug, info, warn,
 * error), "" when there were none. */
const char *cairn_test_logs(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_H */
