#!/usr/bin/env bash
# Builds the lab's NVIDIA device plugin image without a registry: NVIDIA's nvidia-device-plugin command, built
# with cgo from its Go module at the lab's pin (lab_nvidia_device_plugin in versions.yml), alone in an image
# with the C library it links, laid out as NVIDIA's image is (/usr/bin/nvidia-device-plugin as the entrypoint).
# The binary is cached by version; the tag carries the version and a hash of the binary, so a warm run takes a
# moment and a rebuilt binary gets a new image.
#
#   tools/build_nvidia_device_plugin_image.sh [--name]   --name prints the image name only (builds nothing;
#                                                        fails when the binary is not built yet)
# The last line printed is the image name.
set -euo pipefail

# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
PLUGIN_VERSION="${PLUGIN_VERSION:-$(pinned lab_nvidia_device_plugin)}"
GO="${GO:-/usr/local/go/bin/go}"

module=github.com/NVIDIA/k8s-device-plugin
binary=$GPUOPS_CACHE/nvidia-device-plugin/$PLUGIN_VERSION/nvidia-device-plugin

image_name() {
    echo "localhost/gpuops-nvidia-device-plugin:$PLUGIN_VERSION-$(sha256sum "$binary" | cut -c1-12)"
}

if [ "${1:-}" = --name ]; then
    if [ ! -x "$binary" ]; then
        echo "build_nvidia_device_plugin_image: $binary is missing; run tools/build_nvidia_device_plugin_image.sh first" >&2
        exit 1
    fi
    image_name
    exit 0
fi

if [ ! -x "$binary" ]; then
    [ -x "$GO" ] || { echo "build_nvidia_device_plugin_image: no Go toolchain at $GO (set GO=/path/to/go)" >&2; exit 1; }
    # go-nvml, which the plugin links, is cgo.
    command -v "${CC:-gcc}" >/dev/null || { echo "build_nvidia_device_plugin_image: no C compiler ${CC:-gcc} (install gcc or set CC)" >&2; exit 1; }
    go_build_env 1
    # NVML's header marks dozens of the functions go-nvml wraps deprecated: a screenful of warnings per build.
    export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
    start=$(date +%s)
    echo "build: nvidia-device-plugin $PLUGIN_VERSION ..." >&2
    module_dir=$("$GO" mod download -json "$module@$PLUGIN_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    [ -d "$module_dir/cmd/nvidia-device-plugin" ] || {
        echo "build_nvidia_device_plugin_image: the Go module proxy did not give $module@$PLUGIN_VERSION with cmd/nvidia-device-plugin" >&2
        exit 1
    }
    mkdir -p "$(dirname "$binary")"
    # Built inside the module (not `go install module@version`): the proxy refuses this module's version list,
    # which `go install` reads for deprecation notices. The linker flags are NVIDIA's Makefile's: NVML's
    # symbols are resolved when the driver's library is loaded on a GPU node.
    (cd "$module_dir" && "$GO" build -trimpath -o "$binary.tmp" \
        -ldflags "-s -w '-extldflags=-Wl,--export-dynamic -Wl,--unresolved-symbols=ignore-in-object-files' -X $module/internal/info.version=$PLUGIN_VERSION" \
        ./cmd/nvidia-device-plugin)
    mv "$binary.tmp" "$binary"
    echo "build: nvidia-device-plugin $PLUGIN_VERSION took $(($(date +%s) - start)) s" >&2
fi

name=$(image_name)
if ! podman image exists "$name"; then
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs" "$rootfs.tar"' EXIT
    install -D -m 0755 "$binary" "$rootfs/usr/bin/nvidia-device-plugin"
    # The C library and loader it links (cgo), taken from this machine as ldd names them.
    for library in $(ldd "$binary" | grep -o '/[^ ]*'); do
        install -D -m 0755 "$library" "$rootfs$library"
    done
    mkdir -p "$rootfs/tmp"
    chmod 1777 "$rootfs/tmp"
    tar -C "$rootfs" -cf "$rootfs.tar" .
    podman import --quiet --change 'ENTRYPOINT ["/usr/bin/nvidia-device-plugin"]' "$rootfs.tar" "$name" >/dev/null
fi
echo "$name"
