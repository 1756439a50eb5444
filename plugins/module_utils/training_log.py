# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse the output of a distributed training benchmark into plain facts.

Understood, in any mix within one log:

* Horovod's synthetic benchmarks (PyTorch and TensorFlow): ``Model:``, ``Batch size:``,
  ``Number of GPUs:``/``Number of CPUs:``, ``Iter #N: X img/sec per GPU``, ``Img/sec per GPU: X +-Y``
  and ``Total img/sec on N GPU(s): X +-Y``. Horovod prints these on rank 0 only.
* The per-rank lines of this collection's benchmark program (see ``PER_RANK_FORMAT``), printed by
  every rank, because Horovod's total is rank 0's figure times the world size.
* tf_cnn_benchmarks: its header, the per-step ``images/sec: X +/- Y (jitter = Z)`` lines and
  ``total images/sec: X``.
* Output tagged by ``mpirun --tag-output`` (``[1,0]<stdout>:``) or by ``horovodrun --gloo``
  (``[0]<stdout>:``, optionally after a timestamp), including a line whose pieces arrive under
  several tags, interleaved with other ranks.
* ``NCCL_DEBUG=INFO`` lines: version, network, interfaces, the transport of every ring or channel
  connection and the communicators that completed their initialisation.

Nothing here judges the run: ``training_verdict`` does that from a ``TrainingLog``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# The lines this collection's benchmark prints on every rank, in addition to Horovod's own lines
# (which only rank 0 prints). Host is optional. Examples:
#   Rank 3 on node-b: Iter #0: 97.1 img/sec per GPU
#   Rank 3 on node-b: Img/sec per GPU: 97.4 +-1.2
#   Rank 3 on node-b: Compute img/sec per GPU: 99.0 +-0.8
#   Rank 3: Img/sec per CPU: 4.2 +-0.3
# "Img/sec" is the rank's wall-clock throughput, waits for other ranks included: these add up to
# the run's total. "Compute img/sec" times only the rank's own forward and backward passes: in
# synchronous training every rank waits for the slowest, so only this figure tells which one it is.
PER_RANK_FORMAT = (
    "Rank <R>[ on <host>]: Iter #<N>: <X> img/sec per <GPU|CPU>, "
    "Rank <R>[ on <host>]: Img/sec per <GPU|CPU>: <X> +-<Y>, "
    "Rank <R>[ on <host>]: Compute img/sec per <GPU|CPU>: <X> +-<Y>"
)

EXPECTED_FORMATS = (
    "Horovod synthetic benchmark lines ('Iter #N: X img/sec per GPU', 'Img/sec per GPU: X +-Y', "
    "'Total img/sec on N GPU(s): X +-Y'), per-rank lines ('%s') or tf_cnn_benchmarks lines "
    "('images/sec: X +/- Y (jitter = Z)', 'total images/sec: X')" % PER_RANK_FORMAT
)

_NUMBER = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf)"

# mpirun --tag-output: [jobid,rank]<stream>: ; horovodrun --gloo: [rank]<stream>: with an optional
# time.asctime() stamp in front. The tag can start anywhere in a physical line: OpenMPI forwards a
# write that has no newline as it is, so the next tag is glued to it.
_TAG = re.compile(
    r"(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})?"
    r"\[(?:\d+,)?(\d+)\]<(stdout|stderr|stddiag)>:"
)

