#!/usr/bin/env bash
# Compiles a Horovod wheel from its PyPI sdist for one framework, with the Gloo and MPI controllers, and NCCL
# for GPU operations where a CUDA toolkit is found. The one recipe of the collection: the benchmark image
# (roles/benchmark_image, inside the image build) and the lab's wheelhouse (tools/build_horovod.sh) both run it.
#
#   horovod_wheel.sh SDIST FRAMEWORK OUT_DIR PIP...
#   horovod_wheel.sh --flags FRAMEWORK     print the build's settings, one per line, and build nothing
#     SDIST      horovod-<version>.tar.gz
#     FRAMEWORK  tensorflow or pytorch (the binding built; the other is left out)
#     OUT_DIR    where the wheel is written
#     PIP...     the pip command of the Python environment that holds the framework, e.g. python3 -m pip
# Environment: MAKEFLAGS (parallel jobs); HOROVOD_WITHOUT_MPI=1 (a Gloo-only build, for a machine with no MPI, such as
# bench/gpu_benchmark.sh's bare GPU machine); CUDA_HOME (default /usr/local/cuda) and NCCL_HOME (a NCCL tarball's
# folder, or the nvidia/nccl folder the nvidia-nccl-cu12 wheel installs; default: the NCCL the CUDA toolkit or the
# system holds) for the NCCL build.
#
# Horovod 0.28.1, its last release, needs two fixes to build today: CMake 4 refuses the bundled Gloo's
# cmake_minimum_required (CMAKE_POLICY_VERSION_MINIMUM=3.5), and PyTorch >= 2.1 headers need C++17 where the
# sdist asks for C++14 (fixed upstream after the release).
set -euo pipefail

die() { printf 'horovod_wheel: %s\n' "$*" >&2; exit 1; }

# The build's HOROVOD_* and CMake settings for a framework, one per line: the wheel's content follows from them,
# so tools/build_horovod.sh keys its cache on this list (horovod_wheel.sh --flags FRAMEWORK).
cuda_home=${CUDA_HOME:-/usr/local/cuda}
build_flags() {
    case "$1" in
        tensorflow) echo HOROVOD_WITH_TENSORFLOW=1 HOROVOD_WITHOUT_PYTORCH=1 ;;
        pytorch) echo HOROVOD_WITH_PYTORCH=1 HOROVOD_WITHOUT_TENSORFLOW=1 ;;
        *) die "FRAMEWORK must be tensorflow or pytorch, got '$1'" ;;
    esac
    local mpi=HOROVOD_WITH_MPI=1
    if [ "${HOROVOD_WITHOUT_MPI:-}" = 1 ]; then mpi=HOROVOD_WITHOUT_MPI=1; fi
    echo HOROVOD_WITH_GLOO=1 "$mpi" HOROVOD_WITHOUT_MXNET=1 CMAKE_POLICY_VERSION_MINIMUM=3.5
    if command -v nvcc >/dev/null || [ -x "$cuda_home/bin/nvcc" ]; then
        echo HOROVOD_GPU_OPERATIONS=NCCL "HOROVOD_CUDA_HOME=$cuda_home" ${NCCL_HOME:+"HOROVOD_NCCL_HOME=$NCCL_HOME"}
        if nccl_is_a_wheel; then echo HOROVOD_NCCL_LINK=SHARED; fi
    fi
}

# The nvidia-nccl-cu12 wheel holds include/nccl.h and lib/libnccl.so.2 only: no libnccl.so to link with and no
# static library, which Horovod's CMake looks for by default.
nccl_is_a_wheel() {
    [ -n "${NCCL_HOME:-}" ] && [ -e "$NCCL_HOME/lib/libnccl.so.2" ] \
        && [ ! -e "$NCCL_HOME/lib/libnccl.so" ] && [ ! -e "$NCCL_HOME/lib/libnccl_static.a" ]
}

if [ "${1:-}" = --flags ]; then
    [ "$#" -eq 2 ] || die "usage: horovod_wheel.sh --flags FRAMEWORK"
    build_flags "$2" | tr ' ' '\n'
    exit 0
fi
[ "$#" -ge 4 ] || die "usage: horovod_wheel.sh SDIST FRAMEWORK OUT_DIR PIP...  (or --flags FRAMEWORK)"
sdist=$1 framework=$2 out_dir=$3
shift 3

flags=$(build_flags "$framework")
# shellcheck disable=SC2206 # one word per flag, none with spaces
build_env=($flags)
case "$flags" in
    *HOROVOD_GPU_OPERATIONS=NCCL*)
        build_env+=(PATH="$cuda_home/bin:$PATH")
        echo "horovod_wheel: CUDA at $cuda_home: GPU operations through NCCL${NCCL_HOME:+ from $NCCL_HOME}" >&2 ;;
    *) echo "horovod_wheel: no CUDA toolkit (no nvcc): a CPU build, Gloo and MPI only" >&2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A wheel's NCCL is linked through a folder that adds the libnccl.so link, and found at run time through the
# library's rpath (the wheel's folder is in the user's environment, at a fixed path).
if [[ "$flags" == *HOROVOD_GPU_OPERATIONS=NCCL* ]] && nccl_is_a_wheel; then
    mkdir -p "$work/nccl/lib"
    ln -s "$NCCL_HOME/include" "$work/nccl/include"
    ln -s "$NCCL_HOME/lib/libnccl.so.2" "$work/nccl/lib/libnccl.so"
    build_env+=("HOROVOD_NCCL_HOME=$work/nccl" "LDFLAGS=-Wl,-rpath,$NCCL_HOME/lib${LDFLAGS:+ $LDFLAGS}")
fi
tar -C "$work" -xzf "$sdist"
source_dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'horovod-*' | head -1)
[ -n "$source_dir" ] || die "$sdist holds no horovod-<version> folder"
for cmake_lists in CMakeLists.txt horovod/torch/CMakeLists.txt; do
    grep -q 'set(CMAKE_CXX_STANDARD 14)' "$source_dir/$cmake_lists" \
        || die "$cmake_lists in the sdist no longer asks for C++14: the C++17 fix needs a second look"
    sed -i 's/set(CMAKE_CXX_STANDARD 14)/set(CMAKE_CXX_STANDARD 17)/' "$source_dir/$cmake_lists"
done

mkdir -p "$out_dir"
(cd "$source_dir" && env "${build_env[@]}" "$@" wheel --no-build-isolation --no-deps --no-index -w "$out_dir" .)
