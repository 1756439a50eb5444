"""The GPU stack roles' input checks and the device plugin's DaemonSet, without a cluster.

Each test runs ansible-playbook on localhost: the roles' validate.yml (which must not need the API) with
bad and good variables, and the DaemonSet template rendered with the role's defaults and variables.
The same paths run against the lab's API server in tests/integration/test_gpu_stack*.py.
"""

from pathlib import Path

import pytest

from gpuops_testlib.ansible_run import ansible_env, run_playbook, write_play

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(str(tmp_path_factory.mktemp("collections")))


def play(env, tmp_path, tasks, extra):
    playbook = write_play(tmp_path / "play.yml", {"name": "Unit", "hosts": "localhost", "connection": "local",
                                                  "gather_facts": False, "tasks": tasks})
    done = run_playbook(playbook, extra_vars=extra, env=env, timeout=300)
    return done.rc, [(name, result) for name, _host, result in done.tasks("localhost")]


def validate(role):
    include = {"name": "gpuops.cluster.%s" % role, "tasks_from": "validate.yml"}
    return [{"name": "Check", "ansible.builtin.include_role": include}]


def failure(results):
    failed = [result for _name, result in results if result.get("failed")]
    assert len(failed) == 1, results
    return failed[0]["msg"]


def test_device_plugin_names_every_problem_at_once(env, tmp_path):
    rc, results = play(env, tmp_path, validate("nvidia_device_plugin"), {
        "gpuops_gpu_stack": "operator", "nvidia_device_plugin_version": "latest",
        "nvidia_device_plugin_time_slicing_enabled": True, "nvidia_device_plugin_time_slicing_replicas": 0,
        "nvidia_device_plugin_mig_strategy": "all", "nvidia_device_plugin_manifest_src": "/nonexistent.yml"})
    assert rc != 0
    assert failure(results).split("; ") == [
        "gpuops_gpu_stack must be 'device_plugin' or 'gpu_operator', got 'operator'",
        "nvidia_device_plugin_version must be a release tag such as v0.17.1, got 'latest'",
        "nvidia_device_plugin_mig_strategy must be none, single or mixed, got 'all'",
        "nvidia_device_plugin_time_slicing_replicas must be an integer >= 1, got '0'",
        "nvidia_device_plugin_time_slicing_enabled needs the DaemonSet this role builds: "
        "unset nvidia_device_plugin_manifest_src",
        "nvidia_device_plugin_manifest_src must be an http(s) URL or an existing file on the controller, "
        "got '/nonexistent.yml'",
    ]


def test_defaults_pass_every_check(env, tmp_path):
    tasks = validate("nvidia_device_plugin") + validate("gpu_operator") + validate("mpi_operator")
    rc, results = play(env, tmp_path, tasks, {})
    assert rc == 0, results


@pytest.mark.parametrize("facts, expected", [
    ({}, True),
    ({"dgx1": "550.90.07", "dgx2": "550.90.07"}, False),
    ({"node1": None, "node2": None}, True),
])
def test_gpu_operator_driver_follows_the_hosts_facts(env, tmp_path, facts, expected):
    tasks = [{"name": "Seed facts", "ansible.builtin.add_host": {"name": host, "groups": ["gpu_nodes"]},
              "loop_control": {"label": host}, "loop": [host]} for host in facts]
    for host, version in facts.items():
        gpu = {"present": version is not None, "count": 8 if version else 0}
        if version:
            gpu["driver_version"] = version
        tasks.append({"name": "Facts of %s" % host, "delegate_to": host, "delegate_facts": True,
                      "ansible.builtin.set_fact": {"gpuops_gpu": gpu, "cacheable": True}})
    tasks += validate("gpu_operator")
    tasks.append({"name": "Show", "ansible.builtin.debug": {"var": "__gpu_operator_driver_enabled"}})
    rc, results = play(env, tmp_path, tasks, {})
    assert rc == 0, results
    assert results[-1][1]["__gpu_operator_driver_enabled"] is expected