_MODEL = re.compile(r"^Model:\s+(\S+)")
_BATCH = re.compile(r"^Batch size:\s+(\d+)(\s+global)?\s*$")
_BATCH_PER_DEVICE = re.compile(r"^\s+(\d+(?:\.\d+)?) per device\s*$")
_NUMBER_OF_DEVICES = re.compile(r"^Number of (GPU|CPU)s:\s+(\d+)")
_WARMUP = re.compile(r"^Running warmup\.\.\.")
_BENCHMARK_START = re.compile(r"^Running benchmark")
_ITER = re.compile(r"^Iter #(\d+):\s+" + _NUMBER + r" img/sec per (GPU|CPU)")
_IMG_PER_DEVICE = re.compile(r"^Img/sec per (GPU|CPU):\s+" + _NUMBER + r"\s*\+-\s*" + _NUMBER)
_TOTAL = re.compile(
    r"^Total img/sec on (\d+) (GPU|CPU)\(s\):\s+" + _NUMBER + r"\s*\+-\s*" + _NUMBER
)
_RANK_PREFIX = r"^Rank (\d+)(?: on ([^\s:]+))?:\s+"
_RANK_ITER = re.compile(_RANK_PREFIX + r"Iter #(\d+):\s+" + _NUMBER + r" img/sec per (GPU|CPU)")
_RANK_SUMMARY = re.compile(
    _RANK_PREFIX + r"Img/sec per (GPU|CPU):\s+" + _NUMBER + r"\s*\+-\s*" + _NUMBER
)
_RANK_COMPUTE = re.compile(
    _RANK_PREFIX + r"Compute img/sec per (GPU|CPU):\s+" + _NUMBER + r"\s*\+-\s*" + _NUMBER
)

_TF_VERSION = re.compile(r"^TensorFlow:\s+(\S+)")
_TF_DEVICES = re.compile(r"^Devices:\s+\[(.*)\]")
_TF_VARIABLES = re.compile(r"^Variables:\s+(\S+)")
_TF_STEP = re.compile(
    r"^(\d+)\s+images/sec:\s+" + _NUMBER + r"\s+\+/-\s+" + _NUMBER
    + r"\s+\(jitter = " + _NUMBER + r"\)"
)
_TF_TOTAL = re.compile(r"^total images/sec:\s+" + _NUMBER)

_NCCL_PREFIX = re.compile(r"^(?P<host>[^\s:]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] NCCL (?P<level>INFO|WARN) (?P<body>.*)$")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda(\d+(?:\.\d+)*))?")
_NCCL_NETWORK = re.compile(r"^Using network (.+?)\s*$")
_NCCL_NET_IB = re.compile(r"^NET/IB\s*: Using (.*)$")
_NCCL_NET_SOCKET = re.compile(r"^NET/Socket\s*: Using (\[.*)$")
_NCCL_BOOTSTRAP = re.compile(r"^Bootstrap\s*: Using (\S+)")
_NCCL_DEVICE = re.compile(r"\[(\d+)\]([^\s\[;]+)")
_NCCL_CONNECTION = re.compile(
    r"^(?:Channel|Ring) (\d+)(?:/(\d+))?\s*:\s*(\d+)(?:\[[0-9a-fA-Fx]+\])?\s*->\s*(\d+)(?:\[[0-9a-fA-Fx]+\])?"
    r"(?:\s*\[(send|receive)\])?\s+via\s+(.+?)\s*$"
)
_NCCL_INIT_COMPLETE = re.compile(
    r"comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) cudaDev (\d+).*?(?:commId (0x[0-9a-fA-F]+) )?- Init COMPLETE"
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):")
_MPI_ABORT = re.compile(
    r"(mpirun noticed that process rank (\d+) .*exited on signal.*"
    r"|Primary job\s+terminated normally, but \d+ process returned"
    r"|mpirun detected that one or more processes exited with non-zero status.*"
    r"|MPI_ABORT was invoked on rank (\d+).*)"
)


def _number(text):
    return float(text)


class LogLine(object):
    """One logical line of output and the rank (None when untagged) that printed it."""

    __slots__ = ("rank", "stream", "text", "partial")

    def __init__(self, rank, stream, text, partial=False):
        self.rank = rank
        self.stream = stream
        self.text = text
        self.partial = partial

    def __repr__(self):
        return "LogLine(%r, %r, %r)" % (self.rank, self.stream, self.text)


