#!/usr/bin/env bash
# Builds the lab's pod sandbox ("pause") image without a registry: tools/pause/pause.c compiled static
# with the machine's gcc, alone in an image imported into podman. The tag is a hash of the source, so a
# warm run takes a moment and a changed source builds anew.
#
#   tools/build_pause_image.sh [--name]     --name prints the image name only (builds nothing)
# The last line printed is the image name.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source_file=$repo_root/tools/pause/pause.c
image_name=localhost/gpuops-pause:$(sha256sum "$source_file" | cut -c1-12)

if [ "${1:-}" = --name ]; then
    echo "$image_name"
    exit 0
fi

if ! podman image exists "$image_name"; then
    command -v gcc >/dev/null || { echo "build_pause_image: gcc is missing (Debian package gcc)" >&2; exit 1; }
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs"' EXIT
    gcc -static -Os -s -o "$rootfs/pause" "$source_file"
    tar -C "$rootfs" -cf "$rootfs.tar" pause
    podman import --quiet --change 'ENTRYPOINT ["/pause"]' "$rootfs.tar" "$image_name" >/dev/null
    rm -f "$rootfs.tar"
fi
echo "$image_name"
