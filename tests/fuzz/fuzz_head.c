/* fuzz_head.c - libFuzzer harness for the HTTP front end's request-head check
 * (server/http/head.c): each input is the bytes a new connection has sent, checked as they are
 * and with the client's EOF, under the default limits and the smallest ones. Beyond what the
 * sanitizers catch it asserts the verdict's contract: a refusal carries a known 4xx code and a
 * message, an accepted head ends with its empty line inside the input and within
 * gp_head_max_bytes, EOF never turns a complete head into a wait, and every prefix shorter than an
 * accepted head is a wait. Built and run by `make fuzz` (tests/fuzz/run.sh) from
 * tests/fuzz/corpus/head/.
 */
#include "server/http/http.h"
#include "server/http/head.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void one(const char *buf, size_t n, const gp_head_limits *lim) {
    gp_head_verdict v;
    for (int eof = 0; eof < 2; eof++) {
        int r = gp_head_check(buf, n, eof, lim, &v);
        if (r == GP_HEAD_BAD) {
            int st = gp_http_code_status(v.code);
            if ((st != 400 && st != 413 && st != 414 && st != 431) || !v.msg[0]) abort();
        } else if (r == GP_HEAD_OK) {
            if (v.head_len == 0 || v.head_len > n || v.head_len > gp_head_max_bytes(lim) ||
                buf[v.head_len - 1] != '\n')
                abort();
            /* the head alone is the same verdict, and any shorter prefix waits */
            gp_head_verdict w;
            if (gp_head_check(buf, v.head_len, 0, lim, &w) != GP_HEAD_OK) abort();
            if (gp_head_check(buf, v.head_len - 1, 0, lim, &w) == GP_HEAD_OK) abort();
        } else if (r != GP_HEAD_MORE || eof) {
            abort(); /* with EOF there is no more to wait for */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const gp_head_limits def = {8192, 16384}, small = {256, 1024};
    one((const char *)data, size, &def);
    one((const char *)data, size, &small);
    return 0;
}
