# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The benchmark lines understood, as regular expressions (NCCL's are in ``nccl``).

* Horovod's synthetic benchmarks (PyTorch and TensorFlow): ``Model:``, ``Batch size:``,
  ``Number of GPUs:``/``Number of CPUs:``, ``Iter #N: X img/sec per GPU``, ``Img/sec per GPU: X +-Y``
  and ``Total img/sec on N GPU(s): X +-Y``. Horovod prints these on rank 0 only.
* The per-rank lines of this collection's benchmark program (see ``PER_RANK_FORMAT``), printed by
  every rank, because Horovod's total is rank 0's figure times the world size.
* tf_cnn_benchmarks: its header, the per-step ``images/sec: X +/- Y (jitter = Z)`` lines and
  ``total images/sec: X``.
* A wrapper script's own summary line: ``Total images/sec = X``, ``total img/sec: X img/sec``.
* DLLogger's lines (NVIDIA's training programs, such as the ResNet-50 v1.5 benchmark), on rank 0: its standard
  output ``DLL <time> - <step> train.total_ips : X images/s ...`` and its JSON stream ``DLLL {...}``, whose
  ``total_ips`` is the whole run's images per second; the step without numbers is the run's summary.
* The launcher's command line echoed in the log (``mpirun -np N``, ``horovodrun -np N``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# The lines this collection's benchmark prints on every rank, in addition to Horovod's own lines
# (which only rank 0 prints). Host is optional. Examples:
#   Rank 3 on node-b: Iter #0: 97.1 img/sec per GPU
#   Rank 3 on node-b: Img/sec per GPU: 97.4 +-1.2
#   Rank 3 on node-b: Compute img/sec per GPU: 99.0 +-0.8
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
    "'Total img/sec on N GPU(s): X +-Y'), per-rank lines ('%s'), tf_cnn_benchmarks lines "
    "('images/sec: X +/- Y (jitter = Z)', 'total images/sec: X'), a summary line ('Total images/sec = X') or "
    "DLLogger's total_ips ('DLL <time> - <step> train.total_ips : X images/s', 'DLLL {...}')"
    % PER_RANK_FORMAT
)

# A sign, nan and inf are matched so that a broken figure is refused by name instead of skipped.
NUMBER = r"([-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|(?i:nan|inf(?:inity)?)))"

MODEL = re.compile(r"^Model:\s+(\S+)")
BATCH = re.compile(r"^Batch size:\s+(\d+)(\s+global)?\s*$")
BATCH_PER_DEVICE = re.compile(r"^\s+(\d+(?:\.\d+)?) per device\s*$")
NUMBER_OF_DEVICES = re.compile(r"^Number of (GPU|CPU)s:\s+(\d+)")
WARMUP = re.compile(r"^Running warmup\.\.\.")
BENCHMARK_START = re.compile(r"^Running benchmark")
ITER = re.compile(r"^Iter #(\d+):\s+" + NUMBER + r" img/sec per (GPU|CPU)")
IMG_PER_DEVICE = re.compile(r"^Img/sec per (GPU|CPU):\s+" + NUMBER + r"\s*\+-\s*" + NUMBER)
TOTAL = re.compile(r"^Total img/sec on (\d+) (GPU|CPU)\(s\):\s+" + NUMBER + r"\s*\+-\s*" + NUMBER)
RANK_PREFIX = r"^Rank (\d+)(?: on ([^\s:]+))?:\s+"
RANK_ITER = re.compile(RANK_PREFIX + r"Iter #(\d+):\s+" + NUMBER + r" img/sec per (GPU|CPU)")
RANK_SUMMARY = re.compile(RANK_PREFIX + r"Img/sec per (GPU|CPU):\s+" + NUMBER + r"\s*\+-\s*" + NUMBER)
RANK_COMPUTE = re.compile(RANK_PREFIX + r"Compute img/sec per (GPU|CPU):\s+" + NUMBER + r"\s*\+-\s*" + NUMBER)

TF_VERSION = re.compile(r"^TensorFlow:\s+(\S+)")
TF_DEVICES = re.compile(r"^Devices:\s+\[(.*)\]")
TF_VARIABLES = re.compile(r"^Variables:\s+(\S+)")
TF_STEP = re.compile(r"^(\d+)\s+images/sec:\s+" + NUMBER + r"\s+\+/-\s+" + NUMBER + r"\s+\(jitter = " + NUMBER + r"\)")
TF_TOTAL = re.compile(r"^total images/sec:\s+" + NUMBER + r"\s*$")
# A wrapper's summary of the whole run, in any case, '=' or ':', with or without a unit after it.
WRAPPER_TOTAL = re.compile(r"^total (?:images|img)/sec\s*[:=]\s*" + NUMBER + r"(?:\s*(?:images|img)/s(?:ec)?)?\s*$", re.I)

# DLLogger's standard output, "DLL <date> <time> - <step> <metric> : <value> <unit> ...", whose step ends where the
# first metric starts; its JSON stream, "DLLL {...}". A step without numbers ("()", "[]", "Summary:", nothing) is
# the run's summary.
DLLOGGER_STDOUT = re.compile(r"^DLL \S+ \S+ - (.*)$")
DLLOGGER_FIRST_METRIC = re.compile(r"\S+ : ")
DLLOGGER_TOTAL_IPS = re.compile(r"(?:^|\s)(?:train\.)?total_ips\s*:\s*" + NUMBER)
DLLOGGER_JSON = "DLLL "
# The program's arguments, logged once under the step PARAMETER: the model and the batch per GPU.
DLLOGGER_PARAMETERS = "PARAMETER"
DLLOGGER_PARAMETER = re.compile(r"(?:^|\s)(arch|batch_size)\s*:\s*(\S+)")
DLLOGGER_SUMMARY_STEP = re.compile(r"^(?:\(\)|\[\]|Summary:?)?\s*$")
TRACEBACK = re.compile(r"^Traceback \(most recent call last\):")
MPI_ABORT = re.compile(
    r"(mpirun noticed that process rank (\d+) .*exited on signal.*"
    r"|Primary job\s+terminated normally, but \d+ process returned"
    r"|mpirun detected that one or more processes exited with non-zero status.*"
    r"|MPI_ABORT was invoked on rank (\d+).*)"
)
# The launcher's command line, as a wrapper or `set -x` echoes it: mpirun -np 8 ..., horovodrun -n 4 ...
LAUNCH_COMMAND = re.compile(r"(?:^|[\s/+$])(?:mpirun|mpiexec|horovodrun)\s(?:.*?\s)?(?:-np|-n|--np|--num-proc)[\s=]+(\S+)")
