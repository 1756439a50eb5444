# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark image recipe on the lab make lab made: the lab's workload image, which its pods and nodes run,
was built by playbooks/benchmark_image.yml (tools/build_workload_image.sh); the same playbook with the same inputs
again builds nothing, and the image carries the recipe it was built from."""

from __future__ import annotations

import os
import subprocess
import sys

from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, ansible_env, run_playbook
from gpuops_testlib.lab_pods import workload_image


def _tool(script, *arguments):
    return subprocess.run(["bash", os.path.join(REPO_ROOT, "tools", script)] + list(arguments), capture_output=True,
                          text=True, check=True).stdout.strip().splitlines()[-1]


def test_the_lab_image_is_the_recipes_and_a_second_run_builds_nothing(second_run):
    assert second_run.rc == 0, second_run.explain()
    image = workload_image()
    done = run_playbook(os.path.join(REPO_ROOT, "playbooks", "benchmark_image.yml"), "localhost,", {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "benchmark_image_base": _tool("build_node_image.sh", "--name"), "benchmark_image_name": image,
        "benchmark_image_wheelhouse": _tool("build_horovod.sh", "--dir"), "benchmark_image_venv": "/opt/gpuops/venv",
        "benchmark_image_builder": "podman", "benchmark_image_work_dir": os.path.join(CACHE_ROOT, "images")},
        env=ansible_env(), timeout=300)
    assert done.rc == 0, done.explain()
    recipe = done.result("Work out the recipe")["ansible_facts"]["__benchmark_image_recipe"]
    assert done.result("Say what was built")["msg"] == "%s from %s: up to date (recipe %s)" % (
        image, _tool("build_node_image.sh", "--name"), recipe)
    assert [task for task, _host, result in done.tasks() if result.get("changed")] == []
    label = subprocess.run(["podman", "image", "inspect", "--format", '{{ index .Labels "io.gpuops.recipe" }}', image],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert label == recipe
