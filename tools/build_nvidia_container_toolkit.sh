#!/usr/bin/env bash
# Build the NVIDIA Container Toolkit's Go programs from the Go module proxy, and Debian packages holding them,
# cached by version.
#
#   tools/build_nvidia_container_toolkit.sh            build when missing, print the timing, print the cache dir last
#   tools/build_nvidia_container_toolkit.sh --print    print the cache dir only (no build)
#   tools/build_nvidia_container_toolkit.sh --check    exit 0 when bin/ and debs/ are complete, 1 otherwise
#
# Layout: $GPUOPS_CACHE/nvidia-container-toolkit/<version>/bin/{nvidia-ctk,nvidia-cdi-hook,
#         nvidia-container-runtime,nvidia-container-runtime-hook}
#         $GPUOPS_CACHE/nvidia-container-toolkit/<version>/debs/<package>_<version without v>-1_amd64.deb
# The packages carry NVIDIA's names, so the role's pinned package list installs them unchanged:
# nvidia-container-toolkit-base, nvidia-container-toolkit, and libnvidia-container-tools and libnvidia-container1,
# which are empty stand-ins (NVIDIA's C library and nvidia-container-cli are not built here).
# The Go module and build caches are the ones the lab's other builds use ($GPUOPS_CACHE/go/{mod,build}).
set -euo pipefail

# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
TOOLKIT_VERSION="${TOOLKIT_VERSION:-$(pinned nvidia_container_toolkit)}"
GO="${GO:-/usr/local/go/bin/go}"

module="github.com/NVIDIA/nvidia-container-toolkit"
deb_version="${TOOLKIT_VERSION#v}-1"
cache_root="$GPUOPS_CACHE/nvidia-container-toolkit"
version_dir="$cache_root/$TOOLKIT_VERSION"

commands=(nvidia-ctk nvidia-cdi-hook nvidia-container-runtime nvidia-container-runtime-hook)
packages=(nvidia-container-toolkit-base nvidia-container-toolkit libnvidia-container-tools libnvidia-container1)

# Complete in the layout under $1: every binary and every package present.
complete() {
    local c p
    for c in "${commands[@]}"; do
        [[ -x "$1/bin/$c" ]] || return 1
    done
    for p in "${packages[@]}"; do
        [[ -f "$1/debs/${p}_${deb_version}_amd64.deb" ]] || return 1
    done
}

log() { printf 'build: %s\n' "$*" >&2; }

print_or_check "${1:-}" --print --check "$version_dir" complete "$version_dir"
reuse_cached nvidia-container-toolkit "$version_dir" "nvidia-container-toolkit $TOOLKIT_VERSION cached" complete "$version_dir"

if [[ ! -x "$GO" ]]; then
    echo "build: no Go toolchain at $GO (set GO=/path/to/go)" >&2
    exit 1
fi
# go-nvml, which nvidia-ctk and the runtime link, is cgo: these programs do not build with CGO_ENABLED=0.
if ! command -v "${CC:-gcc}" >/dev/null; then
    echo "build: no C compiler ${CC:-gcc} (the toolkit needs cgo; install gcc or set CC)" >&2
    exit 1
fi
if ! command -v dpkg-deb >/dev/null; then
    echo "build: no dpkg-deb (install dpkg)" >&2
    exit 1
fi

go_build_env 1
# NVML's header marks dozens of the functions go-nvml wraps deprecated: a screenful of warnings per build.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
mkdir -p "$cache_root" "$GOMODCACHE" "$GOCACHE"
umask 022

start="$(date +%s.%N)"
scratch="$(mktemp -d "$cache_root/tmp-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
out="$scratch/out"
mkdir -p "$out/bin" "$out/debs"
echo "build: nvidia-container-toolkit $TOOLKIT_VERSION ..." >&2

module_dir="$("$GO" mod download -json "$module@$TOOLKIT_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$module_dir" || ! -d "$module_dir" ]]; then
    echo "build: could not download $module@$TOOLKIT_VERSION" >&2
    exit 1
fi
for c in "${commands[@]}"; do
    if [[ ! -d "$module_dir/cmd/$c" ]]; then
        echo "build: $module@$TOOLKIT_VERSION has no cmd/$c (the packages below need it; was it moved or renamed?)" >&2
        exit 1
    fi
done

# The version is the one the Makefile sets (internal/info.version, without the v); a plain `go install` leaves
# it "unknown". gitCommit stays empty: the module proxy does not say which commit the tag is. The external
# linker flags are the Makefile's too: NVML's symbols are resolved when the driver's library is loaded.
targets=()
for c in "${commands[@]}"; do
    targets+=("$module/cmd/$c@$TOOLKIT_VERSION")
done
GOBIN="$out/bin" "$GO" install -trimpath \
    -ldflags="-s -w '-extldflags=-Wl,--export-dynamic -Wl,--unresolved-symbols=ignore-in-object-files -Wl,-z,lazy' -X $module/internal/info.version=${TOOLKIT_VERSION#v}" \
    "${targets[@]}"

# build_deb PACKAGE DEPENDS DESCRIPTION [BINARY...]: a package holding the binaries in /usr/bin.
build_deb() {
    local package="$1" depends="$2" description="$3" root="$scratch/pkg/$1"
    shift 3
    install -d -m 0755 "$root/DEBIAN"
    if (($#)); then
        install -d -m 0755 "$root/usr/bin"
        install -m 0755 "${@/#/$out/bin/}" "$root/usr/bin/"
    fi
    {
        echo "Package: $package"
        echo "Version: $deb_version"
        echo "Architecture: amd64"
        echo "Maintainer: gpuops lab <lab@gpuops.invalid>"
        echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
        if [[ -n "$depends" ]]; then echo "Depends: $depends"; fi
        echo "Section: utils"
        echo "Priority: optional"
        echo "Homepage: https://github.com/NVIDIA/nvidia-container-toolkit"
        echo "Description: $description"
    } >"$root/DEBIAN/control"
    dpkg-deb --build --root-owner-group "$root" "$out/debs/${package}_${deb_version}_amd64.deb" >/dev/null
}

built=" Built for the gpuops lab from NVIDIA's source of $module at tag $TOOLKIT_VERSION;
 not NVIDIA's package."
stand_in=" An empty lab stand-in: this lab does not build NVIDIA's C library (libnvidia-container) or its CLI
 (nvidia-container-cli). The package exists so that the role's pinned package list resolves; it
 installs no files."
build_deb nvidia-container-toolkit-base "" \
    "NVIDIA Container Toolkit base (nvidia-ctk, nvidia-cdi-hook), gpuops lab build
$built" \
    nvidia-ctk nvidia-cdi-hook
build_deb nvidia-container-toolkit \
    "nvidia-container-toolkit-base (= $deb_version), libnvidia-container-tools (= $deb_version)" \
    "NVIDIA Container Toolkit runtime and hook, gpuops lab build
$built" \
    nvidia-container-runtime nvidia-container-runtime-hook
build_deb libnvidia-container-tools "libnvidia-container1 (= $deb_version)" \
    "lab stand-in for NVIDIA's nvidia-container-cli (empty)
$stand_in"
build_deb libnvidia-container1 "" \
    "lab stand-in for NVIDIA's libnvidia-container library (empty)
$stand_in"

# One rename puts the whole version in place, so an interrupted build is never taken for a cached one.
rm -rf "$version_dir"
mv -T "$out" "$version_dir"
echo "build: nvidia-container-toolkit $TOOLKIT_VERSION took $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >&2
"$version_dir/bin/nvidia-ctk" --version >&2
echo "$version_dir"
