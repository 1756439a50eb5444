#!/usr/bin/env python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict on long logs: our whole `ansible localhost -m gpuops.cluster.training_report` process
side by side with a one-line awk that sums the same throughput lines, for logs of 10^4 to 2x10^6 lines.

Each log is what the collection's benchmark program (roles/training_benchmark/files/gpuops_benchmark.py)
prints on every rank, through `mpirun --tag-output`, 8 ranks interleaved. Run from the repository root
with the virtualenv active (tools/bootstrap.sh links the collection):

    python bench/verdict_stream.py [--sizes 10000 100000 1000000 2000000] [--ranks 8] [--runs 3]

Prints, per size: the log's size, our median time and peak RSS, awk's, and the ratio of the times.
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from gpuops_testlib.ansible_run import ansible_env, program  # noqa: E402  (tests/ on sys.path)

AWK_SUM = "/Iter #/ && /img\\/sec per/ {sum += $(NF-3); n++} END {printf \"%.1f over %d lines\\n\", sum, n}"


def write_log(path, lines, ranks, seed=7):
    """A log of about `lines` lines: a header, ranks x iterations tagged per-rank lines, each rank's
    summary, Horovod's rank-0 total."""
    generator = random.Random(seed)
    iterations = max(1, (lines - 4 - 2 * ranks) // ranks)
    hosts = ["node%d" % (1 + rank * 2 // ranks) for rank in range(ranks)]
    with open(path, "w") as handle:
        handle.write("mpirun -np %d --tag-output python gpuops_benchmark.py\n" % ranks)
        handle.write("[1,0]<stdout>:Model: resnet50\n[1,0]<stdout>:Batch size: 32\n")
        handle.write("[1,0]<stdout>:Number of CPUs: %d\n" % ranks)
        for number in range(iterations):
            handle.write("".join("[1,%d]<stdout>:Rank %d on %s: Iter #%d: %.1f img/sec per CPU\n" % (
                rank, rank, hosts[rank], number, 90 + generator.random() * 10) for rank in range(ranks)))
        for rank in range(ranks):
            handle.write("[1,%d]<stdout>:Rank %d on %s: Img/sec per CPU: 95.0 +-5.7\n" % (rank, rank, hosts[rank]))
            handle.write("[1,%d]<stdout>:Rank %d on %s: Compute img/sec per CPU: 99.0 +-2.0\n" % (rank, rank, hosts[rank]))
        handle.write("[1,0]<stdout>:Total img/sec on %d CPU(s): %.1f +-%.1f\n" % (ranks, 95.0 * ranks, 5.7 * ranks))


def measure(command, env):
    """(wall seconds, peak RSS in MB of the largest process) of one run of command."""
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    if status != 0:
        raise SystemExit("%s failed: %s" % (" ".join(command), process.stderr.read().decode("utf-8", "replace")))
    return elapsed, usage.ru_maxrss / 1024.0


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10 ** 4, 10 ** 5, 10 ** 6, 2 * 10 ** 6])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = ansible_env(json_output=False)
    with open("/proc/loadavg") as handle:
        print("load average before: %s" % " ".join(handle.read().split()[:3]))
    print("%10s %8s %10s %9s %10s %9s %8s" % ("lines", "MB", "ours s", "ours MB", "awk s", "awk MB", "ratio"))
    workdir = tempfile.mkdtemp(prefix="verdict-stream.")
    for size in args.sizes:
        log = os.path.join(workdir, "run-%d.log" % size)
        write_log(log, size, args.ranks)
        ours_command = [program("ansible"), "localhost", "-m", "gpuops.cluster.training_report",
                        "-a", "src=%s report_path=%s" % (log, os.path.join(workdir, "run-%d.json" % size))]
        awk_command = ["awk", AWK_SUM, log]
        ours, awk, ratios = [], [], []
        for _run in range(args.runs):
            ours.append(measure(ours_command, env))
            awk.append(measure(awk_command, env))
            ratios.append(ours[-1][0] / awk[-1][0])
        print("%10d %8.1f %10.2f %9.0f %10.2f %9.0f %8.1f" % (
            size, os.path.getsize(log) / 1e6, median([t for t, _m in ours]), median([m for _t, m in ours]),
            median([t for t, _m in awk]), median([m for _t, m in awk]), median(ratios)))
        os.unlink(log)
    with open("/proc/loadavg") as handle:
        print("load average after: %s" % " ".join(handle.read().split()[:3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
