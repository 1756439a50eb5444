#!/usr/bin/env bash
# Sourced by the build scripts: pinned NAME prints the version versions.yml pins for NAME, or fails.
gpuops_versions_file="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/versions.yml"

pinned() {
    local version
    version=$(sed -n "s/^$1: *\([^ #]*\).*$/\1/p" "$gpuops_versions_file")
    if [ -z "$version" ]; then
        echo "no pinned version named '$1' in $gpuops_versions_file" >&2
        return 1
    fi
    printf '%s\n' "$version"
}
