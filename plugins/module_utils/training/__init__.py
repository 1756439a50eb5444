# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Judging a distributed training benchmark from its log, one concern per file:

* ``source``: the log's physical lines from a file or a string, refusing binary or non-UTF-8 input;
* ``demux``: launcher tags (``mpirun --tag-output``, ``horovodrun``) into logical lines per rank;
* ``formats`` and ``nccl``: the line formats understood; ``parser``: the one pass over the lines;
* ``stats``, ``ranks``, ``verdict``, ``thresholds``: figures, rank counts and the verdict;
* ``presets``: named floors derived from published figures, and which of them a run is held to;
* ``summary``: the printable lines; ``chart`` and ``report_file``: the PNG and the JSON file;
* ``run``: what the training_report module does, in order.
"""
