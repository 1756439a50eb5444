#!/usr/bin/env bash
# Build the lab's Kubernetes control plane from the Go module proxy, cached by pinned versions.
#
#   tools/build_kube_binaries.sh            build what is missing, print timings, print the bin dir last
#   tools/build_kube_binaries.sh --print-dir  print the bin dir only (no build)
#   tools/build_kube_binaries.sh --check      exit 0 when the cache is complete, 1 otherwise
#   tools/build_kube_binaries.sh --json       print paths and pins as JSON (no build; for the lab role)
#
# Layout: $GPUOPS_CACHE/kube/<version-key>/bin/{etcd,kube-apiserver,kube-controller-manager,
#         kube-scheduler,kubectl,kubelet,kube-proxy,kwok,kwokctl,mpi-operator,coredns}
# Go module and build caches live in $GPUOPS_CACHE/go/ so that a rebuild after a partial loss is fast.
# There is no registry here: nothing is downloaded except Go modules through GOPROXY.
set -euo pipefail

# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
KUBE_VERSION="${KUBE_VERSION:-$(pinned kubernetes)}"
KUBE_STAGING_VERSION="${KUBE_STAGING_VERSION:-$(pinned kubernetes_staging)}"
ETCD_VERSION="${ETCD_VERSION:-$(pinned etcd)}"
KWOK_VERSION="${KWOK_VERSION:-$(pinned kwok)}"
MPI_OPERATOR_VERSION="${MPI_OPERATOR_VERSION:-$(pinned mpi_operator)}"
COREDNS_VERSION="${COREDNS_VERSION:-$(pinned coredns)}"

GO="${GO:-/usr/local/go/bin/go}"

go_version="$("$GO" env GOVERSION)"
version_key="k8s-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_mpiop-${MPI_OPERATOR_VERSION}_coredns-${COREDNS_VERSION}_${go_version}"
key_dir="$GPUOPS_CACHE/kube/$version_key"
bin_dir="$key_dir/bin"
src_dir="$key_dir/src"

kube_bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)
all_bins=(etcd "${kube_bins[@]}" kwok kwokctl mpi-operator coredns)

cache_complete() {
    local b
    for b in "${all_bins[@]}"; do
        [[ -x "$bin_dir/$b" ]] || return 1
    done
    [[ -f "$key_dir/versions.env" ]]
}

case "${1:-}" in
    --print-dir)
        echo "$bin_dir"
        exit 0
        ;;
    --check)
        cache_complete
        exit $?
        ;;
    --json)
        if cache_complete; then complete=true; else complete=false; fi
        printf '{"bin_dir": "%s", "key_dir": "%s", "complete": %s, "kube_version": "%s", "etcd_version": "%s",' \
            "$bin_dir" "$key_dir" "$complete" "$KUBE_VERSION" "$ETCD_VERSION"
        printf ' "kwok_version": "%s", "mpi_operator_version": "%s", "mpijob_crd": "%s"}\n' \
            "$KWOK_VERSION" "$MPI_OPERATOR_VERSION" \
            "$GPUOPS_CACHE/go/mod/github.com/kubeflow/mpi-operator@$MPI_OPERATOR_VERSION/manifests/base/kubeflow.org_mpijobs.yaml"
        exit 0
        ;;
    "") ;;
    *)
        echo "usage: $0 [--print-dir|--check|--json]" >&2
        exit 2
        ;;
esac

hold_build_lock kube-binaries
go_build_env 0
mkdir -p "$bin_dir" "$src_dir" "$GOMODCACHE" "$GOCACHE"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

total_start="$(now)"
built_any=0

# Mark a build as needed when any of the named binaries is missing.
missing() {
    local b
    for b in "$@"; do
        [[ -x "$bin_dir/$b" ]] || return 0
    done
    return 1
}

# Move freshly built binaries from a scratch dir into bin/ one by one (rename is atomic).
install_bins() {
    local from="$1" b
    shift
    for b in "$@"; do
        mv -f "$from/$b" "$bin_dir/$b"
    done
}

