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

# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
HELM_VERSION="${HELM_VERSION:-$(pinned helm)}"
GO="${GO:-/usr/local/go/bin/go}"

bin_dir="$GPUOPS_CACHE/helm/$HELM_VERSION/bin"
helm="$bin_dir/helm"
log() { printf 'build: %s\n' "$*" >&2; }

print_or_check "${1:-}" --print --check "$helm" test -x "$helm"
reuse_cached helm "$helm" "helm $HELM_VERSION cached" test -x "$helm"

if [[ ! -x "$GO" ]]; then
    echo "build: no Go toolchain at $GO (set GO=/path/to/go)" >&2
    exit 1
fi

go_build_env 0
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
