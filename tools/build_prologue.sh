#!/usr/bin/env bash
# Sourced first by the build scripts: what each of them opens with.
#   - GPUOPS_CACHE is the cache root: ~/.cache/gpuops when it is unset or empty, as the gpuops.cluster.cache_dir
#     lookup has it for the roles;
#   - pinned NAME prints the version versions.yml pins (tools/pinned.sh), hold_build_lock NAME holds the build's
#     lock (tools/build_lock.sh);
#   - print_or_check and reuse_cached below: the options that only print or check, then the cached build;
#   - go_build_env below: the environment of the Go builds.
# A script defines log, its own way of saying what it does, and names its cache test (a command that succeeds when
# the build is cached).
# shellcheck source=tools/pinned.sh
source "$(dirname "${BASH_SOURCE[0]}")/pinned.sh"
# shellcheck source=tools/build_lock.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_lock.sh"
GPUOPS_CACHE="${GPUOPS_CACHE:-$HOME/.cache/gpuops}"

# print_or_check GIVEN PRINT CHECK RESULT TEST...: the options that build nothing and take no lock, GIVEN being the
# script's option. PRINT prints RESULT and ends the script; CHECK ends it with the status of TEST... (0: cached); no
# option returns, to build; any other ends it with a usage error.
print_or_check() {
    local given=$1 print=$2 check=$3 result=$4
    shift 4
    case "$given" in
        "$print")
            echo "$result"
            exit 0
            ;;
        "$check")
            "$@"
            exit $?
            ;;
        "") ;;
        *)
            echo "usage: $0 [$print|$check]" >&2
            exit 2
            ;;
    esac
}

# reuse_cached NAME RESULT MESSAGE TEST...: the build's start, after the options that only print. Holds NAME's build
# lock, so a second caller waits for the first; then, when TEST... finds the build cached, logs MESSAGE, prints
# RESULT and ends the script.
reuse_cached() {
    local name=$1 result=$2 message=$3
    shift 3
    hold_build_lock "$name"
    if "$@"; then
        log "$message"
        echo "$result"
        exit 0
    fi
}

# go_build_env CGO_ENABLED: the environment every Go build here runs in: the installed toolchain only, no VCS stamp,
# modules from the proxy unless GOPROXY names another, and one module and build cache for all of them under
# $GPUOPS_CACHE/go, so that what they share is fetched and compiled once.
go_build_env() {
    export GOTOOLCHAIN=local CGO_ENABLED="$1" GOFLAGS=-buildvcs=false
    export GOMODCACHE="$GPUOPS_CACHE/go/mod" GOCACHE="$GPUOPS_CACHE/go/build"
    export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
}
