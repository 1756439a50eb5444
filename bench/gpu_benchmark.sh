#!/usr/bin/env bash
# ResNet-50 on a bare GPU machine that has Python with PyTorch (CUDA) and torchvision, and no network: the
# collection's benchmark (roles/training_benchmark/files/gpuops_benchmark.py) judged by its training_report code,
# with nothing installed. Run from a copy of the collection:
#
#   bench/gpu_benchmark.sh OUT_DIR [--gpus N] [--num-iters N] [--horovod-sdist horovod-0.28.1.tar.gz]
#
# 1. nvidia-smi lists the GPUs (OUT_DIR/gpu.txt); PyTorch must see them.
# 2. Synthetic ResNet-50 with --distribution ddp under torchrun on N GPUs (default 1), NCCL_DEBUG=INFO: AMP (fp16
#    autocast with a gradient scaler, channels-last, as NVIDIA's published ResNet-50 AMP figures run) and FP32 (TF32
#    convolutions on Ampere and later), each at batch 256 and 64 per GPU.
# 3. With --horovod-sdist, where nvcc, cmake and NCCL's headers exist (the CUDA toolkit's, the system's, or the
#    nvidia-nccl wheel PyTorch installed), Horovod is compiled by the collection's recipe
#    (roles/benchmark_image/files/horovod_wheel.sh, GPU operations through NCCL; Gloo only where there is no MPI)
#    into a scratch virtualenv over the machine's PyTorch (--system-site-packages), and the same four runs go
#    through Horovod.
# Each run writes OUT_DIR/<run>.log (stdout and stderr, NCCL's lines included), <run>.report.json (training_report's
# report) and <run>.verdict.txt; OUT_DIR/summary.txt holds the table of img/sec and the outcome.
#
# Exit status: 0 every run passed training_report; 1 a run or its verdict failed; 2 bad arguments; 3 no GPU found
# (nvidia-smi missing, failing or listing none); 4 PyTorch or torchvision cannot be used on the GPU. Every status but
# 2 is written into OUT_DIR/summary.txt first.
# Environment: PYTHON, the interpreter with PyTorch (default python3).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
program=$repo/roles/training_benchmark/files/gpuops_benchmark.py
recipe=$repo/roles/benchmark_image/files/horovod_wheel.sh
python=${PYTHON:-python3}
usage="usage: gpu_benchmark.sh OUT_DIR [--gpus N] [--num-iters N] [--horovod-sdist FILE]"

die_usage() { printf 'gpu_benchmark: %s\n%s\n' "$1" "$usage" >&2; exit 2; }
progress() { printf '[gpu_benchmark %(%H:%M:%S)T] %s\n' -1 "$*"; }

out='' gpus=1 num_iters=10 sdist=''
while [ "$#" -gt 0 ]; do
    case "$1" in
        --gpus) gpus=${2:-}; shift 2 || die_usage "--gpus needs a number" ;;
        --num-iters) num_iters=${2:-}; shift 2 || die_usage "--num-iters needs a number" ;;
        --horovod-sdist) sdist=${2:-}; shift 2 || die_usage "--horovod-sdist needs a file" ;;
        -*) die_usage "unknown option $1" ;;
        *) [ -z "$out" ] || die_usage "one OUT_DIR only, got '$out' and '$1'"; out=$1; shift ;;
    esac
done
[ -n "$out" ] || die_usage "OUT_DIR is missing"
[[ "$gpus" =~ ^[1-9][0-9]*$ ]] || die_usage "--gpus must be a whole number of GPUs, 1 or more, got '$gpus'"
[[ "$num_iters" =~ ^[1-9][0-9]*$ ]] || die_usage "--num-iters must be a whole number, 1 or more, got '$num_iters'"
[ -z "$sdist" ] || [ -f "$sdist" ] || die_usage "--horovod-sdist: no file '$sdist'"
[ -z "$sdist" ] || sdist=$(cd "$(dirname "$sdist")" && pwd)/$(basename "$sdist")
mkdir -p "$out" || die_usage "OUT_DIR '$out' cannot be created"
out=$(cd "$out" && pwd)
summary=$out/summary.txt
printf 'gpu_benchmark on %s, %(%Y-%m-%d %H:%M:%S %Z)T\n' "${HOSTNAME:-unknown host}" -1 >"$summary"

finish() {
    printf 'outcome: %s\nexit status: %s\n' "$2" "$1" >>"$summary"
    progress "$2 (exit status $1; $summary)"
    exit "$1"
}

no_gpu() {
    printf 'gpu_benchmark: no GPU found (%s)\n' "$1" >&2
    finish 3 "no GPU found ($1)"
}

# 1. The GPUs, as the driver sees them, then as PyTorch does.
command -v nvidia-smi >/dev/null 2>&1 || no_gpu "nvidia-smi is not on PATH"
listing=$(nvidia-smi -L 2>&1)
status=$?
[ "$status" -eq 0 ] || no_gpu "nvidia-smi -L failed with status $status: ${listing%%$'\n'*}"
found=$(grep -c '^GPU [0-9]' <<<"$listing")
[ "$found" -gt 0 ] || no_gpu "nvidia-smi -L lists no GPU: ${listing%%$'\n'*}"
[ "$gpus" -le "$found" ] || die_usage "--gpus $gpus, and nvidia-smi lists $found GPU(s)"
{ printf '%s\n\n' "$listing"; nvidia-smi; } >"$out/gpu.txt" 2>&1
printf 'gpus: %s of %s\n' "$gpus" "$found" >>"$summary"
if ! stack=$("$python" - <<'EOF' 2>&1
import torch, torchvision
assert torch.cuda.is_available(), "torch.cuda.is_available() is False (PyTorch %s, CUDA build %s)" % (torch.__version__, torch.version.cuda)
print("pytorch: %s, CUDA %s, cuDNN %s, NCCL %s, torchvision %s, %s" % (
    torch.__version__, torch.version.cuda, torch.backends.cudnn.version(),
    ".".join(map(str, torch.cuda.nccl.version() if isinstance(torch.cuda.nccl.version(), tuple) else [torch.cuda.nccl.version()])),
    torchvision.__version__, torch.cuda.get_device_name(0)))
EOF
); then
    printf 'gpu_benchmark: %s cannot run the benchmark on the GPU: %s\n' "$python" "${stack##*$'\n'}" >&2
    finish 4 "PyTorch cannot use the GPU (${stack##*$'\n'})"