build_kubernetes() {
    local mod_dir="$src_dir/kubernetes" out="$key_dir/tmp-kubernetes" gomod mod_time ldflags v pkgs=()
    mkdir -p "$mod_dir" "$out"
    gomod="$("$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    mod_time="$("$GO" list -m -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Time": "\(.*\)",\{0,1\}$/\1/p')"
    # k8s.io/kubernetes requires its staging modules at v0.0.0 with "=> ./staging/src/..." replaces, which only
    # hold inside its own repository. Here each one is replaced by its published module of the same release.
    {
        echo "module gpuops.local/kubebuild"
        echo
        echo "go 1.24.0"
        echo
        echo "godebug default=go1.24"
        echo
        echo "require k8s.io/kubernetes $KUBE_VERSION"
        echo
        echo "replace ("
        sed -n "s#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*\$#\t\1 => \1 $KUBE_STAGING_VERSION#p" "$gomod"
        echo ")"
    } > "$mod_dir/go.mod"
    rm -f "$mod_dir/go.sum"
    for v in "${kube_bins[@]}"; do
        pkgs+=("k8s.io/kubernetes/cmd/$v")
    done
    (cd "$mod_dir" && "$GO" get "${pkgs[@]/%/@$KUBE_VERSION}")
    ldflags="-s -w"
    for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=$(echo "$KUBE_VERSION" | cut -d. -f1 | tr -d v)"
        ldflags+=" -X $v.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X $v.gitTreeState=clean -X $v.buildDate=$mod_time"
    done
    # One invocation for all of them so they share compilation of the common packages.
    (cd "$mod_dir" && "$GO" build -trimpath -tags=selinux,notest -ldflags="$ldflags" -o "$out/" "${pkgs[@]}")
    install_bins "$out" "${kube_bins[@]}"
    rmdir "$out"
}

