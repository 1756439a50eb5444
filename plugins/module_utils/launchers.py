# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The launchers of the training benchmark, as gpuops_launcher names them: read by the input check (inputs.stages)
and the scaling sweep (training.sweep_plan), which import nothing of each other."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Every launcher gpuops_launcher may name; the scaling sweep (training.sweep_plan) places ranks for each of them.
LAUNCHERS = ("mpijob", "tfjob", "pytorchjob", "pod", "job", "ssh", "slurm")
# The launchers that run on the hosts of gpuops_training_hosts rather than through the Kubernetes API.
HOST_LAUNCHERS = ("ssh", "slurm")
