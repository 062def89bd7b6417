/*
 * malicious: hook functions that misbehave on purpose, to show that the host contains
 * them. Each is a precommit:
 *
 *   spin  loops forever                 -> stopped by the call's deadline
 *   bomb  allocates memory without end  -> stopped by the instance's memory cap
 *   deep  recurses without end          -> stopped by the engine's stack limit
 *   ok    accepts                       -> still served after the others failed
 *
 * A failed instance is discarded and replaced, so `ok` keeps working.
 */
#include "cairn.h"

#include <stdlib.h>

/* Written on every iteration so the loop cannot be optimized away. */
static volatile unsigned long spins;

CAIRN_EXPORT(spin) {
    (void)input;
    (void)input_len;
    for (;;) {
        spins++;
    }
}

/* Every chunk ever allocated, so none can be freed or optimized away. */
struct chunk {
    struct chunk *next;
};
static struct chunk *volatile hoard;

#define CHUNK (4 << 20)

CAIRN_EXPORT(bomb) {
    (void)input;
    (void)input_len;
    for (;;) {
        struct chunk *c = malloc(CHUNK);
        if (c == NULL) {
            /* memory.grow failed at the cap: give up the way a real program would. */
            __builtin_trap();
        }
        for (size_t i = 0; i < CHUNK; i += 4096) {
            ((volatile char *)c)[i] = 1; /* touch every page */
        }
        c->next = hoard;
        hoard = c;
    }
}

/* Called through a volatile pointer so the compiler can neither inline the recursion
 * nor turn it into a loop. Each frame keeps a few values live across the call, so the
 * engine's stack fills up quickly. */
static int64_t (*volatile self)(int64_t, int64_t, int64_t, int64_t);

static int64_t recurse(int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t r = self(a + 1, b * 3, c ^ a, d - b);
    return r + a * b + c * d + (a ^ d) + (b ^ c);
}

CAIRN_EXPORT(deep) {
    (void)input;
    (void)input_len;
    self = recurse;
    return recurse(0, 1, 2, 3) == 0 ? CAIRN_OK : CAIRN_ERROR;
}

CAIRN_EXPORT(ok) {
    (void)input;
    (void)input_len;
    return CAIRN_OK;
}
