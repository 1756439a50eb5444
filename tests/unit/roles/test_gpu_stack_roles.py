"""The GPU stack roles' input checks, the GPU node labels and the device plugin's DaemonSet, without a cluster.

Each case is its own task list, run as a host of one ansible-playbook run on localhost
(gpuops_testlib.role_cases.run_task_cases): the roles' validate.yml (which must not need the API) with bad
and good variables, and the DaemonSet template rendered with the role's defaults and variables. The same
paths run against the lab's API server in tests/integration/test_gpu_stack*.py.
"""

import pytest

from gpuops_testlib.role_cases import role_vars_case, run_task_cases, shown, template_msg

DAEMONSET = template_msg("nvidia_device_plugin", "daemonset.yml.j2")


def validate(role):
    include = {"name": "gpuops.cluster.%s" % role, "tasks_from": "validate.yml"}
    return [{"name": "Check", "ansible.builtin.include_role": include}]


def gpu(driver_version=None, **more):
    """A host's gpuops_gpu fact as gpu_facts reports it: 8 GPUs with a driver, or none without."""
    fact = {"present": driver_version is not None, "count": 8 if driver_version else 0}
    if driver_version:
        fact["driver_version"] = driver_version
    return dict(fact, **more)


def gpu_host_facts(facts):
    """Tasks giving each named GPU host its gpuops_gpu fact, and the variable that names those hosts to
    gpu_operator (the inventory's gpu_nodes group by default, which no case here shares with another)."""
    tasks = [{"name": "Facts of %s" % host, "delegate_to": host, "delegate_facts": True,
              "ansible.builtin.set_fact": {"gpuops_gpu": fact, "cacheable": True}} for host, fact in facts.items()]
    return tasks, ({"gpu_operator_gpu_hosts": list(facts)} if facts else {})


# GPU hosts and their facts, whether the operator should install the driver, and the test id. A host name
# keeps the same facts in every case, since all cases share one inventory.
DRIVER_FACTS = [
    ({}, True, "no GPU hosts"),
    ({"dgx1": gpu("550.90.07"), "dgx2": gpu("550.90.07")}, False, "driver on every host"),
    ({"node1": gpu(), "node2": gpu()}, True, "no driver anywhere"),
]
DISAGREEING_HOSTS = {"dgx1": gpu("550.90.07"), "plain1": gpu(reason="nvidia-smi not found")}


# An H100 host's gpuops_gpu fact, the parts the labels read.
H100_FACTS = {"present": True, "count": 8, "product_label": "NVIDIA-H100-80GB-HBM3", "memory_mib": 81559,
              "compute_capability": "9.0", "driver_version": "535.129.03", "cuda_version": "12.2", "mig_capable": True}
BASE_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
               "nvidia.com/gpu.count": "8"}


def labels_case(facts=None, **host_vars):
    """gpu_node_labels' checks and its labels task, on a host with the given gpuops_gpu fact and variables."""
    tasks = [{"name": "Gathered", "ansible.builtin.set_fact": {"gpuops_gpu": facts}}] if facts else []
    include = {"name": "gpuops.cluster.gpu_node_labels", "tasks_from": "labels.yml"}
    tasks = tasks + validate("gpu_node_labels") + [
        {"name": "Labels", "ansible.builtin.include_role": include},
        {"name": "Show", "ansible.builtin.debug": {"var": "__gpu_node_labels_entry"}}]
    return tasks, dict({"gpu_node_labels_openshift": False}, **host_vars)


def driver_case(facts):
    tasks, host_vars = gpu_host_facts(facts)
    tasks = tasks + validate("gpu_operator") + [
        {"name": "Show", "ansible.builtin.debug": {"var": "__gpu_operator_driver_enabled"}}]
    return tasks, host_vars


