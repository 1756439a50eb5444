#!/usr/bin/env bash
# Builds the lab's Kubeflow Training Operator image without a registry: the pinned release's controller
# (cmd/training-operator.v1) compiled from the Go module proxy, alone in an image imported into podman, with
# the binary at /manager as in upstream's image. The binary is cached under
# $GPUOPS_CACHE/training-operator/<version>/, so a warm run takes a moment.
#
#   tools/build_training_operator_image.sh [--name]   --name prints the image name only (builds nothing)
# The last line printed is the image name. The release's manifests are in the module's source, at
# $GPUOPS_CACHE/go/mod/github.com/kubeflow/training-operator@<version>/manifests.
set -euo pipefail

# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
version=$(pinned training_operator)
image_name=localhost/gpuops-training-operator:$version
if [ "${1:-}" = --name ]; then
    echo "$image_name"
    exit 0
fi

cache_dir=$GPUOPS_CACHE/training-operator/$version
binary=$cache_dir/manager
if [ ! -x "$binary" ]; then
    go_build_env 0
    build_dir=$(mktemp -d)
    # A module of its own that requires the release: its go.mod has no replace directive to lose.
    printf 'module gpuops.local/trainingoperatorbuild\n\ngo 1.23\n\nrequire github.com/kubeflow/training-operator %s\n' \
        "$version" > "$build_dir/go.mod"
    echo "[training-operator] building $version from the Go module proxy (about 3 minutes on 2 cores)" >&2
    mkdir -p "$cache_dir"
    (cd "$build_dir" && go build -mod=mod -trimpath -ldflags="-s -w" -o "$build_dir/manager" \
        github.com/kubeflow/training-operator/cmd/training-operator.v1)
    mv "$build_dir/manager" "$binary"
    rm -rf "$build_dir"
fi

if ! podman image exists "$image_name"; then
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs" "$rootfs.tar"' EXIT
    mkdir -p "$rootfs/tmp"
    chmod 1777 "$rootfs/tmp"
    cp "$binary" "$rootfs/manager"
    tar -C "$rootfs" -cf "$rootfs.tar" .
    podman import --quiet --change 'ENTRYPOINT ["/manager"]' "$rootfs.tar" "$image_name" >/dev/null
fi
echo "$image_name"
