/* Key/value configuration lines: "name = value". */
#pragma once

#include "ring.h"

#define MAX_ENTRIES 16
#define MAX_KEY 32

union value {
    long number;
    const char *text;
};

struct entry {
    char key[MAX_KEY];
    union value value;
    int is_number;
};

typedef struct {
    struct entry entries[MAX_ENTRIES];
    int count;
} config_t;

int parse_config(config_t *config, const char *text);
const struct entry *config_get(const config_t *config, const char *key);
int max_entries(void);
