#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: training_sweep
short_description: One report of a scaling sweep from the training reports of its sizes
version_added: 0.1.0
description:
  - Reads the JSON report that M(gpuops.cluster.training_report) wrote for each size of a scaling sweep (the same
    benchmark at several numbers of ranks) and reports, for each size, the total images per second, the images per
    second per rank, the ideal (the baseline's figure per rank times the ranks), the scaling efficiency against the
    baseline and the transport.
  - The baseline is the 1-rank run, or the smallest size when the sweep has no 1-rank run (the report says so).
  - A size whose run failed (given in its O(sizes[].failures), or a report that did not pass) is listed with its
    reasons; the other sizes are reported all the same.
  - Fails when a size failed or an efficiency floor (O(min_efficiency)) is unmet, listing every reason.
  - Optionally writes the sweep as a JSON report and a PNG chart of images per second against ranks with the ideal
    line. Files are only rewritten when their content changes.
author:
  - gpuops maintainers (@gpuops)
options:
  sizes:
    description: The sweep's sizes, each one run.
    type: list
    elements: dict
    required: true
    suboptions:
      ranks:
        description: The ranks the size ran with; each size once, 1 or more.
        type: int
        required: true
      report_path:
        description: The JSON report that training_report wrote for the run; null when the run left none.
        type: path
      failures:
        description: Why the run failed (the launcher's words), empty when it passed.
        type: list
        elements: str
        default: []
      log:
        description: The run's log, for the JSON report.
        type: path
  min_efficiency:
    description:
      - "The least scaling efficiency (a share above 0 and at most 1, where 1.0 is linear scaling) for every size, or a
        mapping of a size to its floor, such as V({2: 0.9, 4: 0.8}), where a size without one has none."
      - Null for no floor.
    type: raw
  report_path:
    description: Where to write the sweep as JSON (mode 0644). Its directory must exist.
    type: path
  chart_path:
    description:
      - Where to write a PNG chart of total images per second against ranks, measured and ideal (mode 0644). Its
        directory must exist. Needs the matplotlib Python library.
    type: path
  launched_by:
    description: How the sizes were run, in words, for the C(sweep:) line of RV(summary).
    type: str
requirements:
  - matplotlib (only for O(chart_path))
attributes:
  check_mode:
    support: full
    description: Reports what would be written without writing it.
  diff_mode:
    support: full
    description: Shows the JSON report before and after.
notes:
  - The module reads reports that training_report wrote; it judges no log itself.
seealso:
  - module: gpuops.cluster.training_report
  - name: Reading a training report
    description: The reports' fields, and the sweep's.
    link: https://example.invalid/gpuops/cluster/docs/training_report.md
"""

EXAMPLES = r"""
- name: Report a sweep of 1, 2 and 4 ranks, the 4-rank run at 80% of linear scaling or more
  gpuops.cluster.training_sweep:
    sizes:
      - {ranks: 1, report_path: /var/log/gpuops/gpuops-sweep-1rank.json}
      - {ranks: 2, report_path: /var/log/gpuops/gpuops-sweep-2ranks.json}
      - {ranks: 4, report_path: /var/log/gpuops/gpuops-sweep-4ranks.json}
    min_efficiency: {4: 0.8}
    report_path: /var/log/gpuops/gpuops-sweep.json
    chart_path: /var/log/gpuops/gpuops-sweep.png
  register: sweep

- name: Print the table
  ansible.builtin.debug:
    var: sweep.summary
"""

RETURN = r"""
passed:
  description: Whether every size ran and passed and every efficiency floor was met.
  returned: success or failure
  type: bool
  sample: false
failures:
  description: One sentence per failed size (its reasons) and per unmet floor.
  returned: success or failure
  type: list
  elements: str
  sample: ["4 ranks: scaling efficiency 0.62 is under the floor 0.8 (34.1 img/sec per rank, 55.0 at 1 rank)"]
baseline_ranks:
  description: The size efficiency is measured against.
  returned: success or failure
  type: int
  sample: 1
baseline_note:
  description: The baseline in words, saying when it is not a 1-rank run.
  returned: success or failure
  type: str
  sample: 1 rank, 55.0 img/sec per rank
min_efficiency:
  description: The floor of each size that has one, by size.
  returned: success or failure
  type: dict
  sample: {"4": 0.8}
sizes:
  description:
    - One entry per size, in ascending order - C(ranks), C(passed), C(failures), C(img_per_sec_total),
      C(img_per_sec_per_rank), C(ideal_img_per_sec), C(scaling_efficiency), C(min_efficiency), C(transport),
      C(device), C(report_path) and C(log). Figures are null where the run left none.
  returned: success or failure
  type: list
  elements: dict
summary:
  description:
    - The lines a person reads - C(sweep:), C(failures:) (only when failed), C(baseline:), the table under C(sizes:),
      then C(report:) and C(chart:) when asked for. The JSON report holds the same list.
  returned: always
  type: list
  elements: str
report_path:
  description: The JSON report's path, or null.
  returned: success or failure
  type: str
chart_path:
  description: The PNG chart's path, or null.
  returned: success or failure
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import label
from ansible_collections.gpuops.cluster.plugins.module_utils.training.sweep import run_training_sweep

ARGUMENT_SPEC = dict(
    sizes=dict(type="list", elements="dict", required=True, options=dict(
        ranks=dict(type="int", required=True),
        report_path=dict(type="path"),
        failures=dict(type="list", elements="str", default=[]),
        log=dict(type="path"),
    )),
    min_efficiency=dict(type="raw"),
    report_path=dict(type="path"),
    chart_path=dict(type="path"),
    launched_by=dict(type="str"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = run_training_sweep(module.params, module.check_mode, module._diff)
    except TrainingReportError as error:
        message = missing_required_lib(error.library) if error.library else str(error)
        module.fail_json(msg=message, summary=[label("sweep", "FAILED"), label("failures", message)])
    if not result["passed"]:
        module.fail_json(msg="scaling sweep: %s" % "; ".join(result["failures"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
