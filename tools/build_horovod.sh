#!/usr/bin/env bash
# Builds Horovod (the version versions.yml pins) (Gloo and MPI, CPU operations) for one framework and caches it, with every
# wheel that framework needs, as a wheelhouse:
#   ~/.cache/gpuops/wheels/horovod-<version>-<framework>-<version>-py<X.Y>-<hash>/
# The folder is complete for `pip install --no-index --find-links <folder> -r <folder>/requirements.txt`,
# which is how the lab workload image and air-gapped nodes install it. The hash covers the pinned
# requirements (tools/horovod/<framework>.txt, tools/horovod/build.txt) and the build recipe below,
# so a change to any of them builds a new folder; an existing folder is reused in a second. The framework's
# own version is versions.yml's (tensorflow, torch), the pin the user_python_env role installs too: the
# requirements file names it as <package>==PINNED.
#
#   tools/build_horovod.sh [--framework tensorflow|pytorch] [--framework-only] [--dir]
#     --framework       tensorflow (the lab's default: 280 MB of wheels) or pytorch (PyPI's torch is the
#                       CUDA build and does not import without its 3+ GB of nvidia-* wheels)
#     --framework-only  the framework's wheels alone, downloaded and not compiled against (about a minute,
#                       against about 4 for Horovod's torch build): for DDP-only images, in
#                       ~/.cache/gpuops/wheels/<framework package>-<version>-py<X.Y>-<hash>/
#     --dir             print the wheelhouse folder this would build, and nothing else
# The last line printed is the wheelhouse folder.
#
# The compile itself is roles/benchmark_image/files/horovod_wheel.sh, the recipe the benchmark image runs
# too (with the two fixes Horovod 0.28.1's sdist needs today).
set -euo pipefail
# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The wheel must match the nodes' Python ABI: the lab nodes and this host are Debian 12, whose
# python3 is 3.11. Another interpreter can be given for other node images.
python=${GPUOPS_HOROVOD_PYTHON:-/usr/bin/python3}
build_jobs=${GPUOPS_BUILD_JOBS:-2}
horovod_version=$(pinned horovod)
framework=tensorflow
print_dir_only=false
framework_only=false

log() { printf '[horovod] %s\n' "$*" >&2; }
die() { printf 'build_horovod: %s\n' "$*" >&2; exit 1; }

while [ "$#" -gt 0 ]; do
    case "$1" in
        --framework) framework=${2:-}; shift 2 ;;
        --framework=*) framework=${1#*=}; shift ;;
        --framework-only) framework_only=true; shift ;;
        --dir) print_dir_only=true; shift ;;
        -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown argument '$1' (expected --framework tensorflow|pytorch, --framework-only, --dir)" ;;
    esac
done

case "$framework" in
    tensorflow)
        framework_package=tensorflow-cpu
        framework_version=$(pinned tensorflow)
        import_check='import horovod.tensorflow as hvd' ;;
    pytorch)
        framework_package=torch
        framework_version=$(pinned torch)
        import_check='import horovod.torch as hvd' ;;
    *) die "--framework must be tensorflow or pytorch, got '$framework'" ;;
esac

requirements=$repo_root/tools/horovod/$framework.txt
build_requirements=$repo_root/tools/horovod/build.txt
[ -r "$requirements" ] || die "missing $requirements"
[ -x "$python" ] || die "no Python interpreter at $python (set GPUOPS_HOROVOD_PYTHON)"

python_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
grep -qx "$framework_package==PINNED" "$requirements" \
    || die "$requirements must name $framework_package==PINNED (its version is versions.yml's)"
pinned_requirements=$(sed "s/^$framework_package==PINNED\$/$framework_package==$framework_version/" "$requirements")

# Everything that decides the wheel's content; changing any of it gives a new cache folder. The build's settings
# are the ones horovod_wheel.sh, the collection's Horovod recipe, builds with on this machine.
horovod_wheel=$repo_root/roles/benchmark_image/files/horovod_wheel.sh
build_flags=$(bash "$horovod_wheel" --flags "$framework" | tr '\n' ' ')
recipe="horovod==$horovod_version cxx17-patch ${build_flags% } python$python_version"
key_hash=$(cat <(printf '%s\n' "$pinned_requirements") "$build_requirements" <(echo "$recipe") | sha256sum | cut -c1-12)
key=horovod-$horovod_version-$framework-$framework_version-py$python_version-$key_hash
if [ "$framework_only" = true ]; then
    key=$framework_package-$framework_version-py$python_version-$(printf '%s\n' "$pinned_requirements" | sha256sum | cut -c1-12)
fi
wheelhouse=$GPUOPS_CACHE/wheels/$key

if [ "$print_dir_only" = true ]; then
    echo "$wheelhouse"
    exit 0
fi