def demultiplex(text):
    """Split launcher output into logical lines, joining pieces of a line that mpirun forwarded
    under several tags (possibly interleaved with other ranks' output).

    Returns a list of LogLine; a piece still waiting for its newline when the log ends is
    returned with partial=True.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = []
    pending = {}
    order = []

    def emit_untagged(segment):
        for piece in segment.split("\n"):
            if piece.strip():
                lines.append(LogLine(None, None, piece))

    def feed(owner, segment):
        if owner is None:
            emit_untagged(segment)
            return
        newline = segment.find("\n")
        if newline < 0:
            if owner not in pending:
                order.append(owner)
            pending[owner] = pending.get(owner, "") + segment
            return
        complete = pending.pop(owner, "") + segment[:newline]
        if owner in order:
            order.remove(owner)
        lines.append(LogLine(owner[0], owner[1], complete))
        # OpenMPI tags every line it forwards: text after the newline and before the next tag
        # was printed by the launcher itself (or a shell), not by this rank.
        emit_untagged(segment[newline + 1:])

    owner = None
    position = 0
    for match in _TAG.finditer(text):
        feed(owner, text[position:match.start()])
        owner = (int(match.group(1)), match.group(2))
        position = match.end()
    feed(owner, text[position:])
    for key in order:
        if pending.get(key, "").strip():
            lines.append(LogLine(key[0], key[1], pending[key], partial=True))
    return lines


class TrainingLog(object):
    """Everything read from one log; plain data for training_verdict."""

    def __init__(self):
        self.sources = []
        self.framework = None
        self.model = None
        self.batch_size = None
        self.device = None
        self.declared_size = None
        self.benchmark_started = False
        self.warmup_started = False
        # Horovod's rank-0 lines.
        self.iterations = []
        self.reported_per_device = None
        self.reported_total = None
        # This collection's per-rank lines.
        self.rank_iterations = {}
        self.rank_summaries = {}
        self.rank_compute = {}
        self.rank_hosts = {}
        # tf_cnn_benchmarks, keyed by rank (None when untagged).
        self.tf_devices = None
        self.tf_variables = None
        self.tf_steps = {}
        self.tf_totals = {}
        self.tf_untagged_totals = []
        # Launcher.
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

    @property
    def has_throughput(self):
        return bool(
            self.iterations or self.reported_per_device or self.reported_total
            or self.rank_iterations or self.rank_summaries or self.tf_steps or self.tf_totals
            or self.tf_untagged_totals
        )


def _append_unique(items, item):
    if item not in items:
        items.append(item)


def _set_device(log, device):
    if device and log.device is None:
        log.device = device


def _parse_nccl(log, line, body):
    log.nccl_seen = True
    log.add_source("nccl")
    network = _NCCL_NETWORK.match(body)
    if network:
        _append_unique(log.nccl_networks, network.group(1))
        return
    ib = _NCCL_NET_IB.match(body)
    if ib:
        devices, _sep, oob = ib.group(1).partition(";")
        for _index, name in _NCCL_DEVICE.findall(devices):
            device, _colon, rest = name.partition(":")
            port, _slash, link = rest.partition("/")
            _append_unique(log.nccl_interfaces, {
                "net": "IB", "name": device, "port": int(port) if port.isdigit() else None,
                "link_layer": link or None,
            })
        oob = oob.replace("OOB", "").strip()
        if oob:
            _append_unique(log.nccl_bootstrap, oob.split("<")[0])
        return
    socket = _NCCL_NET_SOCKET.match(body)
    if socket:
        for _index, name in _NCCL_DEVICE.findall(socket.group(1)):
            interface, _colon, address = name.partition(":")
            _append_unique(log.nccl_interfaces, {
                "net": "Socket", "name": interface, "address": address.split("<")[0] or None,
            })
        return
    bootstrap = _NCCL_BOOTSTRAP.match(body)
    if bootstrap:
        # NCCL 2.7 wrote "[0]eth0:10.0.0.1<0>", later versions "eth0:10.0.0.1<0>".
        _append_unique(log.nccl_bootstrap, re.sub(r"^\[\d+\]", "", bootstrap.group(1)).split("<")[0])
        return
    connection = _NCCL_CONNECTION.match(body)
    if connection:
        detail = connection.group(6)
        kind = classify_transport(detail)
        log.transports[kind] = log.transports.get(kind, 0) + 1
        log.transport_details[detail] = log.transport_details.get(detail, 0) + 1
        return
    init = _NCCL_INIT_COMPLETE.search(body)
    if init:
        # Every process has its own comm pointer; one communicator is what they share: its commId
        # where NCCL prints it (2.12 and later), else its size.
        key = init.group(5) or "nranks=%s" % init.group(3)
        comm = log.nccl_comms.setdefault(key, {"nranks": int(init.group(3)), "ranks": {}})
        comm["ranks"][int(init.group(2))] = line.get("host")


def classify_transport(detail):
    """Name the transport of an NCCL connection from the text after 'via'.

    'NET/IB/0/GDRDMA' and 'NET/IBext_v8/4' give NET/IB, 'NET/Socket/1' gives NET/Socket,
    'P2P/IPC/read', 'P2P/CUMEM' and 'P2P/direct pointer' give P2P, 'SHM/direct/direct' gives SHM.
    """
    head, _slash, rest = detail.partition("/")
    if head == "NET":
        name = re.split(r"/\d", rest, maxsplit=1)[0]
        name = re.sub(r"ext_v\d+$", "", name)
        return "NET/" + name
    return head.split()[0] if head.split() else detail


def _parse_rank_line(log, text, tagged_rank):
    """The per-rank lines of this collection's benchmark. Returns True when the line was one."""
    rank_iter = _RANK_ITER.match(text)
    if rank_iter:
        rank = int(rank_iter.group(1))
        if rank_iter.group(2):
            log.rank_hosts[rank] = rank_iter.group(2)
        log.rank_iterations.setdefault(rank, []).append(
            (int(rank_iter.group(3)), _number(rank_iter.group(4)))
        )
        _set_device(log, rank_iter.group(5))
        log.add_source("per_rank")
        return True
    summary = _RANK_SUMMARY.match(text)
    if summary:
        rank = int(summary.group(1))
        if summary.group(2):
            log.rank_hosts[rank] = summary.group(2)
        log.rank_summaries[rank] = (_number(summary.group(4)), _number(summary.group(5)))
        _set_device(log, summary.group(3))
        log.add_source("per_rank")
        return True
    compute = _RANK_COMPUTE.match(text)
    if compute:
        rank = int(compute.group(1))
        if compute.group(2):
            log.rank_hosts[rank] = compute.group(2)
        log.rank_compute[rank] = (_number(compute.group(4)), _number(compute.group(5)))
        _set_device(log, compute.group(3))
        log.add_source("per_rank")
        return True
    return False