CASES = {
    "device_plugin_problems": (validate("nvidia_device_plugin"), {
        "gpuops_gpu_stack": "operator", "nvidia_device_plugin_version": "latest",
        "nvidia_device_plugin_time_slicing_enabled": True, "nvidia_device_plugin_time_slicing_replicas": 0,
        "nvidia_device_plugin_mig_strategy": "all", "nvidia_device_plugin_manifest_src": "/nonexistent.yml"}),
    "defaults": (validate("nvidia_device_plugin") + validate("gpu_operator") + validate("mpi_operator"), {}),
    "disagreeing_hosts": (gpu_host_facts(DISAGREEING_HOSTS)[0] + validate("gpu_operator"),
                          dict(gpu_host_facts(DISAGREEING_HOSTS)[1], gpuops_gpu_stack="gpu_operator")),
    "mpi_operator_problems": (validate("mpi_operator"), {
        "mpi_operator_version": "0.8.0", "mpi_operator_manifest_src": "ftp://example.invalid/x.yaml",
        "mpi_operator_wait_timeout": 0}),
    "daemonset_pinned": role_vars_case("nvidia_device_plugin", DAEMONSET, {"nvidia_device_plugin_version": "v0.17.2"}),
    "daemonset_four_replicas": role_vars_case("nvidia_device_plugin", DAEMONSET,
                                              {"nvidia_device_plugin_time_slicing_enabled": True}),
    "daemonset_eight_replicas": role_vars_case("nvidia_device_plugin", DAEMONSET, {
        "nvidia_device_plugin_time_slicing_enabled": True, "nvidia_device_plugin_time_slicing_replicas": 8,
        "nvidia_device_plugin_mig_strategy": "single"}),
    # The lab's inventory: no gathering, product and count from the inventory, nothing more. The switch and the
    # count are strings, as -e and INI inventories give them.
    "labels_lab": labels_case(gpu_node_labels_gather_enabled="false", gpu_node_labels_gpu_count="8",
                              gpu_node_labels_gpu_product="NVIDIA H100 80GB HBM3"),
    "labels_device_plugin": labels_case(H100_FACTS),
    "labels_gpu_operator": labels_case(H100_FACTS, gpuops_gpu_stack="gpu_operator"),
    "labels_absent_gfd_managed": labels_case(gpu_node_labels_state="absent", gpu_node_labels_gfd_managed=True),
    "labels_bad_switch": labels_case(H100_FACTS, gpu_node_labels_gfd_managed="sometimes"),
    "labels_bad_facts": labels_case(dict(H100_FACTS, compute_capability="9")),
}
CASES.update(("driver_%d" % index, driver_case(facts)) for index, (facts, _expected, _id) in enumerate(DRIVER_FACTS))
# The GPU hosts typed on the command line (-e gpu_operator_gpu_hosts=dgx1,dgx2): one string.
CASES["driver_hosts_typed"] = (driver_case(DRIVER_FACTS[1][0])[0], {"gpu_operator_gpu_hosts": "dgx1,dgx2"})
GPU_HOSTS = sorted(set(host for facts, _expected, _id in DRIVER_FACTS for host in facts) | set(DISAGREEING_HOSTS))


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("gpu_stack"), CASES, GPU_HOSTS)


def play(ran, name):
    """The case's return code and its (task name, result) list, in play order."""
    result = ran[name]
    return result.rc, [(task, res) for task, _host, res in result.run.tasks(name)]


def failure(results):
    failed = [result for _name, result in results if result.get("failed")]
    assert len(failed) == 1, results
    return failed[0]["msg"]


def problems(results):
    """The lines of the input check that failed, one per wrong value."""
    failed = [result for _name, result in results if result.get("failed")]
    assert len(failed) == 1, results
    return failed[0]["problems"]


def test_device_plugin_names_every_problem_at_once(ran):
    rc, results = play(ran, "device_plugin_problems")
    assert rc != 0
    assert problems(results) == [
        "gpuops_gpu_stack: got 'operator'; expected one of device_plugin, gpu_operator",
        "nvidia_device_plugin_mig_strategy: got 'all'; expected one of none, single, mixed",
        "nvidia_device_plugin_version: got 'latest'; expected a release tag of NVIDIA/k8s-device-plugin, such as "
        "v0.17.1 or v0.18.0-rc.1",
        "nvidia_device_plugin_time_slicing_replicas: got 0; expected a number of replicas per GPU, 1 or more",
        "nvidia_device_plugin_time_slicing_enabled: got true (with nvidia_device_plugin_manifest_src='/nonexistent.yml'); "
        "expected false with a static manifest (time-slicing needs the DaemonSet the role builds), or "
        "nvidia_device_plugin_manifest_src unset",
        "nvidia_device_plugin_manifest_src: got '/nonexistent.yml'; expected an http(s) URL or an existing file on the "
        "controller, or null to build the DaemonSet from the variables",
    ]


def test_defaults_pass_every_check(ran):
    rc, results = play(ran, "defaults")
    assert rc == 0, results


@pytest.mark.parametrize("index", range(len(DRIVER_FACTS)), ids=[case_id for _facts, _expected, case_id in DRIVER_FACTS])
def test_gpu_operator_driver_follows_the_hosts_facts(ran, index):
    expected = DRIVER_FACTS[index][1]
    rc, results = play(ran, "driver_%d" % index)
    assert rc == 0, results
    assert results[-1][1]["__gpu_operator_driver_enabled"] is expected


