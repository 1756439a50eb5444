# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU validation (gpu_stack.yml --tags gpu_validation) on the lab make lab made: each node's nvidia.com/gpu as the
API shows it, and a smoke pod asking for one GPU on each node, run for real (a CPU stand-in for the CUDA sample,
as the table says); then every kind of problem at once, named node by node, with nothing left behind."""

from __future__ import annotations

import json
import os

from gpuops_testlib.ansible_run import ansible_env, mode_options, run_playbook
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from main_job import LAB_DIR, REPO_ROOT, kubectl

GPU_STACK = os.path.join(REPO_ROOT, "playbooks", "gpu_stack.yml")
PRINT_TASK = "Print each GPU node's validation"
FAIL_TASK = "Fail naming each node and what is wrong with it"
SMOKE_NAMESPACE = "gpuops-gpu-validation"


def _validate(*extra_vars, check=False):
    return run_playbook(GPU_STACK, LAB_INVENTORY, [json.dumps(extra) for extra in extra_vars],
                        mode_options(check=check, tags="gpu_validation"),
                        env=ansible_env(TMPDIR=os.path.join(LAB_DIR, "tmp")), timeout=600)


def _smoke_jobs():
    return kubectl("get", "jobs", "-n", SMOKE_NAMESPACE, "-o", "name", check=False).stdout.split()


def test_every_gpu_node_offers_its_gpus_and_runs_a_one_gpu_pod_leaving_nothing_behind(second_run):
    assert second_run.rc == 0, second_run.explain()
    planned = _validate(check=True)
    assert planned.rc == 0, planned.explain()
    planned_lines = planned.result(PRINT_TASK)["msg"]
    assert len(planned_lines) == 3 and all(line.endswith("smoke: planned (check mode)") for line in planned_lines[:2])
    assert planned_lines[2] == "check mode: not judged, as the GPU stack may not be applied yet", planned_lines
    assert not _smoke_jobs()

    done = _validate()
    assert done.rc == 0, done.explain()
    lines = done.result(PRINT_TASK)["msg"]
    assert [line.split()[0] for line in lines] == ["node1", "node2"]
    for line in lines:
        assert "nvidia.com/gpu 2/2/2 (capacity/allocatable/expected)" in line, line
        assert "  plugin: Ready (nvidia-device-plugin-" in line, line
        assert line.endswith(")  smoke: passed (CPU stand-in, the lab has no GPU)"), line
    assert not [task for task, _host, result in done.tasks() if result.get("changed")]
    assert not _smoke_jobs()


def test_each_problem_is_named_with_its_node_and_every_node_is_checked(second_run):
    """Too many GPUs expected, no plugin pod (a selector no pod matches), and a smoke pod whose log lacks the line:
    all at once."""
    assert second_run.rc == 0, second_run.explain()
    done = _validate({"gpu_validation_expected_gpus": {"node1": 4, "node2": 2}, "gpu_validation_plugin_selector": "app=none",
                      "gpu_validation_smoke_command": ["sh", "-c", "echo vectorAdd did not run"]})
    assert done.rc != 0
    message = dict(done.failed())[FAIL_TASK]["msg"]
    assert message.startswith("GPU validation FAILED on 2 of 2 node(s): node1: nvidia.com/gpu capacity 2, expected 4, "
                              "nvidia.com/gpu allocatable 2, expected 4, device plugin: no pod, smoke pod: its log "
                              "lacks \"Test PASSED\"; node2: device plugin: no pod, smoke pod: its log lacks"), message
    assert not _smoke_jobs()
