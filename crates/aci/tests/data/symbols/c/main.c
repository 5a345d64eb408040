#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "ring.h"

#define MAX_LINE 256

static void print_item(int value, void *ctx)
{
    FILE *out = ctx;
    fprintf(out, "%d\n", value);
}

int main(int argc, char **argv)
{
    config_t config;
    ring_t ring;
    const struct entry *size;
    char *text;
    int i;

    if (parse_config(&config, argc > 1 ? argv[1] : "size = 3") < 0) {
        return 1;
    }
    size = config_get(&config, "size");
    ring_init(&ring);
    for (i = 0; size != NULL && i < size->value.number; i++) {
        if (ring_push(&ring, i * i) != RING_OK) {
            break;
        }
    }
    ring_visit(&ring, print_item, stdout);
    text = ring_describe(&ring);
    puts(text);
    free(text);
    return 0;
}
