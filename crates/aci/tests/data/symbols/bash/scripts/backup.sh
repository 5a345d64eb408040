#!/usr/bin/env bash
# Dump the database and keep the newest copies.
set -euo pipefail

source "$(dirname "$0")/lib.sh"

KEEP=7

usage() {
    echo "usage: backup.sh --env NAME"
}

function cleanup {
    rm -f "${TMP_DUMP:-}"
}

rotate() {
    local dir=$1
    ls -1t "$dir" | tail -n +$((KEEP + 1)) | while read -r old; do
        run rm -f "$dir/$old"
    done
}

backup() {
    local database
    database=$(parse "config/$ENVIRONMENT.env" database)
    TMP_DUMP=$(mktemp)
    trap cleanup EXIT
    run pg_dump --file "$TMP_DUMP" "$database"
    run gzip -c "$TMP_DUMP" > "backups/$(date +%F).sql.gz"
    rotate backups
    log info "backup done"
}

parse_args "$@"
require_cmd pg_dump gzip
backup
