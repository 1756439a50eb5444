# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One pass over a log's lines into a TrainingLog. Nothing here judges the run: ``verdict`` does.

Cheap prefix tests pick the few expressions a line can match before any of them runs: a long run's
log is millions of per-rank iteration lines, and each must cost only what reading it needs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import math
import re

from ansible_collections.gpuops.cluster.plugins.module_utils.training import formats
from ansible_collections.gpuops.cluster.plugins.module_utils.training.demux import Demultiplexer
from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError, quote_line
from ansible_collections.gpuops.cluster.plugins.module_utils.training.log import Series, TrainingLog
from ansible_collections.gpuops.cluster.plugins.module_utils.training.nccl import append_unique, parse_nccl_line
from ansible_collections.gpuops.cluster.plugins.module_utils.training.source import binary_error, decode_error

# No device delivers this many images per second: a figure above it is a unit or timer bug.
MAX_IMG_PER_SEC_PER_DEVICE = 1e7
_HOROVOD_PREFIXES = ("Iter #", "Img/sec", "Total img/sec on", "Number of", "Running")
_LAUNCHERS = ("mpirun", "mpiexec", "horovodrun")
# The bulk of a long run's log: one rank's iteration line, alone on its physical line under its
# mpirun tag. Read whole by one expression; anything else (a sign, nan, a second tag, a line split
# across tags) takes the general path, which refuses or joins it.
_FAST_RANK_ITER = re.compile(
    r"\[(?:\d+,)?(\d+)\]<stdout>:Rank (\d+)(?: on ([^\s:\[\x00]+))?:\s+Iter #(\d+):\s+(\d+(?:\.\d+)?) "
    r"img/sec per (GPU|CPU)[ \t]*\n?\Z"
)


class _Line(object):
    """Where a figure came from, for the messages that refuse it."""

    __slots__ = ("log", "number", "text")

    def __init__(self, log, number, text):
        self.log = log
        self.number = number
        self.text = text

    def refuse(self, problem):
        return TrainingReportError("line %d of %s: %s: %s" % (self.number, self.log.name, problem, quote_line(self.text)))

    def figure(self, text, devices=1):
        """A throughput figure, refused by line when it cannot be a measurement."""
        value = float(text)
        if not math.isfinite(value):
            raise self.refuse("the figure %s is not a number of images per second" % text)
        if value < 0:
            raise self.refuse("the figure %s is negative; images per second cannot be" % text)
        if value > MAX_IMG_PER_SEC_PER_DEVICE * devices:
            raise self.refuse("the figure %s is more than %.0e img/sec per device, beyond any device "
                              "(a unit or timer bug?)" % (text, MAX_IMG_PER_SEC_PER_DEVICE))
        return value

    def spread(self, text):
        """A '+-' figure: nan, inf and negative refused, no upper bound."""
        value = float(text)
        if not math.isfinite(value) or value < 0:
            raise self.refuse("the spread %s is not a positive number" % text)
        return value


def parse(text, name="content"):
    """Parse one log's text (for tests and small logs)."""
    return parse_lines(io.StringIO(text, newline=None), name)


def parse_lines(physical_lines, name="content"):
    """Read the physical lines once into a TrainingLog (which may hold no throughput at all)."""
    log = TrainingLog(name)
    demultiplexer = Demultiplexer()
    fast = _FAST_RANK_ITER.match
    number = 0
    try:
        for number, physical in enumerate(physical_lines, 1):
            if not demultiplexer.pending:
                match = fast(physical)
                if match and _add_iteration(log, match):
                    continue
            if "\x00" in physical:
                raise binary_error(name, number)
            for logical in demultiplexer.feed(number, physical):
                _read_line(log, logical)
    except UnicodeDecodeError as error:
        raise decode_error(name, number, error)
    demultiplexer.last_number = number
    for logical in demultiplexer.finish():
        _read_line(log, logical)
    return log


def _add_iteration(log, match):
    """A line of _FAST_RANK_ITER. Returns False for a figure beyond any device, for the general path
    to refuse by line."""
    tag, rank, host, iteration, figure, device = match.groups()
    value = float(figure)
    if value > MAX_IMG_PER_SEC_PER_DEVICE:
        return False
    log.line_count += 1
    if not log.tagged_ranks:
        log.add_source("tagged_output")
    log.tagged_ranks.add(int(tag))
    rank = int(rank)
    series = log.rank_iterations.get(rank)
    if series is None:
        series = log.rank_iterations[rank] = Series()
        log.set_device(device)
        log.add_source("per_rank")
    if host:
        log.rank_hosts[rank] = host
    series.add(int(iteration), value)
    return True