def test_gpu_operator_refuses_hosts_typed_as_one_string_naming_the_form_it_needs(ran):
    rc, results = play(ran, "driver_hosts_typed")
    assert rc != 0
    assert problems(results) == [
        """gpu_operator_gpu_hosts: got 'dgx1,dgx2'; expected a list of strings, given as YAML or JSON """
        """(-e '{"gpu_operator_gpu_hosts": [...]}')"""]


def test_gpu_operator_refuses_hosts_that_disagree_about_the_driver(ran):
    rc, results = play(ran, "disagreeing_hosts")
    assert rc != 0
    assert failure(results) == ("the GPU hosts disagree: a driver is preinstalled on dgx1 but not on plain1; set "
                                "gpu_operator_driver_enabled (and label the others nvidia.com/gpu.deploy.driver=false)")


def test_mpi_operator_checks_version_and_manifest(ran):
    rc, results = play(ran, "mpi_operator_problems")
    assert rc != 0
    assert problems(results) == [
        "mpi_operator_version: got '0.8.0'; expected a release tag of kubeflow/mpi-operator, such as v0.8.0",
        "mpi_operator_manifest_src: got 'ftp://example.invalid/x.yaml'; expected an http(s) URL or an existing file on "
        "the controller (the release's mpi-operator.yaml)",
        "mpi_operator_wait_timeout: got 0; expected a number of seconds above 0",
    ]


def test_daemonset_pins_selects_and_tolerates(ran):
    ds = shown(ran, "daemonset_pinned")
    spec = ds["spec"]["template"]["spec"]
    assert spec["containers"][0]["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.17.2"
    assert spec["containers"][0]["args"] == ["--mig-strategy=none", "--fail-on-init-error=true"]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["volumes"] == [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}]
    assert "annotations" not in ds["spec"]["template"]["metadata"]


def test_daemonset_with_time_slicing_mounts_its_config_and_rolls_on_change(ran):
    four = shown(ran, "daemonset_four_replicas")
    eight = shown(ran, "daemonset_eight_replicas")
    container = eight["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["--mig-strategy=single", "--fail-on-init-error=true",
                                 "--config-file=/etc/nvidia-device-plugin/config.yaml"]
    assert {"name": "config", "mountPath": "/etc/nvidia-device-plugin", "readOnly": True} in container["volumeMounts"]
    assert {"name": "config", "configMap": {"name": "nvidia-device-plugin-config"}} in eight["spec"]["template"]["spec"]["volumes"]
    checksum = "gpuops.io/config-sha256"
    assert four["spec"]["template"]["metadata"]["annotations"][checksum] != \
        eight["spec"]["template"]["metadata"]["annotations"][checksum]


def entry(ran, name):
    rc, results = play(ran, name)
    assert rc == 0, results
    return results[-1][1]["__gpu_node_labels_entry"]


def test_lab_inventory_labels_only_what_it_knows(ran):
    assert entry(ran, "labels_lab") == {"name": "labels_lab", "labels": BASE_LABELS, "taints": []}


def test_device_plugin_path_adds_gfd_labels_from_the_facts(ran):
    labels = entry(ran, "labels_device_plugin")["labels"]
    assert dict((key, labels[key]) for key in BASE_LABELS) == BASE_LABELS
    assert labels["nvidia.com/gpu.family"] == "hopper"
    assert labels["nvidia.com/cuda.driver-version.full"] == "535.129.03"
    assert labels["nvidia.com/mig.capable"] == "true"
    assert len(labels) == 15


def test_gpu_operator_path_leaves_gfd_labels_to_gfd(ran):
    assert entry(ran, "labels_gpu_operator")["labels"] == BASE_LABELS


def test_absent_where_gfd_runs_removes_only_the_roles_own_labels(ran):
    assert sorted(entry(ran, "labels_absent_gfd_managed")["labels"]) == [
        "nvidia.com/gpu.count", "nvidia.com/gpu.present", "nvidia.com/gpu.product", "openshift.com/gpu-accelerator"]


def test_gfd_switch_must_be_a_boolean(ran):
    rc, results = play(ran, "labels_bad_switch")
    assert rc != 0
    assert problems(results) == ["gpu_node_labels_gfd_managed: got 'sometimes'; expected true or false"]


def test_facts_that_cannot_be_understood_fail_naming_the_value(ran):
    rc, results = play(ran, "labels_bad_facts")
    assert rc != 0
    assert "gpu_node_labels: gpuops_gpu.compute_capability must be major.minor, got '9'" in failure(results)