build_etcd() {
    local mod_dir="$src_dir/etcd" out="$key_dir/tmp-etcd" m
    mkdir -p "$mod_dir" "$out"
    # etcd's server module replaces its sibling modules with ../ paths, so `go install` refuses it;
    # a wrapper module requiring all of them at the same tag builds the same thing.
    {
        echo "module gpuops.local/etcdbuild"
        echo
        echo "go 1.24"
        echo
        echo "require ("
        for m in server/v3 api/v3 client/pkg/v3 client/v3 pkg/v3; do
            echo "	go.etcd.io/etcd/$m $ETCD_VERSION"
        done
        echo ")"
    } > "$mod_dir/go.mod"
    rm -f "$mod_dir/go.sum"
    (cd "$mod_dir" && "$GO" get "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
    (cd "$mod_dir" && "$GO" build -trimpath -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
    install_bins "$out" etcd
    rmdir "$out"
}

# Build main packages of a module that has no replace directives, as `go install MODULE/cmd/X@VERSION` would,
# but from a wrapper module: `go install pkg@version` also asks the proxy for the module's version list (to
# report deprecation), and a filtered proxy may refuse that list while serving the pinned version itself.
# The wrapper copies the module's go and godebug lines, so the binaries get the same GODEBUG defaults.
build_module() {
    local name="$1" module="$2" version="$3" ldflags="-s -w $4" mod_dir="$src_dir/$1" out="$key_dir/tmp-$1" gomod
    shift 4
    mkdir -p "$mod_dir" "$out"
    gomod="$("$GO" mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    {
        echo "module gpuops.local/${name}build"
        echo
        grep -E '^(go|godebug) ' "$gomod"
        echo
        echo "require $module $version"
    } > "$mod_dir/go.mod"
    rm -f "$mod_dir/go.sum"
    if [[ -n "$module_source" ]]; then
        echo "replace $module => $module_source" >> "$mod_dir/go.mod"
    fi
    (cd "$mod_dir" && "$GO" build -mod=mod -trimpath -ldflags="$ldflags" -o "$out/" "$@")
    install_bins "$out" "${@##*/}"
    rmdir "$out"
}

# A local copy of the module's source to build instead of the module cache's (set by build_mpi_operator).
module_source=""

build_kwok() {
    # kwok's own version constant already reads 0.8.0 in the tagged source.
    build_module kwok sigs.k8s.io/kwok "$KWOK_VERSION" "" sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
}

# The MPI Operator serves its health endpoint on ":8080", a constant. So that two labs (a developer's and the
# tests') can run side by side, it is built from a copy of its module source in which that address is read from
# MPI_OPERATOR_HEALTH_CHECK_ADDR when set. Nothing else of the controller changes; the copy is made afresh from
# the pinned module each build, and the build fails if the line to change is not there.
build_mpi_operator() {
    local dir copy="$src_dir/mpi-operator-source"
    dir="$("$GO" mod download -json "github.com/kubeflow/mpi-operator@$MPI_OPERATOR_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    rm -rf "$copy"
    cp -r "$dir" "$copy"
    chmod -R u+w "$copy"
    grep -q 'Addr:    fmt.Sprintf(":%d", healthCheckPort),' "$copy/cmd/mpi-operator/app/server.go"
    sed -i 's/Addr:    fmt.Sprintf(":%d", healthCheckPort),/Addr:    healthCheckAddr(),/' "$copy/cmd/mpi-operator/app/server.go"
    cat >> "$copy/cmd/mpi-operator/app/server.go" <<'GO'

// healthCheckAddr: added by gpuops' lab build (tools/build_kube_binaries.sh) so that the health endpoint can move.
func healthCheckAddr() string {
	if addr := os.Getenv("MPI_OPERATOR_HEALTH_CHECK_ADDR"); addr != "" {
		return addr
	}
	return fmt.Sprintf(":%d", healthCheckPort)
}
GO
    module_source="$copy"
    build_module mpi-operator github.com/kubeflow/mpi-operator "$MPI_OPERATOR_VERSION" \
        "-X github.com/kubeflow/mpi-operator/pkg/version.Version=$MPI_OPERATOR_VERSION" \
        github.com/kubeflow/mpi-operator/cmd/mpi-operator
    module_source=""
}

# Cluster DNS for the lab's real pods: run as a host process with its kubernetes plugin (docs/lab.md).
build_coredns() {
    build_module coredns github.com/coredns/coredns "$COREDNS_VERSION" "" github.com/coredns/coredns
}

step() {
    local name="$1" start
    shift
    if missing "$@"; then
        start="$(now)"
        echo "build: $name ..." >&2
        "build_${name//-/_}"
        echo "build: $name took $(elapsed "$start") s" >&2
        built_any=1
    else
        echo "build: $name cached" >&2
    fi
}

step kubernetes "${kube_bins[@]}"
step etcd etcd
step kwok kwok kwokctl
step mpi-operator mpi-operator
step coredns coredns

# The MPIJob CRD is read at lab start from the same module version, so keep that module in the cache.
crd_dir="$("$GO" mod download -json "github.com/kubeflow/mpi-operator@$MPI_OPERATOR_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
test -f "$crd_dir/manifests/base/kubeflow.org_mpijobs.yaml"

cat > "$key_dir/versions.env" <<EOF
KUBE_VERSION=$KUBE_VERSION
ETCD_VERSION=$ETCD_VERSION
KWOK_VERSION=$KWOK_VERSION
MPI_OPERATOR_VERSION=$MPI_OPERATOR_VERSION
COREDNS_VERSION=$COREDNS_VERSION
GO_VERSION=$go_version
MPIJOB_CRD=$crd_dir/manifests/base/kubeflow.org_mpijobs.yaml
EOF

if [[ "$built_any" == 1 ]]; then
    echo "build: total $(elapsed "$total_start") s (built)" >&2
else
    echo "build: total $(elapsed "$total_start") s (cache complete, nothing built)" >&2
fi
echo "$bin_dir"