def _read_line(log, logical):
    number, rank, _stream, text, partial = logical
    log.line_count += 1
    if rank is not None:
        if not log.tagged_ranks:
            log.add_source("tagged_output")
        log.tagged_ranks.add(rank)
    if partial:
        log.partial_lines.append({"rank": rank, "text": text.strip()})
    body = text.rstrip()
    stripped = body.lstrip()
    if not stripped:
        return
    line = _Line(log, number, stripped)
    if stripped.startswith("Rank ") and _parse_rank_line(log, stripped, line):
        return
    if stripped.startswith("DLL") and _parse_dllogger_line(log, stripped, line):
        return
    if "NCCL" in stripped and parse_nccl_line(log, stripped, body):
        return
    if stripped.startswith(_HOROVOD_PREFIXES) and _parse_horovod_line(log, stripped, line):
        return
    if _parse_tf_cnn_line(log, body, rank, line) or _parse_wrapper_total(log, stripped, line):
        return
    if _parse_header_line(log, body, stripped):
        return
    _parse_other_line(log, stripped, line)


def _parse_rank_line(log, text, line):
    """The per-rank lines of this collection's benchmark. Returns True when the line was one."""
    match = formats.RANK_ITER.match(text)
    if match:
        rank = int(match.group(1))
        if match.group(2):
            log.rank_hosts[rank] = match.group(2)
        series = log.rank_iterations.get(rank)
        if series is None:
            series = log.rank_iterations[rank] = Series()
            log.set_device(match.group(5))
            log.add_source("per_rank")
        series.add(int(match.group(3)), line.figure(match.group(4)))
        return True
    for pattern, found in ((formats.RANK_SUMMARY, log.rank_summaries), (formats.RANK_COMPUTE, log.rank_compute)):
        match = pattern.match(text)
        if match:
            rank = int(match.group(1))
            if match.group(2):
                log.rank_hosts[rank] = match.group(2)
            found[rank] = (line.figure(match.group(4)), line.spread(match.group(5)))
            log.set_device(match.group(3))
            log.add_source("per_rank")
            return True
    return False


def _parse_horovod_line(log, text, line):
    iteration = formats.ITER.match(text)
    if iteration:
        log.iterations.add(int(iteration.group(1)), line.figure(iteration.group(2)))
        log.set_device(iteration.group(3))
        log.add_source("horovod_synthetic")
        return True
    per_device = formats.IMG_PER_DEVICE.match(text)
    if per_device:
        log.reported_per_device = (line.figure(per_device.group(2)), line.spread(per_device.group(3)))
        log.set_device(per_device.group(1))
        log.add_source("horovod_synthetic")
        return True
    total = formats.TOTAL.match(text)
    if total:
        size = int(total.group(1))
        log.reported_total = (size, line.figure(total.group(3), devices=max(size, 1)), line.spread(total.group(4)))
        log.set_device(total.group(2))
        log.add_source("horovod_synthetic")
        return True
    devices = formats.NUMBER_OF_DEVICES.match(text)
    if devices:
        log.device = devices.group(1)
        log.declared_size = int(devices.group(2))
        log.add_source("horovod_synthetic")
        return True
    if formats.WARMUP.match(text):
        log.warmup_started = True
        return True
    if formats.BENCHMARK_START.match(text):
        log.benchmark_started = True
        return True
    return False


def _parse_tf_cnn_line(log, text, rank, line):
    step = formats.TF_STEP.match(text)
    if step:
        series = log.tf_steps.get(rank)
        if series is None:
            series = log.tf_steps[rank] = Series()
        # A tf_cnn_benchmarks process may drive several devices: no per-device bound here.
        series.add(int(step.group(1)), line.figure(step.group(2), devices=float("inf")))
        log.tf_uncertainty[rank] = line.spread(step.group(3))
        log.add_source("tf_cnn_benchmarks")
        log.framework = "tensorflow"
        return True
    total = formats.TF_TOTAL.match(text)
    if total:
        value = line.figure(total.group(1), devices=float("inf"))
        if rank is None:
            log.tf_untagged_totals.append(value)
        else:
            log.tf_totals[rank] = value
        log.add_source("tf_cnn_benchmarks")
        return True
    return _parse_tf_header(log, text)


def _parse_tf_header(log, text):
    version = formats.TF_VERSION.match(text)
    if version:
        log.framework = "tensorflow"
        return True
    devices = formats.TF_DEVICES.match(text)
    if devices:
        log.tf_devices = [item.strip().strip("'\"") for item in devices.group(1).split(",") if item.strip()]
        if any("gpu" in item.lower() for item in log.tf_devices):
            log.set_device("GPU")
        elif log.tf_devices:
            log.set_device("CPU")
        return True
    return False


