# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""training_report's verdict on one benchmark log, without Ansible: bench/gpu_benchmark.sh runs it on a machine
that has only Python. The collection's own code judges the log (plugins/module_utils/training), imported from
this checkout.

    python3 bench/gpu_benchmark_report.py LOG REPORT_JSON RANKS NAME

Writes REPORT_JSON (the report the training_report module writes), prints the verdict's lines, then one row
for the summary table: NAME, img/sec per device, total img/sec, PASSED or FAILED. Exits 1 when the run failed.
"""

from __future__ import absolute_import, division, print_function

import os
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_collection(root):
    """The checkout as ansible_collections.gpuops.cluster, through a link in the scratch folder root."""
    os.makedirs(os.path.join(root, "ansible_collections", "gpuops"))
    os.symlink(REPO_ROOT, os.path.join(root, "ansible_collections", "gpuops", "cluster"))
    sys.path.insert(0, root)
    from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
    from ansible_collections.gpuops.cluster.plugins.module_utils.training.run import run_training_report
    return run_training_report, TrainingReportError


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: gpu_benchmark_report.py LOG REPORT_JSON RANKS NAME")
    log, report_path, ranks, name = argv
    with tempfile.TemporaryDirectory(prefix="gpuops-collection-") as root:
        return judge(import_collection(root), log, report_path, int(ranks), name)


def judge(collection, log, report_path, ranks, name):
    run_training_report, report_error = collection
    try:
        report = run_training_report({"src": log, "report_path": report_path, "expect_ranks": ranks})
    except report_error as error:
        print("training_report: %s" % error)
        print("%-22s %-22s %12s  FAILED" % (name, "-", "-"))
        return 1
    print("\n".join(report["summary"]))
    per_device, total = report["img_per_sec_per_device"], report["img_per_sec_total"]
    figures = ("%.1f +-%.1f" % (per_device["mean"], per_device["spread"]), "%.1f" % total["mean"]) if per_device else ("-", "-")
    print("%-22s %-22s %12s  %s" % ((name,) + figures + ("PASSED" if report["passed"] else "FAILED",)))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
