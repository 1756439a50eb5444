# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What one pass over a log found: plain data for the verdict, compact enough for millions of lines."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from array import array


class Series(object):
    """Iteration numbers and their img/sec figures, in two typed arrays: 16 bytes a point where a
    list of tuples takes about 100."""

    __slots__ = ("numbers", "values")

    def __init__(self):
        self.numbers = array("q")
        self.values = array("d")

    def add(self, number, value):
        self.numbers.append(number)
        self.values.append(value)

    def points(self):
        return list(zip(self.numbers, self.values))

    def __len__(self):
        return len(self.values)


class TrainingLog(object):
    """Everything read from one log."""

    def __init__(self, name="content"):
        self.name = name
        self.sources = []
        # As printed in the header lines; None until then.
        self.framework = self.model = self.batch_size = self.device = self.declared_size = None
        self.benchmark_started = self.warmup_started = False
        # Horovod's rank-0 lines.
        self.iterations = Series()
        self.reported_per_device = None
        self.reported_total = None
        # This collection's per-rank lines: rank -> Series, (mean, spread), (mean, spread), host.
        self.rank_iterations = {}
        self.rank_summaries = {}
        self.rank_compute = {}
        self.rank_hosts = {}
        # tf_cnn_benchmarks, keyed by rank (None when untagged): the running mean per step, and the
        # last step's uncertainty.
        self.tf_devices = None
        self.tf_variables = None
        self.tf_steps = {}
        self.tf_uncertainty = {}
        self.tf_totals = {}
        self.tf_untagged_totals = []
        # A wrapper's own 'Total images/sec = X': (value, line number).
        self.wrapper_total = None
        # DLLogger's total_ips: the summary's (value, line number), and the steps' figures before it.
        self.dllogger_total = None
        self.dllogger_steps = Series()
        # Launcher: the rank count of its echoed command line, as (ranks, line number).
        self.launch_ranks = None
        self.tagged_ranks = set()
        self.partial_lines = []
        self.tracebacks = 0
        self.launcher_errors = []
        # NCCL.
        self.nccl_seen = False
        self.nccl_version = None
        self.nccl_cuda = None
        self.nccl_networks = []
        self.nccl_interfaces = []
        self.nccl_bootstrap = []
        self.nccl_hosts = []
        self.transports = {}
        self.transport_details = {}
        self.nccl_comms = {}
        self.nccl_warnings = []
        self.line_count = 0

    def add_source(self, name):
        if name not in self.sources:
            self.sources.append(name)

    def set_device(self, device):
        if device and self.device is None:
            self.device = device
