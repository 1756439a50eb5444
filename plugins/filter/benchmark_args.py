# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: benchmark_args
short_description: What the training benchmark's arguments say about the run
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Reads the arguments a launcher gives C(gpuops_benchmark.py) as the program reads them (a value as the next word or
    after C(=)), full option names only, so that the launchers' input checks refuse a combination before anything starts.
options:
  _input:
    description: The benchmark's arguments, such as C([--model, resnet50, --mixed-precision, bf16]).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse fp16 mixed precision in a pod without GPUs
  ansible.builtin.assert:
    that: not ((kube_job_benchmark_args | gpuops.cluster.benchmark_args).mixed_precision == 'fp16' and pod_launcher_gpus == 0)
"""

RETURN = r"""
_value:
  description:
    - C(framework), C(distribution), C(device) and C(mixed_precision) (V(fp16) for the option without a value), each
      null when not given, and C(horovod_knobs), Horovod's options given (C(--fp16-allreduce), C(--fusion-threshold-mb),
      C(--cycle-time-ms), C(--hierarchical-allreduce)).
  type: dict
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.training.benchmark_args import read_benchmark_args


class FilterModule(object):
    def filters(self):
        return {"benchmark_args": read_benchmark_args}
