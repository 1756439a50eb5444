# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Mean, spread and median of throughput figures, with Horovod's conventions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

# Horovod prints mean +- 1.96 standard deviations of its per-iteration figures; the same convention
# is used for every spread computed here so that the two can be compared.
SPREAD_Z = 1.96


def round_figure(value, digits=3):
    if value is None:
        return None
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return round(float(value), digits)


def mean(values):
    return sum(values) / len(values)


def spread(values):
    """SPREAD_Z population standard deviations, as Horovod computes its '+-' figure. values may be
    an array('d') of millions of iterations: one pass for the mean, one for the squares."""
    if len(values) < 2:
        return 0.0
    average = mean(values)
    return SPREAD_Z * math.sqrt(sum((value - average) ** 2 for value in values) / len(values))


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def pooled(entries):
    """Mean over ranks and a pooled spread: within-rank and between-rank variation together."""
    means = [entry["img_per_sec"] for entry in entries]
    spreads = [entry["spread"] for entry in entries]
    within = mean([value ** 2 for value in spreads])
    between = spread(means) ** 2
    return mean(means), math.sqrt(within + between)
