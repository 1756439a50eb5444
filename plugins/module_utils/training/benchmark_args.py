# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the benchmark's arguments, as a launcher hands them to gpuops_benchmark.py, say about the run: the framework,
the distribution, the device, the mixed precision and Horovod's knobs. Read as the program's argparse reads them (a
value as the next word or after "="), full option names only, so that a launcher refuses a combination before it
starts anything; what is not read here the program itself refuses before any work."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Options that take a value, by the key they are read into.
VALUED = {"--framework": "framework", "--distribution": "distribution", "--device": "device"}
MIXED_PRECISION = "--mixed-precision"
# Without a value --mixed-precision is fp16, as the program reads it.
MIXED_PRECISION_ALONE = "fp16"
# Horovod's own options, which --distribution ddp does not use.
HOROVOD_KNOBS = ("--fp16-allreduce", "--fusion-threshold-mb", "--cycle-time-ms", "--hierarchical-allreduce")


def read_benchmark_args(args):
    """{framework, distribution, device, mixed_precision: the value given or None; horovod_knobs: [option given]}."""
    words = [str(word) for word in args or []]
    found = dict((key, None) for key in VALUED.values())
    found.update(mixed_precision=None, horovod_knobs=[])
    for index, word in enumerate(words):
        option, has_value, value = word.partition("=")
        following = words[index + 1] if index + 1 < len(words) else None
        if option in VALUED:
            found[VALUED[option]] = value if has_value else following
        elif option == MIXED_PRECISION:
            takes_next = following is not None and not following.startswith("-")
            found["mixed_precision"] = value if has_value else (following if takes_next else MIXED_PRECISION_ALONE)
        elif option in HOROVOD_KNOBS:
            found["horovod_knobs"].append(option)
    return found
