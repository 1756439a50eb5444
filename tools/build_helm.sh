#!/usr/bin/env bash
# Build the helm CLI (kubernetes.core.helm runs it) from the Go module proxy, cached by version.
#
#   tools/build_helm.sh            build when missing, print the timing, print the binary's path last
#   tools/build_helm.sh --print    print the binary's path only (no build)
#   tools/build_helm.sh --check    exit 0 when the binary is cached, 1 otherwise
#
# Layout: $GPUOPS_CACHE/helm/<version>/bin/helm; the Go module and build caches are the ones the lab's
# Kubernetes build uses ($GPUOPS_CACHE/go/{mod,build}), so shared dependencies are fetched and compiled once.
set -euo pipefail

# shellcheck source=tools/pinned.sh
source "$(dirname "${BASH_SOURCE[0]}")/pinned.sh"
HELM_VERSION="${HELM_VERSION:-$(pinned helm)}"
GO="${GO:-/usr/local/go/bin/go}"
GPUOPS_CACHE="${GPUOPS_CACHE:-$HOME/.cache/gpuops}"

bin_dir="$GPUOPS_CACHE/helm/$HELM_VERSION/bin"
helm="$bin_dir/helm"

case "${1:-}" in
    --print)
        echo "$helm"
        exit 0
        ;;
    --check)
        [[ -x "$helm" ]]
        exit $?
        ;;
    "") ;;
    *)
        echo "usage: $0 [--print|--check]" >&2
        exit 2
        ;;
esac

# shellcheck source=tools/build_lock.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_lock.sh"
hold_build_lock helm
if [[ -x "$helm" ]]; then
    echo "build: helm $HELM_VERSION cached" >&2
    echo "$helm"
    exit 0
fi

if [[ ! -x "$GO" ]]; then
    echo "build: no Go toolchain at $GO (set GO=/path/to/go)" >&2
    exit 1
fi

export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOMODCACHE="$GPUOPS_CACHE/go/mod"
export GOCACHE="$GPUOPS_CACHE/go/build"
export GOFLAGS="-buildvcs=false"
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
mkdir -p "$bin_dir" "$GOMODCACHE" "$GOCACHE"

start="$(date +%s.%N)"
scratch="$(mktemp -d "$GPUOPS_CACHE/helm/tmp-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
echo "build: helm $HELM_VERSION ..." >&2
# helm reports its version from these variables; a plain `go install` would leave them empty.
GOBIN="$scratch" "$GO" install -trimpath \
    -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
mv -f "$scratch/helm" "$helm"
echo "build: helm $HELM_VERSION took $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >&2
"$helm" version --short >&2
echo "$helm"
