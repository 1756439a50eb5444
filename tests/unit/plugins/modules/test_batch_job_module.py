# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.batch_job as Ansible runs it (argument spec, check mode, idempotence), on a fake cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.batch_job import BATCH_JOB
from ansible_collections.gpuops.cluster.plugins.modules import batch_job
from gpuops_testlib.fake_job_api import FakeMPIJobApi
from gpuops_testlib.module_exit import catch_exits, run_k8s_module

ARGS = dict(name="single", namespace="ml", image="horovod:0.28.1", gpus=2,
            command=["horovodrun", "-np", "2", "-H", "localhost:2", "python3", "bench.py"])


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


def test_bad_input_fails_before_any_api_client_is_built():
    outcome = run_k8s_module(batch_job, dict(ARGS, gpus=-2, shm_size="lots"), api=None)
    assert outcome.failed
    assert outcome.result["msg"].startswith("invalid Job arguments (2 problem(s)): gpus must be at least 0, got -2")


def test_check_mode_shows_the_spec_and_creates_nothing_then_a_second_run_changes_nothing():
    api = FakeMPIJobApi(kind=BATCH_JOB)
    planned = run_k8s_module(batch_job, ARGS, api, check_mode=True, diff=True)
    assert (planned.failed, planned.result["changed"], planned.result["method"]) == (False, True, "created")
    limits = planned.result["diff"]["after"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "2"}
    assert api.writes == []
    first = run_k8s_module(batch_job, ARGS, api)
    second = run_k8s_module(batch_job, ARGS, api)
    assert (first.result["changed"], second.result["changed"], second.result["method"]) == (True, False, "unchanged")
    assert [write[0] for write in api.writes] == ["create"]
