# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The horovod_check_build filter on horovodrun --check-build's output as Horovod 0.28.1 prints it."""

from __future__ import absolute_import, division, print_function

from ansible_collections.gpuops.cluster.plugins.filter.horovod_check_build import horovod_check_build

# Horovod 0.28.1 built for PyTorch with NCCL, Gloo and MPI.
GPU_BUILD = """Horovod v0.28.1:

Available Frameworks:
    [ ] TensorFlow
    [X] PyTorch
    [ ] MXNet

Available Controllers:
    [X] MPI
    [X] Gloo

Available Tensor Operations:
    [X] NCCL
    [ ] DDL
    [ ] CCL
    [X] MPI
    [X] Gloo
"""


def test_the_ticked_names_of_each_section_and_the_version():
    built = horovod_check_build(GPU_BUILD)
    assert (built["version"], built["frameworks"], built["controllers"], built["tensor_operations"]) == (
        "0.28.1", ["PyTorch"], ["MPI", "Gloo"], ["NCCL", "MPI", "Gloo"])
    assert built["text"] == GPU_BUILD


def test_an_output_that_is_not_check_build_gives_empty_lists():
    built = horovod_check_build("horovodrun: error: unrecognized arguments\n[X] MPI\n")
    assert (built["version"], built["frameworks"], built["controllers"], built["tensor_operations"]) == (None, [], [], [])
