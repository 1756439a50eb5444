# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's arguments as the launchers' input checks read them, the program's own reading beside."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.filter.benchmark_args import FilterModule
from gpuops_testlib.benchmark_program import load_benchmark

READ = FilterModule().filters()["benchmark_args"]


@pytest.mark.parametrize("args, precision", [
    ([], None),
    (["--mixed-precision"], "fp16"),
    (["--mixed-precision", "--channels-last"], "fp16"),
    (["--mixed-precision", "bf16", "--model", "resnet50"], "bf16"),
    (["--mixed-precision=fp16"], "fp16"),
    (["--model", "resnet50", "--mixed-precision"], "fp16"),
])
def test_mixed_precision_is_read_as_the_program_reads_it(args, precision):
    assert READ(args)["mixed_precision"] == precision
    assert load_benchmark().parse_args(args).mixed_precision == precision


def test_the_distribution_framework_device_and_horovods_knobs():
    assert READ(["--framework", "pytorch", "--distribution=ddp", "--device", "cpu", "--fp16-allreduce",
                 "--fusion-threshold-mb", 64, "--batch-size", 32]) == {
        "framework": "pytorch", "distribution": "ddp", "device": "cpu", "mixed_precision": None,
        "horovod_knobs": ["--fp16-allreduce", "--fusion-threshold-mb"]}
    assert READ(None)["horovod_knobs"] == []
