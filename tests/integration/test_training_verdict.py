# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict's one owner, through the playbooks a user runs, against the lab control plane.

verify_training.yml runs the MPIJob launcher, whose training_verdict role judges the log once and publishes
the verdict; training_summary.yml only prints it. The inventory here sets none of the path variables
(verify_training_log_path, mpijob_launcher_log_path), as a user's need not: the log and the report go under
$GPUOPS_CACHE/training. The pods are simulated in this lab, so the launcher log is a recorded one (see
test_mpijob.py).
"""

from __future__ import annotations

import json
import os
import sys

import yaml

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook, write_play

RECORDED_LOG = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "training_logs", "horovod_gloo_cpu_2node.log")
# Both playbooks in one ansible-playbook run, as site.yml imports them (and as a single JSON document).
VERIFY_AND_SUMMARY = [{"ansible.builtin.import_playbook": os.path.join(REPO_ROOT, "playbooks", name)}
                      for name in ("verify_training.yml", "training_summary.yml")]


def _launcher_vars(lab, namespace):
    return {"gpuops_kubeconfig": lab.kubeconfig, "gpuops_launcher": "mpijob",
            "mpijob_launcher_namespace": namespace, "mpijob_launcher_name": "bench",
            "mpijob_launcher_image": "localhost/gpuops-horovod:simulated", "mpijob_launcher_image_pull_policy": "Never",
            "mpijob_launcher_workers": 2, "mpijob_launcher_slots_per_worker": 2,
            "mpijob_launcher_resources": {"cpu": "1", "memory": "1Gi"}, "mpijob_launcher_wait_timeout": 120,
            "mpijob_launcher_simulated_log_src": RECORDED_LOG}


def _inventory(path, variables):
    localhost = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    document = {"all": {"hosts": {"localhost": localhost}, "vars": variables}}
    with open(str(path), "w", encoding="utf-8") as handle:
        yaml.safe_dump(document, handle)
    return str(path)


def test_an_inventory_without_path_variables_is_judged_once_and_summarised(lab, namespace, tmp_path):
    cache = tmp_path / "cache"
    inventory = _inventory(tmp_path / "inventory.yml", _launcher_vars(lab, namespace))
    playbook = write_play(tmp_path / "verify.yml", VERIFY_AND_SUMMARY)
    run = run_playbook(playbook, inventory=inventory, env=ansible_env(GPUOPS_CACHE=str(cache)), timeout=600)
    assert run.rc == 0, run.explain()
    # Judged once, by the launcher's training_verdict role; the summary playbook judged nothing.
    assert len(run.results("Judge the training log")) == 1
    skipped = run.results("Judge the log named by gpuops_summary_log")
    assert len(skipped) == 1 and skipped[0].get("skipped") is True, skipped
    report_path = str(cache / "training" / "bench.json")
    with open(report_path, encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True and report["ranks"] == 4, report["failures"]
    printed = run.result("Print the summary")["msg"]
    assert printed == report["summary"]
    assert printed[0].startswith("verdict:     PASSED (an MPIJob (%s/bench)" % namespace), printed
    assert "log:         %s" % (cache / "training" / "bench.log") in printed
    assert "report:      %s" % report_path in printed


def test_thresholds_given_to_the_launcher_role_reach_the_verdict(lab, namespace, tmp_path):
    variables = dict(_launcher_vars(lab, namespace), gpuops_training_expect_ranks=8,
                     mpijob_launcher_log_path=str(tmp_path / "bench.log"))
    playbook = write_play(tmp_path / "launch.yml", {
        "name": "launch", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"ansible_python_interpreter": sys.executable},
        "roles": [{"role": "gpuops.cluster.mpijob_launcher", "vars": variables}]})
    run = run_playbook(playbook, env=ansible_env(GPUOPS_CACHE=str(tmp_path / "cache")), timeout=600)
    assert run.rc != 0
    failure = "expected 8 ranks, the log shows 4"
    assert [name for name, _result in run.failed()] == ["Fail with every unmet threshold"], run.explain()
    assert failure in run.failed()[0][1]["msg"]
    with open(str(tmp_path / "bench.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is False
    assert any(line.startswith(failure) for line in report["failures"]), report["failures"]
    assert report["summary"][0].startswith("verdict:     FAILED (an MPIJob"), report["summary"]
