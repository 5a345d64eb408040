#!/usr/bin/env bash
# Shared helpers: logging, checks and a tiny key=value parser.

LOG_LEVEL=${LOG_LEVEL:-info}

log() {
    printf '%s [%s] %s\n' "$(date +%H:%M:%S)" "$1" "$2" >&2
}

die() {
    log error "$*"
    exit 1
}

require_cmd() {
    local cmd
    for cmd in "$@"; do
        command -v "$cmd" >/dev/null 2>&1 || die "missing command: $cmd"
    done
}

# parse prints the value of KEY from a key=value file; parse_args reads flags.
parse() {
    local file=$1 key=$2
    grep -E "^${key}=" "$file" | tail -n 1 | cut -d= -f2-
}

parse_args() {
    while [ $# -gt 0 ]; do
        case $1 in
            --env) ENVIRONMENT=$2; shift 2 ;;
            --dry-run) DRY_RUN=1; shift ;;
            -h|--help) usage; exit 0 ;;
            *) die "unknown flag $1" ;;
        esac
    done
}

function run {
    if [ "${DRY_RUN:-0}" = 1 ]; then
        log info "would run: $*"
    else
        "$@"
    fi
}
