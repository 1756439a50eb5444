# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_verdict role on a real log of the lab's, as a launcher includes it: the placement the launcher gives
and the baseline report the site gives reach the verdict, its JSON report and its summary."""

import json
import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.report_file import report_json
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text
from gpuops_testlib.role_cases import run_task_cases

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "training_logs")
JUDGE = [{"name": "Judge", "ansible.builtin.include_role": {"name": "gpuops.cluster.training_verdict"}}]


@pytest.fixture(scope="module", name="judged")
def _judged(tmp_path_factory):
    work = tmp_path_factory.mktemp("training_verdict")
    # The lab's one rank alone on node1, judged as its launcher would have: the baseline report of the pair below.
    with open(os.path.join(FIXTURES, "lab_gloo_1node_tf.log"), encoding="utf-8") as handle:
        alone = report_from_text(handle.read(), {})
    baseline = work / "lab-baseline.json"
    baseline.write_text(report_json(alone))
    pair = {"training_verdict_log": os.path.abspath(os.path.join(FIXTURES, "lab_gloo_2node_tf.log")),
            "training_verdict_report_path": str(work / "training-gloo.json"), "training_verdict_ranks": 2,
            "training_verdict_placement": [1, 1], "training_verdict_launched_by": "horovodrun --gloo over SSH",
            "gpuops_training_baseline_report": str(baseline), "gpuops_training_min_scaling_efficiency": 0.01,
            "gpuops_training_chart_enabled": False}
    ran = run_task_cases(work, {"pair": (JUDGE, pair)})["pair"]
    return ran, alone, str(baseline), work


def test_the_launchers_placement_and_the_baseline_report_reach_the_verdict(judged):
    ran, alone, baseline, work = judged
    assert ran.rc == 0, ran.failures()
    with open(str(work / "training-gloo.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True, report["failures"]
    assert report["placement"] == {"hosts": {"node1": 1, "node2": 1}, "ranks_named": 2, "expected": [1, 1]}
    assert report["baseline_img_per_sec"] == alone["img_per_sec_per_device"]["mean"]
    assert report["baseline"]["path"] == baseline
    summary = ran.results("Print the verdict")[-1]["msg"]
    assert "placement:   2 hosts (node1: 1 rank, node2: 1 rank), as the launcher placed them (2 hosts of 1 rank each)" \
        in summary
    assert any(line.startswith("scaling:") and line.endswith("measured in %s)" % baseline) for line in summary), summary
