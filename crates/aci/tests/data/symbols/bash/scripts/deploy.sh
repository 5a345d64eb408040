#!/usr/bin/env bash
# Build the image and roll it out. "deploy" in this comment is not a reference.
set -euo pipefail

source "$(dirname "$0")/lib.sh"

usage() {
    cat <<'TEXT'
usage: deploy.sh --env NAME [--dry-run]
TEXT
}

build() {
    local tag
    tag=$(git rev-parse --short HEAD)
    run docker build -t "app:$tag" .
    echo "$tag"
}

deploy() {
    local tag=$1
    local replicas
    replicas=$(parse "config/$ENVIRONMENT.env" replicas)

    wait_ready() {
        local tries=0
        until run kubectl rollout status deployment/app; do
            tries=$((tries + 1))
            [ "$tries" -lt 5 ] || die "rollout did not finish"
            sleep 2
        done
    }

    run kubectl set image deployment/app "app=app:$tag"
    run kubectl scale deployment/app --replicas="${replicas:-2}"
    wait_ready
    log info "deployed $tag"
}

main() {
    parse_args "$@"
    require_cmd git docker kubectl
    local tag
    tag=$(build)
    deploy "$tag"
}

main "$@"