fi
stack=${stack##*$'\n'}
printf '%s\n' "$stack" >>"$summary"
progress "$found GPU(s); $stack"

# A long command with its output in a log: a line every 30 s says it is alive and what it last printed.
run_logged() {
    local log=$1 started=$SECONDS pid
    shift
    "$@" >"$log" 2>&1 &
    pid=$!
    while ! wait_a_while "$pid"; do
        progress "... $((SECONDS - started)) s: $(tail -n 1 "$log" | cut -c 1-120)"
    done
    wait "$pid"
}

wait_a_while() {
    local second
    for second in $(seq 30); do
        kill -0 "$1" 2>/dev/null || return 0
        [ "$second" -eq 30 ] || sleep 1
    done
    return 1
}

failed=0
printf '\n%-22s %-22s %12s  %s\n' run "img/sec per GPU" "total" verdict >>"$summary"
# Every run: AMP (fp16, channels-last) and FP32, at batch 256 and 64 per GPU; the arguments come after the launcher.
RUNS=("amp-b256 --mixed-precision fp16 --channels-last --batch-size 256" "fp32-b64 --batch-size 64"
      "amp-b64 --mixed-precision fp16 --channels-last --batch-size 64" "fp32-b256 --batch-size 256")

benchmark() {
    local distribution=$1 spec name log
    shift
    for spec in "${RUNS[@]}"; do
        name=$distribution-${spec%% *}
        log=$out/$name.log
        progress "$name: ${spec#* } on $gpus GPU(s) ($log)"
        # shellcheck disable=SC2086 # the run's flags are single words
        run_logged "$log" env NCCL_DEBUG=INFO "$@" "$program" --framework pytorch --distribution "$distribution" \
            --device gpu --model resnet50 --num-iters "$num_iters" ${spec#* } || progress "$name: the run failed (see $log)"
        "$python" "$here/gpu_benchmark_report.py" "$log" "$out/$name.report.json" "$gpus" "$name" >"$out/$name.verdict.txt" 2>&1 \
            || failed=1
        tail -n 1 "$out/$name.verdict.txt" | tee -a "$summary"
    done
}

# 2. PyTorch's DistributedDataParallel under torchrun.
benchmark ddp "$python" -m torch.distributed.run --standalone --nnodes 1 --nproc_per_node "$gpus"

# 3. Horovod from the carried sdist, where it can be compiled.
horovod_build_problem() {
    [ -n "$sdist" ] || { echo "not asked (no --horovod-sdist)"; return; }
    command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || { echo "no nvcc"; return; }
    command -v cmake >/dev/null 2>&1 || { echo "no cmake"; return; }
    [ -n "$nccl_home" ] || [ -e "$cuda_home/include/nccl.h" ] || [ -e /usr/include/nccl.h ] || echo "no NCCL headers"
}

# The recipe's wheel, installed into a virtualenv that sees the machine's PyTorch.
# shellcheck disable=SC2317 # run by run_logged
build_horovod() {
    "$python" -m venv --system-site-packages "$1/venv" \
        && env CUDA_HOME="$cuda_home" NCCL_HOME="$nccl_home" HOROVOD_WITHOUT_MPI="$without_mpi" MAKEFLAGS="-j$(nproc)" \
            bash "$recipe" "$sdist" pytorch "$1/wheels" "$1/venv/bin/python" -m pip \
        && "$1/venv/bin/python" -m pip install --no-index --no-deps "$1"/wheels/horovod-*.whl
}

cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")}
nccl_home=${NCCL_HOME:-$("$python" -c 'import importlib.util as u, os; s = u.find_spec("nvidia.nccl")
print(next((p for p in (s.submodule_search_locations if s else []) if os.path.exists(p + "/include/nccl.h")), ""))' 2>/dev/null)}
skipped=$(horovod_build_problem)
if [ -n "$skipped" ]; then
    printf 'horovod: skipped: %s\n' "$skipped" | tee -a "$summary"
else
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    without_mpi=$(command -v mpicxx >/dev/null 2>&1 || echo 1)
    progress "horovod: compiling $(basename "$sdist") against $stack (NCCL ${nccl_home:-of the system}; several minutes)"
    if run_logged "$out/horovod-build.log" build_horovod "$scratch"; then
        cp "$scratch"/wheels/horovod-*.whl "$out/"
        printf 'horovod: built from %s%s\n' "$(basename "$sdist")" "${without_mpi:+ (Gloo only: no MPI)}" >>"$summary"
        if [ "$gpus" -eq 1 ]; then
            benchmark horovod "$scratch/venv/bin/python"
        else
            benchmark horovod "$scratch/venv/bin/horovodrun" --gloo -np "$gpus" -H "localhost:$gpus" "$scratch/venv/bin/python"
        fi
    else
        failed=1
        printf 'horovod: the build failed (%s)\n' "$out/horovod-build.log" | tee -a "$summary"
    fi
fi

if [ "$failed" -eq 0 ]; then finish 0 "every run passed"; fi
finish 1 "a run failed (see its .verdict.txt and .log)"
