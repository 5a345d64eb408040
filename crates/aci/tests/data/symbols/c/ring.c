#include <stdio.h>
#include <stdlib.h>

#include "ring.h"

/* parse here reads a status name; config.c has its own parse. */
static enum ring_status parse(const char *name)
{
    if (name[0] == 'f') {
        return RING_FULL;
    }
    return name[0] == 'e' ? RING_EMPTY : RING_OK;
}

void ring_init(ring_t *r)
{
    r->head = 0;
    r->tail = 0;
    r->count = 0;
}

static int ring_full(const ring_t *r)
{
    return r->count == RING_CAPACITY;
}

enum ring_status ring_push(ring_t *r, int value)
{
    if (ring_full(r)) {
        return parse("full");
    }
    r->items[r->tail] = value;
    r->tail = RING_NEXT(r->tail);
    r->count++;
    return RING_OK;
}

enum ring_status ring_pop(ring_t *r, int *out)
{
    if (r->count == 0) {
        return RING_EMPTY;
    }
    *out = r->items[r->head];
    r->head = RING_NEXT(r->head);
    r->count--;
    return RING_OK;
}

size_t ring_visit(const ring_t *r,
                  ring_visitor visit,
                  void *ctx)
{
    size_t i = r->head;
    size_t n;
    for (n = 0; n < r->count; n++) {
        visit(r->items[i], ctx);
        i = RING_NEXT(i);
    }
    return n;
}

char *ring_describe(const ring_t *r)
{
    char *text = malloc(64);
    if (text != NULL) {
        snprintf(text, 64, "ring_describe: %zu of %d", r->count, RING_CAPACITY);
    }
    return text;
}
