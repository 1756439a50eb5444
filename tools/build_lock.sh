#!/usr/bin/env bash
# Sourced through tools/build_prologue.sh, which sets GPUOPS_CACHE first. For the build scripts that more than one
# caller may start at once (tools/test.sh's background builds and a test's fixture; two make lab): hold_build_lock
# NAME holds $GPUOPS_CACHE/locks/NAME.lock until the script ends, so the second caller waits for the first and then
# finds the build cached instead of building it again into the same folders. Modes that only print a name or check
# the cache take no lock.
hold_build_lock() {
    local lock_dir=$GPUOPS_CACHE/locks
    mkdir -p "$lock_dir"
    exec {build_lock_fd}>"$lock_dir/$1.lock"
    if ! flock -n "$build_lock_fd"; then
        printf '[%s] another build of it is running; waiting for it\n' "$1" >&2
        flock "$build_lock_fd"
    fi
}
