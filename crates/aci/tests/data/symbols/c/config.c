#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* Parse one "key = value" line into an entry; returns 0 on success. */
static int parse(const char *line, struct entry *out)
{
    const char *eq = strchr(line, '=');
    size_t len;
    char *end;

    if (eq == NULL) {
        return -1;
    }
    len = (size_t)(eq - line);
    while (len > 0 && isspace((unsigned char)line[len - 1])) {
        len--;
    }
    if (len == 0 || len >= MAX_KEY) {
        return -1;
    }
    memcpy(out->key, line, len);
    out->key[len] = '\0';
    eq++;
    while (isspace((unsigned char)*eq)) {
        eq++;
    }
    out->value.number = strtol(eq, &end, 10);
    out->is_number = (*end == '\0' || *end == '\n');
    if (!out->is_number) {
        out->value.text = eq;
    }
    return 0;
}

int max_entries(void)
{
    return MAX_ENTRIES;
}

int parse_config(config_t *config, const char *text)
{
    const char *line = text;
    config->count = 0;
    while (line != NULL && *line != '\0' && config->count < max_entries()) {
        if (parse(line, &config->entries[config->count]) == 0) {
            config->count++;
        }
        line = strchr(line, '\n');
        if (line != NULL) {
            line++;
        }
    }
    return config->count;
}

const struct entry *config_get(const config_t *config, const char *key)
{
    int i;
    for (i = 0; i < config->count; i++) {
        if (strcmp(config->entries[i].key, key) == 0) {
            return &config->entries[i];
        }
    }
    return NULL;
}