def _parse_horovod_line(log, text):
    iteration = _ITER.match(text)
    if iteration:
        log.iterations.append((int(iteration.group(1)), _number(iteration.group(2))))
        _set_device(log, iteration.group(3))
        log.add_source("horovod_synthetic")
        return True
    per_device = _IMG_PER_DEVICE.match(text)
    if per_device:
        log.reported_per_device = (_number(per_device.group(2)), _number(per_device.group(3)))
        _set_device(log, per_device.group(1))
        log.add_source("horovod_synthetic")
        return True
    total = _TOTAL.match(text)
    if total:
        log.reported_total = (int(total.group(1)), _number(total.group(3)), _number(total.group(4)))
        _set_device(log, total.group(2))
        log.add_source("horovod_synthetic")
        return True
    devices = _NUMBER_OF_DEVICES.match(text)
    if devices:
        log.device = devices.group(1)
        log.declared_size = int(devices.group(2))
        log.add_source("horovod_synthetic")
        return True
    if _WARMUP.match(text):
        log.warmup_started = True
        return True
    if _BENCHMARK_START.match(text):
        log.benchmark_started = True
        return True
    return False


def _parse_tf_cnn_line(log, text, rank):
    step = _TF_STEP.match(text)
    if step:
        log.tf_steps.setdefault(rank, []).append(
            (int(step.group(1)), _number(step.group(2)), _number(step.group(3)))
        )
        log.add_source("tf_cnn_benchmarks")
        log.framework = "tensorflow"
        return True
    total = _TF_TOTAL.match(text)
    if total:
        if rank is None:
            log.tf_untagged_totals.append(_number(total.group(1)))
        else:
            log.tf_totals[rank] = _number(total.group(1))
        log.add_source("tf_cnn_benchmarks")
        return True
    version = _TF_VERSION.match(text)
    if version:
        log.framework = "tensorflow"
        return True
    devices = _TF_DEVICES.match(text)
    if devices:
        log.tf_devices = [item.strip().strip("'\"") for item in devices.group(1).split(",") if item.strip()]
        if any("gpu" in item.lower() for item in log.tf_devices):
            _set_device(log, "GPU")
        elif log.tf_devices:
            _set_device(log, "CPU")
        return True
    variables = _TF_VARIABLES.match(text)
    if variables:
        log.tf_variables = variables.group(1)
        return True
    per_device = _BATCH_PER_DEVICE.match(text)
    if per_device:
        log.batch_size = int(float(per_device.group(1)))
        return True
    return False


