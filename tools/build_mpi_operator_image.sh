#!/usr/bin/env bash
# Builds the lab's MPI Operator image without a registry: the controller binary of the lab's kube build
# (tools/build_kube_binaries.sh, the pinned release) alone in an image imported into podman, laid out as
# upstream's image is (/opt/mpi-operator as the entrypoint). The tag carries the version and a hash of the
# binary, so a warm run takes a moment and a rebuilt binary gets a new image.
#
#   tools/build_mpi_operator_image.sh [--name]     --name prints the image name only (builds nothing)
# The last line printed is the image name.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/pinned.sh
source "$(dirname "${BASH_SOURCE[0]}")/pinned.sh"
binary=$(bash "$repo_root/tools/build_kube_binaries.sh" --print-dir)/mpi-operator
if [ ! -x "$binary" ]; then
    echo "build_mpi_operator_image: $binary is missing; run tools/build_kube_binaries.sh first" >&2
    exit 1
fi
image_name=localhost/gpuops-mpi-operator:$(pinned mpi_operator)-$(sha256sum "$binary" | cut -c1-12)

if [ "${1:-}" = --name ]; then
    echo "$image_name"
    exit 0
fi

if ! podman image exists "$image_name"; then
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs" "$rootfs.tar"' EXIT
    mkdir -p "$rootfs/opt" "$rootfs/tmp"
    # klog also writes log files into the temporary folder.
    chmod 1777 "$rootfs/tmp"
    cp "$binary" "$rootfs/opt/mpi-operator"
    tar -C "$rootfs" -cf "$rootfs.tar" .
    podman import --quiet --change 'ENTRYPOINT ["/opt/mpi-operator"]' "$rootfs.tar" "$image_name" >/dev/null
fi
echo "$image_name"
