/*
 * Native unit test of audit.c against the C SDK's test stand-in: ./test.sh
 */
#include "cairn.h"

#include <stdio.h>
#include <string.h>

int32_t audit(const char *input, int32_t input_len);

static const struct {
    const char *name;
    const char *input;
    int32_t status;
    const char *logs;   /* expected log lines */
    const char *output; /* expected output */
} cases[] = {
    {"put",
     "{\"op\":\"put\",\"object\":{\"bucket_type\":\"default\",\"bucket\":\"users\",\"key\":\"u1\",\"vclock\":\"\","
     "\"values\":[{\"metadata\":{\"content-type\":\"application/json\",\"X-Store-VTag\":\"v1\",\"X-Store-Meta\":{}},"
     "\"data\":\"{\\\"name\\\":\\\"al\\u00e9\\\"}\"}]}}",
     CAIRN_OK,
     "info {\"audit\":\"write\",\"op\":\"put\",\"bucket_type\":\"default\",\"bucket\":\"users\",\"key\":\"u1\","
     "\"vtag\":\"v1\",\"size\":15,\"content_type\":\"application/json\",\"deleted\":false,\"siblings\":1}\n",
     ""},
    {"delete, riak dialect",
     "{\"op\":\"delete\",\"object\":{\"bucket_type\":\"t\",\"bucket\":\"b\",\"key\":\"k \\\"q\\\"\",\"vclock\":\"\","
     "\"values\":[{\"metadata\":{\"content-type\":\"\",\"X-Riak-VTag\":\"v2\",\"X-Riak-Meta\":{},\"X-Riak-Deleted\":\"true\"},"
     "\"data\":\"\"}]}}",
     CAIRN_OK,
     "info {\"audit\":\"write\",\"op\":\"delete\",\"bucket_type\":\"t\",\"bucket\":\"b\",\"key\":\"k \\\"q\\\"\","
     "\"vtag\":\"v2\",\"size\":0,\"content_type\":\"\",\"deleted\":true,\"siblings\":1}\n",
     ""},
    {"siblings, binary value",
     "{\"op\":\"put\",\"object\":{\"bucket_type\":\"default\",\"bucket\":\"b\",\"key\":\"k\",\"vclock\":\"\",\"values\":["
     "{\"metadata\":{\"content-type\":\"application/octet-stream\",\"X-Store-Meta\":{}},\"data_b64\":\"AAEC/w==\"},"
     "{\"metadata\":{\"content-type\":\"text/plain\",\"X-Store-Meta\":{}},\"data\":\"x\"}]}}",
     CAIRN_OK,
     "info {\"audit\":\"write\",\"op\":\"put\",\"bucket_type\":\"default\",\"bucket\":\"b\",\"key\":\"k\","
     "\"vtag\":null,\"size\":4,\"content_type\":\"application/octet-stream\",\"deleted\":false,\"siblings\":2}\n",
     ""},
    {"not a commit input", "{\"values\":[]}", CAIRN_ERROR, "",
     "audit: the input is not {\"op\":...,\"object\":{...}}"},
    {"not JSON", "{", CAIRN_ERROR, "", "audit: the input is not {\"op\":...,\"object\":{...}}"},
};

int main(void) {
    size_t i;
    int failed = 0;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t st = cairn_test_call(audit, cases[i].input);
        const char *out = cairn_test_output(NULL);
        const char *logs = cairn_test_logs();
        if (st != cases[i].status || strcmp(logs, cases[i].logs) != 0 || strcmp(out, cases[i].output) != 0) {
            fprintf(stderr, "FAIL %s: status %d, output %s, logs:\n%s\nwant logs:\n%s\n", cases[i].name, st, out,
                    logs, cases[i].logs);
            failed = 1;
        }
    }
    if (!failed) {
        printf("ok: audit-postcommit\n");
    }
    return failed;
}
