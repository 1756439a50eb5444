#!/usr/bin/env bash
# Builds the lab workload image without a registry, with the collection's own recipe for a site's benchmark
# image (playbooks/benchmark_image.yml, roles/benchmark_image) FROM the local lab node image
# (tools/build_node_image.sh): OpenMPI from Debian, a Python environment at /opt/gpuops/venv with Horovod and
# one framework from the cached wheelhouse (tools/build_horovod.sh; pip runs with --no-index), the benchmark
# program, and the SSH setup MPIJob workers need. The image name carries a hash of every input (node image,
# wheelhouse, the role's recipe, benchmark program), so a warm run takes a second and any change builds anew.
#
#   tools/build_workload_image.sh [--framework tensorflow|pytorch] [--no-horovod] [--name]
#     --no-horovod  the framework and the benchmark only (benchmark_image_horovod: false), from the framework's
#                   wheels alone (tools/build_horovod.sh --framework-only): the PyTorch image DDP runs from, built
#                   without Horovod's 4-minute compile against torch; its tag is <framework>-ddp-<hash>
#     --name        print the image name this would build, and nothing else (builds nothing)
# The last line printed is the image name.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
framework=tensorflow
print_name_only=false
with_horovod=true

log() { printf '[workload-image] %s\n' "$*" >&2; }
die() { printf 'build_workload_image: %s\n' "$*" >&2; exit 1; }

while [ "$#" -gt 0 ]; do
    case "$1" in
        --framework) framework=${2:-}; shift 2 ;;
        --framework=*) framework=${1#*=}; shift ;;
        --no-horovod) with_horovod=false; shift ;;
        --name) print_name_only=true; shift ;;
        -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown argument '$1' (expected --framework tensorflow|pytorch, --no-horovod, --name)" ;;
    esac
done
case "$framework" in
    tensorflow) horovod_module=horovod.tensorflow ;;
    pytorch) horovod_module=horovod.torch ;;
    *) die "--framework must be tensorflow or pytorch, got '$framework'" ;;
esac

recipe_dir=$repo_root/roles/benchmark_image
benchmark=$repo_root/roles/training_benchmark/files/gpuops_benchmark.py
base_image=$(bash "$repo_root/tools/build_node_image.sh" --name)
wheelhouse_options=(--framework "$framework")
tag_prefix=$framework
if [ "$with_horovod" = false ]; then
    wheelhouse_options+=(--framework-only)
    horovod_module=none
    tag_prefix=$framework-ddp
fi
wheelhouse=$(bash "$repo_root/tools/build_horovod.sh" "${wheelhouse_options[@]}" --dir)
image_key=$(printf '%s\n' "$base_image" "$(basename "$wheelhouse")" "$horovod_module" \
    | cat - "$recipe_dir"/templates/* "$recipe_dir"/tasks/* "$recipe_dir"/vars/* "$recipe_dir"/files/* "$benchmark" \
    | sha256sum | cut -c1-12)
image_name=${GPUOPS_WORKLOAD_IMAGE:-localhost/gpuops-workload:$tag_prefix-$image_key}

if [ "$print_name_only" = true ]; then
    echo "$image_name"
    exit 0
fi

reuse_cached workload-image "$image_name" "present: $image_name" podman image exists "$image_name"

started=$(date +%s)
bash "$repo_root/tools/build_node_image.sh" >/dev/null
wheelhouse=$(bash "$repo_root/tools/build_horovod.sh" "${wheelhouse_options[@]}" | tail -1)

log "building $image_name from $base_image with $(basename "$wheelhouse")"
mkdir -p "$GPUOPS_CACHE/images"
build_log=$(mktemp "$GPUOPS_CACHE/images/workload-build.XXXXXX.log")
if ! ANSIBLE_CONFIG="$repo_root/ansible.cfg" "$repo_root/.venv/bin/ansible-playbook" -i localhost, -c local "$repo_root/playbooks/benchmark_image.yml" \
        -e "{\"ansible_python_interpreter\": \"$repo_root/.venv/bin/python\", \"benchmark_image_base\": \"$base_image\",
             \"benchmark_image_name\": \"$image_name\", \"benchmark_image_framework\": \"$framework\",
             \"benchmark_image_wheelhouse\": \"$wheelhouse\", \"benchmark_image_venv\": \"/opt/gpuops/venv\",
             \"benchmark_image_builder\": \"podman\", \"benchmark_image_work_dir\": \"$GPUOPS_CACHE/images\",
             \"benchmark_image_horovod\": $with_horovod}" \
        >"$build_log" 2>&1; then
    tail -40 "$build_log" >&2
    die "the benchmark image recipe failed (last lines above; full log $build_log)"
fi
rm -f "$build_log"
log "built in $(( $(date +%s) - started )) s: $image_name"
echo "$image_name"
