"""One owner of the pods' namespace: every role that makes benchmark or smoke pods has the job_namespace role create
it, telling it what its pods ask of the node, and creates no Namespace itself. Read from the role files as YAML;
the role against a real API server is tested in tests/integration/test_mpijob.py."""

from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[4] / "roles"
INCLUDE = "ansible.builtin.include_role"
# The settings of pods that decide their pod security level.
SETTINGS = ("host_network", "privileged", "capabilities", "host_paths", "volumes")
# Each Kubernetes launcher, and the settings it gives of its own kind (kube_job_run); the rest are kube_job's options.
LAUNCHERS = {
    "mpijob_launcher": ("host_network",),
    "tfjob_launcher": ("volumes",),
    "pytorchjob_launcher": ("volumes",),
    "pod_launcher": ("volumes",),
    "job_launcher": ("host_network", "privileged", "volumes"),
}


def tasks_of(role):
    """Every task of a role's task files, blocks opened."""
    found = []

    def walk(tasks):
        for task in tasks or []:
            found.append(task)
            for section in ("block", "rescue", "always"):
                walk(task.get(section))
    for path in sorted((ROLES / role / "tasks").glob("*.yml")):
        walk(yaml.safe_load(path.read_text()))
    return found


def namespace_includes(role):
    return [task for task in tasks_of(role) if task.get(INCLUDE, {}).get("name") == "gpuops.cluster.job_namespace"]


def creates_a_namespace(role):
    return [task["name"] for task in tasks_of(role) if "kubernetes.core.k8s" in task
            and (task["kubernetes.core.k8s"].get("kind") == "Namespace"
                 or (task["kubernetes.core.k8s"].get("definition") or {}).get("kind") == "Namespace")]


def test_the_launchers_shared_body_has_job_namespace_create_the_namespace_with_every_pod_setting():
    (include,) = namespace_includes("kube_job")
    # Its tasks run whatever tags chose the launcher's.
    assert include[INCLUDE]["apply"] == {"tags": ["always"]}
    passed = include["vars"]
    assert passed["job_namespace_name"] == "{{ kube_job_namespace }}"
    assert sorted(key[len("job_namespace_"):] for key in passed
                  if key not in ("job_namespace_name", "job_namespace_kubeconfig", "job_namespace_context")) == sorted(
                      SETTINGS)
    for setting in ("capabilities", "host_paths"):
        assert passed["job_namespace_" + setting] == "{{ kube_job_%s }}" % setting
    for setting in ("host_network", "privileged", "volumes"):
        assert "kube_job_run.%s" % setting in passed["job_namespace_" + setting]
    assert creates_a_namespace("kube_job") == []


def test_the_shared_bodys_launch_prepares_the_namespace_before_the_launchers_job():
    launch = yaml.safe_load((ROLES / "kube_job" / "tasks" / "launch.yml").read_text())
    steps = launch[1]["block"]
    assert steps[0]["ansible.builtin.import_tasks"] == "prepare.yml"
    assert [step[INCLUDE]["tasks_from"] for step in (steps[1], steps[2]["block"][0])] == ["delete", "submit"]


@pytest.mark.parametrize("role", sorted(LAUNCHERS))
def test_each_launcher_runs_through_the_shared_body_giving_its_own_settings(role):
    launches = [task for task in tasks_of(role) if task.get(INCLUDE, {}).get("name") == "gpuops.cluster.kube_job"]
    assert [task[INCLUDE]["tasks_from"] for task in launches] == ["launch"]
    assert launches[0]["tags"] == ["always"]
    assert launches[0]["vars"] == {"kube_job_run": "{{ __%s_run }}" % role}
    assert namespace_includes(role) == [] and creates_a_namespace(role) == []
    run = yaml.safe_load((ROLES / role / "vars" / "main.yml").read_text())["__%s_run" % role]
    assert run["role"] == role
    assert sorted(setting for setting in SETTINGS if setting in run) == sorted(LAUNCHERS[role])
    # Each from the launcher's own options (job_launcher's privileged: its page cache drop needs it).
    for setting in LAUNCHERS[role]:
        assert role + "_" in run[setting]


def test_the_smoke_pods_have_job_namespace_create_their_namespace():
    (include,) = namespace_includes("gpu_validation")
    assert include[INCLUDE]["apply"] == {"tags": ["always"]}
    assert include["vars"]["job_namespace_name"] == "{{ gpu_validation_smoke_namespace }}"
    assert creates_a_namespace("gpu_validation") == []


@pytest.mark.parametrize("role", sorted(LAUNCHERS))
def test_every_setting_a_launcher_gives_of_its_own_is_one_of_its_options(role):
    defaults = yaml.safe_load((ROLES / role / "defaults" / "main.yml").read_text())
    for setting in LAUNCHERS[role]:
        assert "%s_%s" % (role, "drop_page_cache" if setting == "privileged" else setting) in defaults
