# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cache folder on the controller has one owner, the cache_dir lookup: every role default and lab variable that
places a file under it renders under ~/.cache/gpuops when GPUOPS_CACHE is set but empty, never under /; the build
scripts' prologue (tools/build_prologue.sh) reads GPUOPS_CACHE the same way.

Each variables file is a host of one ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases),
with HOME a scratch folder.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess
from pathlib import Path

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT
from gpuops_testlib.role_cases import run_task_cases, shown

# Each variables file that takes a path from the cache folder, and the path variables it defines.
CACHE_PATHS = {
    "roles/kube_job/vars/main.yml": ["__kube_job_log_path", "__kube_job_report_path"],
    "roles/ssh_launcher/vars/main.yml": ["__ssh_launcher_local_log"],
    "roles/slurm_launcher/vars/main.yml": ["__slurm_launcher_local_log"],
    "roles/training_sweep/defaults/main.yml": ["training_sweep_dir"],
    "roles/versions_report/defaults/main.yml": ["versions_report_path"],
    "lab/roles/lab_nodes/defaults/main.yml": ["lab_nodes_state_dir"],
    "lab/roles/lab_control_plane/defaults/main.yml": ["lab_control_plane_cache_dir", "lab_control_plane_run_dir",
                                                      "lab_control_plane_kubeconfig"],
    "lab/roles/lab_kube_node/defaults/main.yml": ["lab_kube_node_cache_dir", "lab_kube_node_control_plane_dir"],
    "lab/roles/lab_slurm/defaults/main.yml": ["lab_slurm_cache_dir", "lab_slurm_key_dir"],
    "inventories/lab/group_vars/all.yml": ["lab_state_dir", "lab_cache_dir"],
    "inventories/examples/jobs/one-gpu-baseline.yml": ["kube_job_log_path"],
}
# What a variables file needs loaded or given before it: the role's defaults, and what its caller passes.
CONTEXT = {
    "roles/kube_job/vars/main.yml": (["roles/kube_job/defaults/main.yml"], {"kube_job_run": {"name": "bench"}}),
    "roles/ssh_launcher/vars/main.yml": (["roles/ssh_launcher/defaults/main.yml"], {"ssh_launcher_controller": "mpi"}),
    "roles/slurm_launcher/vars/main.yml": (["roles/slurm_launcher/defaults/main.yml"], {}),
}
# Where the roles, the lab and the inventories could name the cache.
SEARCHED = ["roles", "lab", "inventories", "playbooks", "molecule"]


def case_name(variables_file):
    return re.sub(r"[^a-z0-9]+", "_", variables_file.replace("/defaults/main.yml", ""))


def rendered_paths(variables_file, names):
    """A case that loads one variables file and shows its path variables."""
    before, given = CONTEXT.get(variables_file, ([], {}))
    tasks = [{"name": "Variables", "ansible.builtin.include_vars": str(Path(REPO_ROOT) / loaded)}
             for loaded in before + [variables_file]]
    if given:
        tasks.append({"name": "Given", "ansible.builtin.set_fact": given})
    tasks += [{"name": "Render", "ansible.builtin.debug": {"msg": dict((name, "{{ %s }}" % name) for name in names)}}]
    return tasks, {}


def yaml_files():
    for top in SEARCHED:
        for path in sorted((Path(REPO_ROOT) / top).rglob("*.yml")):
            yield str(path.relative_to(REPO_ROOT)), path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def ran(tmp_path_factory, home):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("GPUOPS_CACHE", "")
        return run_task_cases(tmp_path_factory.mktemp("cache_dir"), dict(
            (case_name(variables_file), rendered_paths(variables_file, names))
            for variables_file, names in CACHE_PATHS.items()))


@pytest.mark.parametrize("variables_file", sorted(CACHE_PATHS))
def test_an_empty_gpuops_cache_puts_every_path_under_the_home_cache_not_under_the_root(ran, home, variables_file):
    cache = str(home / ".cache" / "gpuops")
    paths = shown(ran, case_name(variables_file))
    assert sorted(paths) == sorted(CACHE_PATHS[variables_file])
    assert [path for path in paths.values() if path != cache and not path.startswith(cache + "/")] == []


def test_only_the_lookup_reads_gpuops_cache_or_home():
    assert [name for name, text in yaml_files() if "'GPUOPS_CACHE'" in text or "'HOME'" in text] == []


def test_every_file_that_takes_a_path_from_the_cache_is_rendered_here():
    assert sorted(name for name, text in yaml_files() if "lookup('gpuops.cluster.cache_dir'" in text) == sorted(CACHE_PATHS)


@pytest.mark.parametrize("given, expected", [("", "{home}/.cache/gpuops"), ("{home}/moved", "{home}/moved")])
def test_the_build_scripts_take_the_same_folder(home, given, expected):
    env = dict(os.environ, HOME=str(home), GPUOPS_CACHE=given.format(home=home))
    done = subprocess.run(["bash", "-c", 'source tools/build_prologue.sh && echo "$GPUOPS_CACHE"'], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, expected.format(home=home)), done.stderr
