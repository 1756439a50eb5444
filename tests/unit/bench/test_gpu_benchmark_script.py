# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/gpu_benchmark.sh on a machine without a GPU: what CI sees. It must say that no GPU was found, exit with
its own status (3), and leave that outcome in the output folder; PyTorch that cannot use a GPU is status 4."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO_ROOT, "bench", "gpu_benchmark.sh")
# What the script runs before it knows whether there is a GPU.
TOOLS = ("dirname", "mkdir", "grep")
DRIVER_MISSING = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                  "Make sure that the latest NVIDIA driver is installed and running.")


def stand_in(folder, name, body):
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def run_script(tmp_path, nvidia_smi=None, python=None, args=None):
    """The script with a PATH of the few tools it needs, and nvidia-smi only when a stand-in is given."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in TOOLS:
        os.symlink(shutil.which(tool), str(tools / tool))
    if nvidia_smi is not None:
        stand_in(tools, "nvidia-smi", nvidia_smi)
    env = {"PATH": str(tools), "HOME": str(tmp_path)}
    if python is not None:
        env["PYTHON"] = stand_in(tmp_path, "python3", python)
    out = tmp_path / "out"
    result = subprocess.run([shutil.which("bash"), SCRIPT] + (args if args is not None else [str(out)]),
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    return result, out


def summary(out):
    return (out / "summary.txt").read_text().splitlines()


def test_without_nvidia_smi_it_says_no_gpu_and_exits_3(tmp_path):
    result, out = run_script(tmp_path)
    assert result.returncode == 3, result.stderr
    assert "gpu_benchmark: no GPU found (nvidia-smi is not on PATH)" in result.stderr
    assert summary(out)[-2:] == ["outcome: no GPU found (nvidia-smi is not on PATH)", "exit status: 3"]
    assert sorted(os.listdir(str(out))) == ["summary.txt"]


@pytest.mark.parametrize("nvidia_smi, reason", [
    ('echo "%s"; exit 9' % DRIVER_MISSING, "nvidia-smi -L failed with status 9: " + DRIVER_MISSING),
    ("echo 'No devices were found'; exit 6", "nvidia-smi -L failed with status 6: No devices were found"),
    ("exit 0", "nvidia-smi -L lists no GPU: "),
])
def test_a_driver_that_lists_no_gpu_is_no_gpu(tmp_path, nvidia_smi, reason):
    result, out = run_script(tmp_path, nvidia_smi=nvidia_smi)
    assert result.returncode == 3
    assert "no GPU found (%s)" % reason in result.stderr
    assert summary(out)[-2:] == ["outcome: no GPU found (%s)" % reason, "exit status: 3"]


def test_a_gpu_that_pytorch_cannot_use_is_status_4(tmp_path):
    listing = "echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'"
    python = "echo 'Traceback (most recent call last):'; echo \"ModuleNotFoundError: No module named 'torch'\"; exit 1"
    result, out = run_script(tmp_path, nvidia_smi=listing, python=python)
    assert result.returncode == 4, result.stderr
    assert "cannot run the benchmark on the GPU: ModuleNotFoundError: No module named 'torch'" in result.stderr
    assert summary(out)[-3:] == ["gpus: 1 of 1", "outcome: PyTorch cannot use the GPU (ModuleNotFoundError: No module "
                                 "named 'torch')", "exit status: 4"]
    assert "GPU 0: NVIDIA H100 80GB HBM3" in (out / "gpu.txt").read_text()


@pytest.mark.parametrize("args, expected", [
    ([], "OUT_DIR is missing"),
    (["out", "--gpus", "two"], "--gpus must be a whole number of GPUs, 1 or more, got 'two'"),
    (["out", "--horovod-sdist", "/nonexistent/horovod-0.28.1.tar.gz"], "--horovod-sdist: no file"),
    (["out", "--mixed"], "unknown option --mixed"),
])
def test_bad_arguments_are_refused_with_status_2_before_anything(tmp_path, args, expected):
    result, out = run_script(tmp_path, args=[str(tmp_path / arg) if arg == "out" else arg for arg in args])
    assert result.returncode == 2
    assert expected in result.stderr
    assert not out.exists()
