/* A fixed-size ring buffer of ints. */
#pragma once

#include <stddef.h>

#define RING_CAPACITY 64
#define RING_NEXT(i) (((i) + 1) % RING_CAPACITY)

enum ring_status {
    RING_OK = 0,
    RING_FULL,
    RING_EMPTY
};

typedef struct ring {
    int items[RING_CAPACITY];
    size_t head;
    size_t tail;
    size_t count;
} ring_t;

typedef void (*ring_visitor)(int value, void *ctx);

void ring_init(ring_t *r);
enum ring_status ring_push(ring_t *r, int value);
enum ring_status ring_pop(ring_t *r, int *out);
size_t ring_visit(const ring_t *r,
                  ring_visitor visit,
                  void *ctx);
char *ring_describe(const ring_t *r);
