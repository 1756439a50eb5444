# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A baseline the collection measured itself: the JSON report of a run on one device (the shipped baseline job's, the
lab's one rank alone), read for its figure per device and compared with the run it is the baseline of. A figure of
another framework, model, batch size, device or precision makes an efficiency that compares unlike runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError

EXPECTED = "the JSON report of a run on one device, such as <cache>/training/gpuops-baseline.json"
# What must match between the baseline and the run, with the words for it.
COMPARED = (("framework", "framework"), ("model", "model"), ("batch_size", "batch size"), ("device", "device"),
            ("precision", "precision"))


def _refused(path, why):
    return TrainingReportError("baseline_report: %s %s; expected %s" % (path, why, EXPECTED))


def load_baseline(path):
    """The baseline of a report file: its figure per device, its ranks and what COMPARED names. Raises
    TrainingReportError naming baseline_report when the file is not a complete run's report."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (IOError, OSError) as error:
        raise _refused(path, "cannot be read (%s)" % (error.strerror or error))
    except ValueError:
        raise _refused(path, "is not JSON")
    figure = (data.get("img_per_sec_per_device") or {}).get("mean") if isinstance(data, dict) else None
    if isinstance(figure, bool) or not isinstance(figure, (int, float)) or not figure > 0:
        raise _refused(path, "holds no figure per device (img_per_sec_per_device.mean)")
    if data.get("complete") is False:
        raise _refused(path, "is the report of a run that did not finish")
    baseline = dict((key, data.get(key)) for key, _words in COMPARED)
    baseline.update(img_per_sec=figure, path=path, ranks=data.get("ranks"), devices_per_rank=data.get("devices_per_rank"))
    return baseline


def with_baseline(options):
    """options, with the baseline of baseline_report (when given) as baseline and its figure as baseline_img_per_sec."""
    if not options.get("baseline_report"):
        return options
    baseline = load_baseline(options["baseline_report"])
    return dict(options, baseline=baseline, baseline_img_per_sec=baseline["img_per_sec"])


def baseline_warnings(baseline, report):
    """What makes the baseline another kind of run than this one, in sentences."""
    warnings = []
    differ = ["%s %s there, %s here" % (words, baseline[key], report[key]) for key, words in COMPARED
              if baseline.get(key) is not None and report.get(key) is not None and baseline[key] != report[key]]
    if differ:
        warnings.append("the baseline (%s) is another kind of run: %s; the scaling efficiency compares unlike runs"
                        % (baseline["path"], "; ".join(differ)))
    devices = (baseline.get("ranks") or 1) * (baseline.get("devices_per_rank") or 1)
    if devices > 1:
        warnings.append("the baseline (%s) ran on %d devices, not one: its figure per device stands in for one device "
                        "alone" % (baseline["path"], devices))
    return warnings