reuse_cached horovod "$wheelhouse" "present: $wheelhouse" test -f "$wheelhouse/BUILD-INFO"

# Debian packages the build needs: a C++ compiler, OpenMPI's headers and mpicxx, Python headers.
build_packages=(g++ make libopenmpi-dev openmpi-bin python3-dev python3-venv)
[ "$framework_only" = false ] || build_packages=(python3-venv)
missing=()
for package in "${build_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || die "missing Debian packages: ${missing[*]} (apt-get install them, or run as root)"
    log "installing Debian packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

started=$(date +%s)
mkdir -p "$GPUOPS_CACHE/wheels"
work=$(mktemp -d "$GPUOPS_CACHE/wheels/.build-$framework.XXXXXX")
trap 'rm -rf "$work"' EXIT
staging=$work/wheelhouse
mkdir -p "$staging" "$work/build-tools" "$work/dist"
printf '%s\n' "$pinned_requirements" >"$work/requirements.txt"
requirements=$work/requirements.txt

if [ "$framework_only" = true ]; then
    log "downloading the pinned $framework_package $framework_version wheels (no Horovod)"
else
    log "downloading the pinned $framework_package $framework_version wheels and the Horovod $horovod_version sdist"
fi
"$python" -m venv "$work/venv"
pip=("$work/venv/bin/pip" --disable-pip-version-check --no-input)
"${pip[@]}" download --quiet --only-binary :all: --no-deps -r "$requirements" -d "$staging"
if [ "$framework_only" = true ]; then
    grep -v '^#' "$requirements" >"$staging/requirements.txt"
    finished=$(date +%s)
    printf 'framework: %s %s (no Horovod)\npython: %s\nbuilt: %s\ndownload_seconds: %s\n' "$framework_package" \
        "$framework_version" "$python_version" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$((finished - started))" >"$staging/BUILD-INFO"
    rm -rf "$wheelhouse"
    mv "$staging" "$wheelhouse"
    log "downloaded in $((finished - started)) s: $wheelhouse"
    echo "$wheelhouse"
    exit 0
fi
"${pip[@]}" download --quiet --only-binary :all: --no-deps -r "$build_requirements" -d "$work/build-tools"
"${pip[@]}" download --quiet --no-binary :all: --no-deps "horovod==$horovod_version" -d "$work"
downloaded=$(date +%s)

log "installing the build environment"
"${pip[@]}" install --quiet --no-index --find-links "$staging" --find-links "$work/build-tools" \
    -r "$requirements" -r "$build_requirements"

log "compiling Horovod against $framework_package $framework_version with $build_jobs jobs (about 4 minutes on 2 cores)"
compile_log=$work/compile.log
# The collection's one Horovod recipe (its sdist fixes and build flags), which the benchmark image runs too.
if ! MAKEFLAGS="-j$build_jobs" PATH="$work/venv/bin:$PATH" bash "$horovod_wheel" \
        "$work/horovod-$horovod_version.tar.gz" "$framework" "$work/dist" "${pip[@]}" >"$compile_log" 2>&1; then
    tail -40 "$compile_log" >&2
    die "the Horovod build failed (last lines above)"
fi
compiled=$(date +%s)

wheel=$(find "$work/dist" -name "horovod-$horovod_version-*.whl" | head -1)
[ -n "$wheel" ] || die "pip wheel succeeded but left no horovod wheel in $work/dist"
# With its dependencies from the wheelhouse alone: one it lacks fails here, not in an image or a node's install.
"${pip[@]}" install --quiet --no-index --find-links "$staging" "$wheel" \
    || die "the wheelhouse lacks a dependency of the Horovod wheel (pip's message above): add it to $requirements"
# Refuse to cache a wheel that lacks a controller or the framework binding.
(cd "$work" && "$work/venv/bin/python" -c "
$import_check
assert hvd.gloo_built(), 'Horovod was built without Gloo'
assert hvd.mpi_built(), 'Horovod was built without MPI'
print('horovod', '$horovod_version', 'gloo and mpi built')
") >&2 || die "the built wheel does not import with Gloo and MPI"

cp "$wheel" "$staging/"
grep -v '^#' "$requirements" >"$staging/requirements.txt"
echo "horovod==$horovod_version" >>"$staging/requirements.txt"
finished=$(date +%s)
cat >"$staging/BUILD-INFO" <<EOF
horovod: $horovod_version
framework: $framework_package $framework_version
python: $python_version
recipe: $recipe
built: $(date -u +%Y-%m-%dT%H:%M:%SZ)
download_seconds: $((downloaded - started))
compile_seconds: $((compiled - downloaded))
total_seconds: $((finished - started))
EOF
rm -rf "$wheelhouse"
mv "$staging" "$wheelhouse"
log "built in $((finished - started)) s (compile $((compiled - downloaded)) s): $wheelhouse"
echo "$wheelhouse"
