"""One owner of the pods' namespace: every role that makes benchmark or smoke pods has the job_namespace role create
it, telling it what its pods ask of the node, and creates no Namespace itself. Read from the role files as YAML;
the role against a real API server is tested in tests/integration/test_mpijob.py."""

from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[4] / "roles"
INCLUDE = "ansible.builtin.include_role"
# Each role that makes pods, and the settings of its pods that decide their pod security level.
POD_ROLES = {
    "mpijob_launcher": ("host_network", "privileged", "capabilities", "host_paths"),
    "tfjob_launcher": ("privileged", "capabilities", "host_paths", "volumes"),
    "pytorchjob_launcher": ("privileged", "capabilities", "host_paths", "volumes"),
    "pod_launcher": ("privileged", "capabilities", "host_paths", "volumes"),
    "job_launcher": ("host_network", "privileged", "capabilities", "host_paths", "volumes"),
    "gpu_validation": (),
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


@pytest.mark.parametrize("role", sorted(POD_ROLES))
def test_the_role_has_job_namespace_create_its_namespace_and_creates_none_itself(role):
    tasks = tasks_of(role)
    includes = [task for task in tasks if task.get(INCLUDE, {}).get("name") == "gpuops.cluster.job_namespace"]
    assert len(includes) == 1
    # Its tasks run whatever tags chose the role's.
    assert includes[0][INCLUDE]["apply"] == {"tags": ["always"]}
    passed = includes[0]["vars"]
    namespace = "smoke_namespace" if role == "gpu_validation" else "namespace"
    assert passed["job_namespace_name"] == "{{ %s_%s }}" % (role, namespace)
    settings = sorted(key[len("job_namespace_"):] for key in passed
                      if key not in ("job_namespace_name", "job_namespace_kubeconfig", "job_namespace_context"))
    assert settings == sorted(POD_ROLES[role])
    for setting in settings:
        assert "%s_%s" % (role, setting) in passed["job_namespace_" + setting]
    creating = [task["name"] for task in tasks if "kubernetes.core.k8s" in task
                and (task["kubernetes.core.k8s"].get("kind") == "Namespace"
                     or (task["kubernetes.core.k8s"].get("definition") or {}).get("kind") == "Namespace")]
    assert creating == []


@pytest.mark.parametrize("role", sorted(POD_ROLES))
def test_every_pod_setting_named_is_one_of_the_role(role):
    defaults = yaml.safe_load((ROLES / role / "defaults" / "main.yml").read_text())
    for setting in POD_ROLES[role]:
        assert "%s_%s" % (role, setting) in defaults