def test_gpu_operator_refuses_hosts_that_disagree_about_the_driver(env, tmp_path):
    tasks = [{"name": "Add", "ansible.builtin.add_host": {"name": host, "groups": ["gpu_nodes"]}}
             for host in ("dgx1", "plain1")]
    tasks += [{"name": "Facts", "ansible.builtin.set_fact": {"gpuops_gpu": facts, "cacheable": True}, "delegate_to": host,
               "delegate_facts": True}
              for host, facts in (("dgx1", {"present": True, "count": 8, "driver_version": "550.90.07"}),
                                  ("plain1", {"present": False, "count": 0, "reason": "nvidia-smi not found"}))]
    rc, results = play(env, tmp_path, tasks + validate("gpu_operator"), {"gpuops_gpu_stack": "gpu_operator"})
    assert rc != 0
    assert failure(results) == ("the GPU hosts disagree: a driver is preinstalled on dgx1 but not on plain1; set "
                                "gpu_operator_driver_enabled (and label the others nvidia.com/gpu.deploy.driver=false)")


def test_mpi_operator_checks_version_and_manifest(env, tmp_path):
    rc, results = play(env, tmp_path, validate("mpi_operator"), {
        "mpi_operator_version": "0.8.0", "mpi_operator_manifest_src": "ftp://example.invalid/x.yaml",
        "mpi_operator_wait_timeout": 0})
    assert rc != 0
    assert failure(results).split("; ") == [
        "mpi_operator_version must be a release tag such as v0.8.0, got '0.8.0'",
        "mpi_operator_manifest_src must be an http(s) URL or an existing file on the controller, "
        "got 'ftp://example.invalid/x.yaml'",
        "mpi_operator_wait_timeout must be a number of seconds > 0",
    ]


def render_daemonset(env, tmp_path, extra):
    role = REPO_ROOT / "roles" / "nvidia_device_plugin"
    tasks = [
        {"name": "Defaults", "ansible.builtin.include_vars": str(role / "defaults" / "main.yml")},
        {"name": "Vars", "ansible.builtin.include_vars": str(role / "vars" / "main.yml")},
        {"name": "Render", "ansible.builtin.debug": {
            "msg": "{{ lookup('ansible.builtin.template', '%s') | from_yaml }}" % (role / "templates" / "daemonset.yml.j2")}},
    ]
    rc, results = play(env, tmp_path, tasks, extra)
    assert rc == 0, results
    return results[-1][1]["msg"]


def test_daemonset_pins_selects_and_tolerates(env, tmp_path):
    ds = render_daemonset(env, tmp_path, {"nvidia_device_plugin_version": "v0.17.2"})
    spec = ds["spec"]["template"]["spec"]
    assert spec["containers"][0]["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.17.2"
    assert spec["containers"][0]["args"] == ["--mig-strategy=none", "--fail-on-init-error=true"]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["volumes"] == [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}]
    assert "annotations" not in ds["spec"]["template"]["metadata"]


def test_daemonset_with_time_slicing_mounts_its_config_and_rolls_on_change(env, tmp_path):
    four = render_daemonset(env, tmp_path, {"nvidia_device_plugin_time_slicing_enabled": True})
    eight = render_daemonset(env, tmp_path, {"nvidia_device_plugin_time_slicing_enabled": True,
                                             "nvidia_device_plugin_time_slicing_replicas": 8,
                                             "nvidia_device_plugin_mig_strategy": "single"})
    container = eight["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["--mig-strategy=single", "--fail-on-init-error=true",
                                 "--config-file=/etc/nvidia-device-plugin/config.yaml"]
    assert {"name": "config", "mountPath": "/etc/nvidia-device-plugin", "readOnly": True} in container["volumeMounts"]
    assert {"name": "config", "configMap": {"name": "nvidia-device-plugin-config"}} in eight["spec"]["template"]["spec"]["volumes"]
    checksum = "gpuops.io/config-sha256"
    assert four["spec"]["template"]["metadata"]["annotations"][checksum] != \
        eight["spec"]["template"]["metadata"]["annotations"][checksum]