def _parse_wrapper_total(log, text, line):
    """A wrapper script's own summary of the run; two that disagree are refused, naming both lines."""
    total = formats.WRAPPER_TOTAL.match(text)
    if not total:
        return False
    value = line.figure(total.group(1), devices=float("inf"))
    if log.wrapper_total is not None and log.wrapper_total[0] != value:
        raise line.refuse("a second total, %s img/sec, contradicts the total %s img/sec on line %d"
                          % (total.group(1), log.wrapper_total[0], log.wrapper_total[1]))
    if log.wrapper_total is None:
        log.wrapper_total = (value, line.number)
    log.add_source("summary_line")
    return True


def _parse_dllogger_line(log, text, line):
    """DLLogger's total_ips, in its standard output or its JSON stream. Returns True when the line was DLLogger's."""
    if text.startswith(formats.DLLOGGER_JSON):
        try:
            entry = json.loads(text[len(formats.DLLOGGER_JSON):])
        except ValueError as error:
            raise line.refuse("a DLLogger line that is not JSON (%s)" % error)
        if not isinstance(entry, dict):
            raise line.refuse("a DLLogger line that is not a JSON object")
        data = entry.get("data") if isinstance(entry.get("data"), dict) else {}
        step = entry.get("step")
        if step == formats.DLLOGGER_PARAMETERS:
            _dllogger_parameters(log, data.items())
            return True
        figure = next((data[key] for key in ("train.total_ips", "total_ips") if key in data), None)
        if figure is None:
            return True
        summary = step in ((), [], "", None)
    else:
        match = formats.DLLOGGER_STDOUT.match(text)
        if not match:
            return False
        rest = match.group(1)
        if rest.startswith(formats.DLLOGGER_PARAMETERS):
            _dllogger_parameters(log, formats.DLLOGGER_PARAMETER.findall(rest))
            return True
        total = formats.DLLOGGER_TOTAL_IPS.search(rest)
        if not total:
            return True
        first_metric = formats.DLLOGGER_FIRST_METRIC.search(rest)
        summary = bool(formats.DLLOGGER_SUMMARY_STEP.match(rest[:first_metric.start()] if first_metric else ""))
        figure = total.group(1)
    value = line.figure(str(figure), devices=float("inf"))
    log.add_source("dllogger")
    if summary:
        log.dllogger_total = (value, line.number)
    else:
        log.dllogger_steps.add(len(log.dllogger_steps), value)
    return True


def _dllogger_parameters(log, parameters):
    """The model (arch) and the batch per GPU (batch_size) of the program's PARAMETER step, where the log has no other."""
    for name, value in parameters:
        if name == "arch" and log.model is None:
            log.model = str(value)
        elif name == "batch_size" and log.batch_size is None and str(value).isdigit():
            log.batch_size = int(value)


# Header lines that set one field of the log from their first group; tf_cnn_benchmarks' per-device
# batch is told apart by its indent.
_FIELDS = (
    (formats.MODEL, "model", str, False),
    (formats.TF_VARIABLES, "tf_variables", str, False),
    (formats.BATCH_PER_DEVICE, "batch_size", lambda text: int(float(text)), True),
)


def _parse_header_line(log, body, text):
    for pattern, field, convert, indented in _FIELDS:
        match = pattern.match(body if indented else text)
        if match:
            setattr(log, field, convert(match.group(1)))
            return True
    batch = formats.BATCH.match(text)
    if batch:
        # tf_cnn_benchmarks prints the global batch first, then the per-device one.
        if not batch.group(2) or log.batch_size is None:
            log.batch_size = int(batch.group(1))
        return True
    return False


def _parse_other_line(log, text, line):
    """Tracebacks, the launcher's own messages and command line, and hints of the framework."""
    if formats.TRACEBACK.match(text):
        log.tracebacks += 1
        return
    if "mpi" in text or "MPI" in text or "Primary job" in text:
        abort = formats.MPI_ABORT.search(text)
        if abort:
            append_unique(log.launcher_errors, text)
            return
    if log.launch_ranks is None and any(name in text for name in _LAUNCHERS):
        _parse_launch_command(log, text, line)
    if log.framework:
        return
    lowered = text.lower()
    if "tensorflow" in lowered or "keras" in lowered:
        log.framework = "tensorflow"
    elif "torch" in lowered:
        log.framework = "pytorch"


def _parse_launch_command(log, text, line):
    command = formats.LAUNCH_COMMAND.search(text)
    if not command:
        return
    count = command.group(1)
    # An echoed template ('-np $NP') says nothing; a number that is not a rank count is refused.
    if count.startswith(("$", "{")):
        return
    if not count.isdigit() or int(count) < 1:
        raise line.refuse("the launcher's rank count %r is not a whole number of ranks, 1 or more" % count)
    log.launch_ranks = (int(count), line.number)