def _parse_header_line(log, text):
    model = _MODEL.match(text)
    if model:
        log.model = model.group(1)
        return True
    batch = _BATCH.match(text)
    if batch:
        # tf_cnn_benchmarks prints the global batch first, then the per-device one.
        if not batch.group(2) or log.batch_size is None:
            log.batch_size = int(batch.group(1))
        return True
    return False


def _guess_framework(log, text):
    if log.framework:
        return
    lowered = text.lower()
    if "tensorflow" in lowered or "keras" in lowered:
        log.framework = "tensorflow"
    elif "torch" in lowered:
        log.framework = "pytorch"


def parse(text):
    """Parse one log's text into a TrainingLog (which may hold no throughput at all)."""
    log = TrainingLog()
    for line in demultiplex(text):
        log.line_count += 1
        if line.rank is not None:
            log.tagged_ranks.add(line.rank)
            log.add_source("tagged_output")
        if line.partial:
            log.partial_lines.append({"rank": line.rank, "text": line.text.strip()})
        body = line.text.rstrip()
        stripped = body.strip()
        nccl = _NCCL_PREFIX.match(stripped)
        if nccl:
            _append_unique(log.nccl_hosts, nccl.group("host"))
        version = _NCCL_VERSION.search(body)
        if version:
            log.nccl_seen = True
            log.add_source("nccl")
            log.nccl_version = version.group(1)
            log.nccl_cuda = version.group(2)
            continue
        if nccl:
            if nccl.group("level") == "WARN":
                log.nccl_seen = True
                log.nccl_warnings.append(nccl.group("body").strip())
                continue
            _parse_nccl(log, {"host": nccl.group("host")}, nccl.group("body"))
            continue
        if _parse_rank_line(log, stripped, line.rank):
            continue
        if _parse_horovod_line(log, stripped):
            continue
        if _parse_tf_cnn_line(log, body, line.rank):
            continue
        if _parse_header_line(log, stripped):
            continue
        if _TRACEBACK.match(stripped):
            log.tracebacks += 1
            continue
        abort = _MPI_ABORT.search(stripped)
        if abort:
            _append_unique(log.launcher_errors, stripped)
            continue
        _guess_framework(log, stripped)
    return log
