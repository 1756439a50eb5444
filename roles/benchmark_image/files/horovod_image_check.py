# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark image's check of its Horovod, run inside the image as it is built (benchmark_image's Containerfile):
Horovod must have the Gloo and MPI controllers that the launchers start ranks with, and NCCL where the image holds a
CUDA toolkit, the test horovod_wheel.sh makes before it compiles with NCCL. Each problem is named and the build fails
before the image is tagged or pushed.

    python3 horovod_image_check.py horovod.torch
"""

from __future__ import print_function

import importlib
import os
import shutil
import sys


def cuda_toolkit(environ=None, which=shutil.which, is_executable=lambda path: os.access(path, os.X_OK)):
    """The CUDA toolkit's nvcc, or None: on PATH, else under CUDA_HOME (default /usr/local/cuda), as horovod_wheel.sh
    looks for it."""
    environ = os.environ if environ is None else environ
    found = which("nvcc")
    if found:
        return found
    candidate = os.path.join(environ.get("CUDA_HOME") or "/usr/local/cuda", "bin", "nvcc")
    return candidate if is_executable(candidate) else None


def problems(built, nvcc):
    """What is wrong with a Horovod built with `built` ({'gloo', 'mpi', 'nccl'}: truthy when built) in an image whose
    CUDA toolkit is `nvcc` (None without one)."""
    found = []
    if not built.get("gloo"):
        found.append("Horovod was built without Gloo, which horovodrun --gloo uses")
    if not built.get("mpi"):
        found.append("Horovod was built without MPI, which mpirun and the MPI Operator's launcher use")
    if nvcc and not built.get("nccl"):
        found.append("the image has a CUDA toolkit (%s) but Horovod was built without NCCL, so its GPU all-reduce would "
                     "not use NCCL: build Horovod in the image (leave benchmark_image_wheelhouse unset), or give a "
                     "wheelhouse whose Horovod was compiled against CUDA with NCCL" % nvcc)
    return found


def main(module_name):
    horovod = importlib.import_module("horovod")
    framework = importlib.import_module(module_name)
    built = {"gloo": framework.gloo_built(), "mpi": framework.mpi_built(), "nccl": framework.nccl_built()}
    print("horovod", horovod.__version__, "with", ", ".join(name for name in ("gloo", "mpi", "nccl") if built[name]),
          "(no nccl)" if not built["nccl"] else "")
    wrong = problems(built, cuda_toolkit())
    for line in wrong:
        print("benchmark_image: " + line, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
