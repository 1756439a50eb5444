"""The benchmark image's check of its Horovod (roles/benchmark_image/files/horovod_image_check.py), with the inputs
it reads inside the image: what Horovod was built with, and where the image's CUDA toolkit is. The lab builds its
images through it for real (tools/build_workload_image.sh); the lab has no CUDA toolkit, so the NCCL case is here."""

import importlib.util
import os

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT

_PATH = os.path.join(REPO_ROOT, "roles", "benchmark_image", "files", "horovod_image_check.py")
_SPEC = importlib.util.spec_from_file_location("horovod_image_check", _PATH)
check = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check)

CPU_BUILD = {"gloo": True, "mpi": True, "nccl": False}
GPU_BUILD = {"gloo": True, "mpi": True, "nccl": 21805}


def test_a_cuda_base_whose_horovod_lacks_nccl_is_refused_naming_the_toolkit_and_the_way_out():
    assert check.problems(CPU_BUILD, "/usr/local/cuda/bin/nvcc") == [
        "the image has a CUDA toolkit (/usr/local/cuda/bin/nvcc) but Horovod was built without NCCL, so its GPU "
        "all-reduce would not use NCCL: build Horovod in the image (leave benchmark_image_wheelhouse unset), or give a "
        "wheelhouse whose Horovod was compiled against CUDA with NCCL"]


@pytest.mark.parametrize("built, nvcc", [(GPU_BUILD, "/usr/local/cuda/bin/nvcc"), (CPU_BUILD, None), (GPU_BUILD, None)])
def test_nccl_is_asked_for_only_where_the_image_has_cuda(built, nvcc):
    assert check.problems(built, nvcc) == []


def test_a_missing_controller_is_named_whatever_the_base():
    assert check.problems({"gloo": False, "mpi": False, "nccl": False}, None) == [
        "Horovod was built without Gloo, which horovodrun --gloo uses",
        "Horovod was built without MPI, which mpirun and the MPI Operator's launcher use"]


def _not_on_path(_name):
    return None


def test_the_toolkit_is_found_where_horovod_wheel_sh_looks_for_it(tmp_path):
    nvcc = tmp_path / "cuda" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    assert check.cuda_toolkit({"CUDA_HOME": str(tmp_path / "cuda")}, which=_not_on_path) == str(nvcc)
    assert check.cuda_toolkit({"CUDA_HOME": str(tmp_path / "none")}, which=_not_on_path) is None
    assert check.cuda_toolkit({}, which=lambda name: "/opt/bin/nvcc") == "/opt/bin/nvcc"
