# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU stack roles' inputs through the real gpuops.cluster.check_inputs: their argument specs and their
meta/input_rules.yml, with the values as a user types them (-e name=value gives strings).

The cases are hosts of one ansible-playbook run on localhost (connection local), each with its -e arguments
as its variables: starting Ansible costs a second, a host a fork. Each asserts the exact lines its host's
check reports, in their order (the argument spec's problems by name, then the rules in file order). One more
run types the passing values of every role on the command line itself.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from gpuops_testlib.ansible_run import ansible_env, run_playbook, write_play
from gpuops_testlib.role_cases import typed_as_given

CHECK_TASK = "Check the role's variables"
ROLES = ("gpu_node_labels", "nvidia_device_plugin", "gpu_operator", "gpu_validation", "mpi_operator",
         "training_operator")
# localhost is in no gpu_nodes group: gpu_validation needs its hosts named.
GPU_VALIDATION_HOSTS = '{"gpu_validation_hosts": ["localhost"]}'


def as_json(**values):
    """One -e argument for the values a key=value cannot give (mappings, empty lists, null)."""
    return json.dumps(values)


# Expected words, as each rule and each type says them.
GPU_COUNT = "a number of GPUs, 0 or more (0 means no GPU), or null to take the gathered count"
TAINT_KEY = "a taint with a key, such as {key: nvidia.com/gpu, value: present, effect: NoSchedule}"
TAINT_EFFECT = "a taint whose effect is NoSchedule, PreferNoSchedule or NoExecute"
SECONDS = "a number of seconds above 0"
PLUGIN_VERSION = "a release tag of NVIDIA/k8s-device-plugin, such as v0.17.1 or v0.18.0-rc.1"
REPLICAS = "a number of replicas per GPU, 1 or more"
EXPECTED_GPUS = ("a number of GPUs every node must offer, 1 or more; a mapping of hosts to such numbers; or null to "
                 "take each host's gathered count (or its gpu_node_labels_gpu_count)")
SCHEMES = "job kinds among tfjob, pytorchjob, xgboostjob, paddlejob and jaxjob (mpijob is the MPI Operator's)"

# (id, role, -e arguments as typed, the problem lines in order; none for a run that passes).
CASES = [
    # gpu_node_labels
    ("labels: a negative GPU count", "gpu_node_labels", ["gpu_node_labels_gpu_count=-1"],
     ["gpu_node_labels_gpu_count: got -1; expected " + GPU_COUNT]),
    ("labels: no GPU count without gathering", "gpu_node_labels", ["gpu_node_labels_gather_enabled=false"],
     ["gpu_node_labels_gpu_count: got null (with gpu_node_labels_gather_enabled=false); expected the host's GPU "
      "count, since nothing is gathered (or set gpu_node_labels_gather_enabled to true)"]),
    ("labels: a GFD switch that is not a boolean", "gpu_node_labels", ["gpu_node_labels_gfd_managed=sometimes"],
     ["gpu_node_labels_gfd_managed: got 'sometimes'; expected true or false"]),
    ("labels: a taint without a key and one with an unknown effect", "gpu_node_labels",
     ["gpu_node_labels_taint_enabled=yes", as_json(gpu_node_labels_taint={"effect": "Sometimes"})],
     ['gpu_node_labels_taint: got {"effect": "Sometimes"}; expected ' + TAINT_KEY,
      'gpu_node_labels_taint: got {"effect": "Sometimes"}; expected ' + TAINT_EFFECT]),
    ("labels: every problem at once", "gpu_node_labels",
     ["gpu_node_labels_state=gone", "gpu_node_labels_gpu_count=-2", "gpu_node_labels_gpu_product=",
      "gpu_node_labels_taint_enabled=true", as_json(gpu_node_labels_taint={"key": "nvidia.com/gpu", "effect": "Never"})],
     ["gpu_node_labels_state: got 'gone'; expected one of present, absent",
      "gpu_node_labels_gpu_count: got -2; expected " + GPU_COUNT,
      "gpu_node_labels_gpu_product: got ''; expected a GPU product name, such as NVIDIA H100 80GB HBM3, or null to "
      "take the gathered one",
      'gpu_node_labels_taint: got {"effect": "Never", "key": "nvidia.com/gpu"}; expected ' + TAINT_EFFECT]),
    ("labels: values as typed", "gpu_node_labels",
     ["gpu_node_labels_gather_enabled=false", "gpu_node_labels_gpu_count=8", "gpu_node_labels_gfd_managed=no",
      "gpu_node_labels_taint_enabled=true", "gpu_node_labels_openshift=false", "gpu_node_labels_count_enabled=yes"],
     []),
    # nvidia_device_plugin
    ("device plugin: no time-slicing replica", "nvidia_device_plugin",
     ["nvidia_device_plugin_time_slicing_enabled=true", "nvidia_device_plugin_time_slicing_replicas=0"],
     ["nvidia_device_plugin_time_slicing_replicas: got 0; expected " + REPLICAS]),
    ("device plugin: an unknown MIG strategy", "nvidia_device_plugin", ["nvidia_device_plugin_mig_strategy=all"],
     ["nvidia_device_plugin_mig_strategy: got 'all'; expected one of none, single, mixed"]),
    ("device plugin: a version that is no release tag", "nvidia_device_plugin", ["nvidia_device_plugin_version=0.17.1"],
     ["nvidia_device_plugin_version: got '0.17.1'; expected " + PLUGIN_VERSION]),
    ("device plugin: every problem at once", "nvidia_device_plugin",
     ["gpuops_gpu_stack=operator", "nvidia_device_plugin_version=latest", "nvidia_device_plugin_time_slicing_enabled=yes",
      "nvidia_device_plugin_time_slicing_replicas=-1", "nvidia_device_plugin_manifest_src=/nonexistent.yml",
      "nvidia_device_plugin_expected_nodes=-1", "nvidia_device_plugin_wait_timeout=0",
      as_json(nvidia_device_plugin_node_selector={})],
     ["gpuops_gpu_stack: got 'operator'; expected one of device_plugin, gpu_operator",
      "nvidia_device_plugin_version: got 'latest'; expected " + PLUGIN_VERSION,
      "nvidia_device_plugin_node_selector: got {}; expected the labels of the GPU nodes, at least one, such as "
      '{nvidia.com/gpu.present: "true"}',
      "nvidia_device_plugin_time_slicing_replicas: got -1; expected " + REPLICAS,
      "nvidia_device_plugin_time_slicing_enabled: got true (with nvidia_device_plugin_manifest_src='/nonexistent.yml'); "
      "expected false with a static manifest (time-slicing needs the DaemonSet the role builds), or "
      "nvidia_device_plugin_manifest_src unset",
      "nvidia_device_plugin_manifest_src: got '/nonexistent.yml'; expected an http(s) URL or an existing file on the "
      "controller, or null to build the DaemonSet from the variables",
      "nvidia_device_plugin_expected_nodes: got -1; expected a number of GPU nodes, 0 or more, or null to count the "
      "nodes the selector matches",
      "nvidia_device_plugin_wait_timeout: got 0; expected " + SECONDS]),
    ("device plugin: values as typed", "nvidia_device_plugin",
     ["nvidia_device_plugin_time_slicing_enabled=true", "nvidia_device_plugin_time_slicing_replicas=2",
      "nvidia_device_plugin_expected_nodes=0", "nvidia_device_plugin_wait_timeout=60",
      "nvidia_device_plugin_fail_on_init_error=no", "nvidia_device_plugin_openshift=false"],
     []),
    # gpu_operator
    ("operator: an unknown method", "gpu_operator", ["gpu_operator_method=kubectl"],
     ["gpu_operator_method: got 'kubectl'; expected helm or olm, or null to choose olm on OpenShift with OLM and helm "
      "elsewhere"]),
    ("operator: no time to wait", "gpu_operator", ["gpu_operator_wait_timeout=0"],
     ["gpu_operator_wait_timeout: got 0; expected " + SECONDS]),
    ("operator: a chart repository that is no URL", "gpu_operator",
     ["gpu_operator_chart_repo_url=helm.ngc.nvidia.com/nvidia"],
     ["gpu_operator_chart_repo_url: got 'helm.ngc.nvidia.com/nvidia'; expected an http(s):// or oci:// URL of a "
      "chart repository, such as https://helm.ngc.nvidia.com/nvidia"]),
    ("operator: every problem at once", "gpu_operator",
     ["gpu_operator_driver_enabled=sometimes", "gpu_operator_chart_version=latest",
      "gpu_operator_chart_path=/nonexistent/gpu-operator-v25.3.0.tgz", "gpu_operator_olm_channel=",
      "gpu_operator_wait_timeout=-1"],
     ["gpu_operator_driver_enabled: got 'sometimes'; expected true or false",
      "gpu_operator_chart_version: got 'latest'; expected a chart version, such as v25.3.0",
      "gpu_operator_chart_path: got '/nonexistent/gpu-operator-v25.3.0.tgz'; expected a chart archive (.tgz) or a "
      "chart directory that exists on the controller, or null to use the chart repository",
      "gpu_operator_olm_channel: got ''; expected the Subscription's channel, such as v25.3 (by default from "
      "gpu_operator_chart_version)",
      "gpu_operator_wait_timeout: got -1; expected " + SECONDS]),
    ("operator: values as typed", "gpu_operator",
     ["gpuops_gpu_stack=gpu_operator", "gpu_operator_method=helm", "gpu_operator_driver_enabled=false",
      "gpu_operator_wait_enabled=no", "gpu_operator_wait_timeout=60", "gpu_operator_chart_version=25.3.0"],
     []),
    # gpu_validation
    ("validation: no GPU host", "gpu_validation", [],
     ["gpu_validation_hosts: got []; expected the GPU nodes' inventory hosts, at least one (set gpuops_gpu_hosts to "
      "their group, or gpu_validation_hosts)"]),
    ("validation: no GPU expected", "gpu_validation", [GPU_VALIDATION_HOSTS, "gpu_validation_expected_gpus=0"],
     ["gpu_validation_expected_gpus: got '0'; expected " + EXPECTED_GPUS]),
    ("validation: a host expected to offer no GPU", "gpu_validation",
     [GPU_VALIDATION_HOSTS, as_json(gpu_validation_expected_gpus={"localhost": 0, "node2": 8})],
     ['gpu_validation_expected_gpus: got {"localhost": 0, "node2": 8}; expected a number of GPUs, 1 or more, for each '
      "host it names, such as {node1: 8, node2: 4}"]),
    ("validation: every problem at once", "gpu_validation",
     [GPU_VALIDATION_HOSTS, "gpu_validation_smoke_enabled=maybe", "gpu_validation_expected_gpus=eight",
      "gpu_validation_smoke_expected_line=", "gpu_validation_wait_timeout=0"],
     ["gpu_validation_smoke_enabled: got 'maybe'; expected true or false",
      "gpu_validation_expected_gpus: got 'eight'; expected " + EXPECTED_GPUS,
      "gpu_validation_wait_timeout: got 0; expected " + SECONDS]),
    ("validation: values as typed", "gpu_validation",
     [GPU_VALIDATION_HOSTS, "gpu_validation_expected_gpus=8", "gpu_validation_wait_timeout=120",
      "gpu_validation_plugin_check_enabled=true", "gpu_validation_cleanup_enabled=no",
      # Without the smoke pods, their expected line does not matter.
      "gpu_validation_smoke_enabled=false", "gpu_validation_smoke_expected_line="],
     []),
    # mpi_operator
    ("mpi operator: a version that is no release tag", "mpi_operator", ["mpi_operator_version=0.8.0"],
     ["mpi_operator_version: got '0.8.0'; expected a release tag of kubeflow/mpi-operator, such as v0.8.0"]),
    ("mpi operator: a negative timeout", "mpi_operator", ["mpi_operator_wait_timeout=-30"],
     ["mpi_operator_wait_timeout: got -30; expected " + SECONDS]),
    ("mpi operator: every problem at once", "mpi_operator",
     ["mpi_operator_controller_enabled=maybe", "mpi_operator_manifest_src=ftp://example.invalid/x.yaml",
      "mpi_operator_image=", "mpi_operator_wait_timeout=0"],
     ["mpi_operator_controller_enabled: got 'maybe'; expected true or false",
      "mpi_operator_manifest_src: got 'ftp://example.invalid/x.yaml'; expected an http(s) URL or an existing file on "
      "the controller (the release's mpi-operator.yaml)",
      "mpi_operator_image: got ''; expected an image reference of the controller (a mirror), or null to keep the "
      "manifest's",
      "mpi_operator_wait_timeout: got 0; expected " + SECONDS]),
    ("mpi operator: values as typed", "mpi_operator",
     ["mpi_operator_wait_timeout=60", "mpi_operator_controller_enabled=false", "mpi_operator_wait_enabled=no",
      "mpi_operator_remove_crd=yes"],
     []),
    # training_operator
    ("training operator: the MPI Operator's job kind", "training_operator", ['{"training_operator_schemes": ["tfjob", "mpijob"]}'],
     ['training_operator_schemes: got ["tfjob", "mpijob"]; expected ' + SCHEMES]),
    ("training operator: an unknown pull policy", "training_operator",
     ["training_operator_image_pull_policy=Sometimes"],
     ["training_operator_image_pull_policy: got 'Sometimes'; expected Always, IfNotPresent or Never, or null to keep "
      "the kustomization's"]),
    ("training operator: an init container image that is no image name", "training_operator",
     ["training_operator_pytorch_init_image=Alpine 3.10"],
     ["training_operator_pytorch_init_image: got 'Alpine 3.10'; expected an image name with sh, seq and nslookup, such as "
      "registry.example.com/mirror/alpine:3.10"]),
    ("training operator: every problem at once", "training_operator",
     ["training_operator_version=1.9.3", "training_operator_kustomize_binary=/nonexistent/kustomize",
      "training_operator_wait_timeout=0", "training_operator_remove_crds=maybe",
      as_json(training_operator_schemes=[])],
     ["training_operator_remove_crds: got 'maybe'; expected true or false",
      "training_operator_version: got '1.9.3'; expected a release tag of kubeflow/training-operator, such as v1.9.3",
      "training_operator_kustomize_binary: got '/nonexistent/kustomize'; expected the path of a kustomize or kubectl "
      "binary on the controller, or null to find one on the PATH",
      "training_operator_schemes: got []; expected at least one job kind, such as [tfjob, pytorchjob]",
      "training_operator_wait_timeout: got 0; expected " + SECONDS]),
    ("training operator: values as typed", "training_operator",
     ['{"training_operator_schemes": ["tfjob", "pytorchjob"]}', "training_operator_wait_timeout=60",
      "training_operator_wait_enabled=false", "training_operator_remove_crds=yes",
      "training_operator_image_pull_policy=IfNotPresent"],
     []),
]


def host_name(case_id):
    return re.sub(r"[^A-Za-z0-9]+", "_", case_id).strip("_")


CHECK_PLAY = {
    "name": "Check each case's role",
    "hosts": "cases",
    "gather_facts": False,
    "tasks": [{"name": CHECK_TASK, "gpuops.cluster.check_inputs": {"roles": "{{ case_roles }}"}}],
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """{case id: its host's share of one run}: each case is an inventory host whose variables are the case's
    values, strings as -e gives them, so every case costs one fork rather than one ansible-playbook."""
    work_dir = tmp_path_factory.mktemp("input_rules_gpu_stack")
    hosts = dict((host_name(case_id), dict(typed_as_given(arguments), ansible_connection="local", case_roles=[role]))
                 for case_id, role, arguments, _problems in CASES)
    inventory = work_dir / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"cases": {"hosts": hosts}}}}, sort_keys=False))
    playbook = write_play(work_dir / "check.yml", CHECK_PLAY)
    run = run_playbook(playbook, inventory, env=ansible_env(ANSIBLE_FORKS=len(hosts)), timeout=300)
    return dict((case_id, (run, host_name(case_id))) for case_id, _role, _arguments, _problems in CASES)


@pytest.mark.parametrize("case_id, problems", [(case[0], case[3]) for case in CASES], ids=[case[0] for case in CASES])
def test_the_check_reports_exactly_the_wrong_values(checked, case_id, problems):
    run, host = checked[case_id]
    result = run.result(CHECK_TASK, host)
    assert result["problems"] == problems, run.explain(host)
    assert bool(result.get("failed")) == bool(problems), run.explain(host)


def test_every_role_passes_with_its_values_typed_on_the_command_line(tmp_path):
    """The passing cases of every role, typed on the command line together: each -e name=value is a string."""
    arguments = [argument for _id, _role, case_arguments, problems in CASES if not problems
                 for argument in case_arguments]
    playbook = write_play(tmp_path / "check.yml", dict(CHECK_PLAY, hosts="localhost", vars={"case_roles": list(ROLES)}))
    run = run_playbook(playbook, "localhost,", arguments, timeout=120)
    assert run.rc == 0, run.explain()
    assert run.result(CHECK_TASK)["checked"] == list(ROLES)
