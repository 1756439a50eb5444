# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/gpu_stack.yml against the lab control plane: labels, device plugin or GPU Operator, MPI Operator.

What the lab shows: the objects the API server stores and validates, the real DaemonSet controller and
scheduler placing the device plugin's pods (kwok marks them running; nothing runs in them), Helm installing,
upgrading and waiting for a release (of a small local chart standing in for NVIDIA's, which cannot be fetched
here), the MPI Operator's CRD Established and its Deployment Available (kwok's pod, not a running controller).
What it cannot show: a device plugin registering GPUs with a kubelet (there is none), nvidia.com/gpu capacity
appearing, the real GPU Operator's operands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import yaml

from gpu_stack_harness import (
    CHART_DIR, DATA_DIR, GPU_PRODUCT_LABEL, PREVIOUS_PINS, WITHOUT_GPU_VALIDATION, ansible_env, fake_node, helm_binary,
    mpi_operator_manifest, previous_mpi_operator_manifest, run_playbook, seed_facts, unique, unreachable_kubeconfig,
    wait_for, write_inventory,
)
from gpuops_testlib.versions import pinned

DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:" + pinned("nvidia_device_plugin")

GPU_SELECTOR = "nvidia.com/gpu.present=true"


@pytest.fixture(scope="module")
def helm():
    return helm_binary()


@pytest.fixture(scope="module")
def stack(lab, tmp_path_factory):
    """Two unlabelled GPU nodes and one CPU node of this module, an inventory naming the GPU ones, a namespace
    for the device plugin and the operator, and the extra vars every run shares. All removed afterwards."""
    tmp = tmp_path_factory.mktemp("gpu-stack")
    prefix = unique("gs")
    gpu_nodes = ["%s-gpu-a" % prefix, "%s-gpu-b" % prefix]
    cpu_node = "%s-cpu" % prefix
    for name in gpu_nodes + [cpu_node]:
        lab.core.create_node(fake_node(name))
    namespace = "%s-stack" % prefix
    extra = {"gpuops_kubeconfig": lab.kubeconfig, "nvidia_device_plugin_namespace": namespace,
             "gpu_operator_namespace": namespace, "nvidia_device_plugin_wait_timeout": 180,
             "gpu_operator_wait_timeout": 180, "mpi_operator_manifest_src": mpi_operator_manifest(),
             "mpi_operator_wait_timeout": 180, **WITHOUT_GPU_VALIDATION}
    info = {"tmp": tmp, "gpu_nodes": gpu_nodes, "cpu_node": cpu_node, "namespace": namespace, "extra": extra,
            "inventory": write_inventory(str(tmp / "inventory.yml"), gpu_nodes),
            "env": ansible_env(str(tmp))}
    yield info
    lab.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true", "--timeout=50s", check=False)
    for name in gpu_nodes + [cpu_node]:
        lab.kubectl("delete", "node", name, "--ignore-not-found", check=False)


def labels_of(lab, name):
    return lab.core.read_node(name).metadata.labels or {}


def daemonset(lab, namespace, name):
    found = lab.kubectl("get", "daemonset", "-n", namespace, name, "-o", "yaml", "--ignore-not-found").stdout
    return yaml.safe_load(found) if found.strip() else None


def pods_by_node(lab, namespace, selector):
    pods = lab.core.list_namespaced_pod(namespace, label_selector=selector).items
    return dict((pod.spec.node_name, pod) for pod in pods if pod.metadata.deletion_timestamp is None)


def gpu_labelled_nodes(lab):
    return sorted(node.metadata.name for node in lab.core.list_node(label_selector=GPU_SELECTOR).items)


def helm_releases(lab, namespace):
    """Helm's release records (Secrets owner=helm), by revision."""
    secrets = lab.core.list_namespaced_secret(namespace, label_selector="owner=helm").items
    return sorted((int(s.metadata.labels["version"]), s.metadata.labels["status"]) for s in secrets)


DEVICE_PLUGIN_PODS = "app.kubernetes.io/name=nvidia-device-plugin"
OPERATOR_PLUGIN_PODS = "app.kubernetes.io/name=gpu-operator-stub-device-plugin"


def test_device_plugin_stack_check_apply_idempotent_diff(lab, stack):
    ns, gpu_nodes = stack["namespace"], stack["gpu_nodes"]
    extra = dict(stack["extra"])

    # Check mode: every change planned and shown, nothing created.
    check = run_playbook(stack["env"], stack["inventory"], extra, check=True, diff=True, tags="gpu_stack")
    assert check.rc == 0, check.explain()
    assert check.changed > 0
    for name in gpu_nodes:
        assert "nvidia.com/gpu.present" not in labels_of(lab, name), "check mode labelled a node"
    assert lab.kubectl("get", "namespace", ns, "--ignore-not-found", "-o", "name").stdout.strip() == ""
    label_diffs = [item for name, item in check.diffs() if "Apply the GPU labels" in name]
    assert sorted(item["before_header"] for item in label_diffs) == sorted("node/%s" % n for n in gpu_nodes)
    assert label_diffs[0]["after"]["labels"]["nvidia.com/gpu.product"] == GPU_PRODUCT_LABEL
    shown = "\n".join(item.get("prepared", "") for name, item in check.diffs() if "as it would be created" in name)
    assert "kind: DaemonSet" in shown and "image: " + DEVICE_PLUGIN_IMAGE in shown
    assert "nvidia.com/gpu.present: 'true'" in shown

    # Apply: labels, then the DaemonSet on exactly the GPU-labelled nodes.
    apply = run_playbook(stack["env"], stack["inventory"], extra, tags="gpu_stack")
    assert apply.rc == 0, apply.explain()
    for name in gpu_nodes:
        labels = labels_of(lab, name)
        assert labels["nvidia.com/gpu.present"] == "true"
        assert labels["nvidia.com/gpu.product"] == GPU_PRODUCT_LABEL
        assert labels["nvidia.com/gpu.count"] == "8"
        assert "openshift.com/gpu-accelerator" not in labels, "not OpenShift: no accelerator label"
    assert "nvidia.com/gpu.present" not in labels_of(lab, stack["cpu_node"])
    (labelled,) = apply.results("Apply the GPU labels to every node at once")
    assert labelled["changed_nodes"] == sorted(gpu_nodes), "one node_labels call for all hosts"

    ds = daemonset(lab, ns, "nvidia-device-plugin")
    expected_nodes = gpu_labelled_nodes(lab)
    assert set(gpu_nodes) <= set(expected_nodes)
    assert ds["status"]["desiredNumberScheduled"] == len(expected_nodes)
    assert ds["status"]["numberAvailable"] == len(expected_nodes)
    pod_spec = ds["spec"]["template"]["spec"]
    assert pod_spec["priorityClassName"] == "system-node-critical"
    assert pod_spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod_spec["tolerations"]
    assert pod_spec["containers"][0]["image"] == DEVICE_PLUGIN_IMAGE
    # The real scheduler and DaemonSet controller: one pod per GPU-labelled node, none elsewhere.

    def on_every_gpu_node():
        placed = pods_by_node(lab, ns, DEVICE_PLUGIN_PODS)
        return placed if sorted(placed) == expected_nodes else None

    placed = wait_for(on_every_gpu_node, 60, "device plugin pods on every GPU node")
    assert stack["cpu_node"] not in placed
    assert all(pod.status.phase == "Running" for pod in placed.values())

    # Second run: nothing to do, and no diff shown.
    again = run_playbook(stack["env"], stack["inventory"], extra, diff=True, tags="gpu_stack")
    assert again.rc == 0, again.explain()
    assert again.changed == 0, again.explain()
    assert again.diffs() == []

    # Time-slicing on: the ConfigMap appears, the flag is passed, the pods roll; the diff names exactly that.
    sliced = dict(extra, nvidia_device_plugin_time_slicing_enabled=True, nvidia_device_plugin_time_slicing_replicas=4)
    before_uids = set(pod.metadata.uid for pod in placed.values())
    timeslice = run_playbook(stack["env"], stack["inventory"], sliced, diff=True, tags="gpu_stack")
    assert timeslice.rc == 0, timeslice.explain()
    config = lab.core.read_namespaced_config_map("nvidia-device-plugin-config", ns)
    parsed = yaml.safe_load(config.data["config.yaml"])
    assert parsed["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    container = daemonset(lab, ns, "nvidia-device-plugin")["spec"]["template"]["spec"]["containers"][0]
    assert "--config-file=/etc/nvidia-device-plugin/config.yaml" in container["args"]
    ds_diffs = [item for name, item in timeslice.diffs() if "Apply the device plugin" in name]
    assert len(ds_diffs) == 1
    assert "--config-file" not in str(ds_diffs[0]["before"]) and "--config-file" in str(ds_diffs[0]["after"])

    def rolled_on_every_gpu_node():
        placed = on_every_gpu_node()
        return placed if placed and not before_uids & set(pod.metadata.uid for pod in placed.values()) else None

    rolled = wait_for(rolled_on_every_gpu_node, 120, "the device plugin pods to roll")
    assert len(rolled) == len(expected_nodes)
    assert run_playbook(stack["env"], stack["inventory"], sliced, tags="gpu_stack").changed == 0


def test_switching_to_the_gpu_operator_and_back(lab, stack, helm, tmp_path):
    """The Helm path with a local chart (NVIDIA's cannot be fetched here): install, values, upgrade, wait,
    uninstall, and the device plugin gone while the operator is there."""
    ns = stack["namespace"]
    # The GPU hosts' gathered facts say the driver is preinstalled (as on DGX OS): driver.enabled false.
    cache = tmp_path / "facts"
    cache.mkdir()
    env = ansible_env(str(tmp_path), fact_cache=str(cache))
    seed_facts(env, str(tmp_path), dict(
        (name, {"gpuops_gpu": {"present": True, "count": 8, "driver_version": "550.90.07"}})
        for name in stack["gpu_nodes"]))
    operator = dict(stack["extra"], gpuops_gpu_stack="gpu_operator", gpu_operator_chart_path=CHART_DIR,
                    gpu_operator_helm_binary=helm)

    run = run_playbook(env, stack["inventory"], operator, diff=True, tags="gpu_stack")
    assert run.rc == 0, run.explain()
    assert daemonset(lab, ns, "nvidia-device-plugin") is None, "the device plugin stays beside the operator"
    assert pods_by_node(lab, ns, DEVICE_PLUGIN_PODS) == {}
    assert helm_releases(lab, ns) == [(1, "deployed")]
    settings = lab.core.read_namespaced_config_map("gpu-operator-settings", ns).data
    assert settings == {"driver.enabled": "false", "mig.strategy": "single", "chart.version": "0.1.0"}
    # helm --wait returned once the operator's Deployment was available (kwok runs its pod).
    deployment = lab.kubectl("get", "deployment", "-n", ns, "gpu-operator", "-o", "yaml").stdout
    assert yaml.safe_load(deployment)["status"]["availableReplicas"] == 1
    operator_uid = yaml.safe_load(deployment)["metadata"]["uid"]
    values_diff = [item["prepared"] for name, item in run.diffs() if "values before and after" in name]
    assert len(values_diff) == 1 and '+            "enabled": false' in values_diff[0]
    expected_nodes = gpu_labelled_nodes(lab)
    wait_for(lambda: sorted(pods_by_node(lab, ns, OPERATOR_PLUGIN_PODS)) == expected_nodes, 60,
             "the operator's device plugin on every GPU node")

    again = run_playbook(env, stack["inventory"], operator, tags="gpu_stack")
    assert again.rc == 0, again.explain()
    assert again.changed == 0, again.explain()
    assert helm_releases(lab, ns) == [(1, "deployed")]

    # Upgrade: a new chart version as an archive (the air-gapped form) and another MIG strategy.
    chart_copy = tmp_path / "chart" / "gpu-operator-stub"
    shutil.copytree(CHART_DIR, chart_copy)
    chart_yaml = chart_copy / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 0.1.0", "version: 0.2.0"))
    subprocess.run([helm, "package", str(chart_copy), "-d", str(tmp_path)], check=True, capture_output=True)
    archive = tmp_path / "gpu-operator-stub-0.2.0.tgz"
    upgraded = dict(operator, gpu_operator_chart_path=str(archive), gpu_operator_mig_strategy="mixed")
    upgrade = run_playbook(env, stack["inventory"], upgraded, tags="gpu_stack")
    assert upgrade.rc == 0, upgrade.explain()
    assert helm_releases(lab, ns) == [(1, "superseded"), (2, "deployed")]
    settings = lab.core.read_namespaced_config_map("gpu-operator-settings", ns).data
    assert settings == {"driver.enabled": "false", "mig.strategy": "mixed", "chart.version": "0.2.0"}
    deployment = yaml.safe_load(lab.kubectl("get", "deployment", "-n", ns, "gpu-operator", "-o", "yaml").stdout)
    assert deployment["metadata"]["uid"] == operator_uid, "the upgrade replaced the operator instead of updating it"

    # Back to the device plugin: the release is uninstalled first, then the plugin returns.
    # Uninstalling a release needs the helm binary as well.
    back = run_playbook(stack["env"], stack["inventory"], dict(stack["extra"], gpu_operator_helm_binary=helm),
                        tags="gpu_stack")
    assert back.rc == 0, back.explain()
    assert helm_releases(lab, ns) == []
    wait_for(lambda: pods_by_node(lab, ns, OPERATOR_PLUGIN_PODS) == {}, 60, "the operator's device plugin to go")
    wait_for(lambda: sorted(pods_by_node(lab, ns, DEVICE_PLUGIN_PODS)) == expected_nodes, 60,
             "the device plugin back on every GPU node")


CLUSTER_POLICY_CRD = os.path.join(DATA_DIR, "crds", "openshift_olm", "clusterpolicies.nvidia.com.yaml")
REFUSED_OPERATOR = "Fail when another GPU Operator runs and may not be replaced"


def test_a_gpu_operator_of_another_release_stops_the_run_until_it_may_be_replaced(lab, stack, helm):
    """A GPU Operator installed outside the collection (the stub chart, its ClusterPolicy on, under a release name
    and namespace of its own): the device plugin path stops before any change, naming it, and with
    gpu_operator_replace_existing uninstalls it, then deploys the device plugin."""
    ns = stack["namespace"]
    other_ns, release = "%s-site" % ns, "site-gpu-operator"
    lab.kubectl("apply", "-f", CLUSTER_POLICY_CRD)
    lab.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/clusterpolicies.nvidia.com")
    subprocess.run([helm, "install", release, CHART_DIR, "--namespace", other_ns, "--create-namespace",
                    "--set", "clusterPolicy.enabled=true", "--kubeconfig", lab.kubeconfig, "--wait", "--timeout", "120s"],
                   check=True, capture_output=True)
    try:
        policy = yaml.safe_load(lab.kubectl("get", "clusterpolicy", "cluster-policy", "-o", "yaml").stdout)
        assert policy["metadata"]["annotations"]["meta.helm.sh/release-name"] == release

        refused = run_playbook(stack["env"], stack["inventory"], stack["extra"], tags="gpu_stack")
        assert refused.rc != 0
        [(name, host, result)] = refused.failures()
        assert (name.split(" : ")[-1], host) == (REFUSED_OPERATOR, "localhost")
        assert result["msg"] == (
            "a GPU Operator that this collection did not install runs on this cluster: the CRD "
            "clusterpolicies.nvidia.com is served and ClusterPolicy cluster-policy (Helm release %s in namespace %s). "
            "Its own device plugin would run beside the NVIDIA device plugin this run deploys (gpuops_gpu_stack is "
            "device_plugin). Nothing was changed. Set gpu_operator_replace_existing=true to remove it first (its Helm "
            "release is uninstalled; a ClusterPolicy of no Helm release is deleted, with the OLM Subscriptions and "
            "CSVs named), or set gpu_operator_release_name and gpu_operator_namespace (Helm), or "
            "gpu_operator_olm_namespace (OLM), to the ones found to manage it here." % (release, other_ns))
        assert refused.changed == 0
        assert refused.results("Apply the GPU labels") == [], "the nodes were labelled before the refusal"
        assert helm_releases(lab, other_ns) == [(1, "deployed")]

        replace = dict(stack["extra"], gpu_operator_replace_existing=True, gpu_operator_helm_binary=helm)
        check = run_playbook(stack["env"], stack["inventory"], replace, check=True, tags="gpu_stack")
        assert check.rc == 0, check.explain()
        assert helm_releases(lab, other_ns) == [(1, "deployed")], "check mode uninstalled the release"

        replaced = run_playbook(stack["env"], stack["inventory"], replace, tags="gpu_stack")
        assert replaced.rc == 0, replaced.explain()
        assert helm_releases(lab, other_ns) == []
        assert lab.kubectl("get", "clusterpolicies", "-o", "name").stdout.strip() == ""
        # Looked for once, before the labels; the role's own run did not look again.
        assert [r.get("skipped", False) for r in replaced.results("Look for the GPU Operator's CRD")] == [False, True]
        wait_for(lambda: pods_by_node(lab, other_ns, OPERATOR_PLUGIN_PODS) == {}, 60, "the other operator's device plugin to go")
        wait_for(lambda: sorted(pods_by_node(lab, ns, DEVICE_PLUGIN_PODS)) == gpu_labelled_nodes(lab), 60,
                 "the device plugin on every GPU node")
        assert run_playbook(stack["env"], stack["inventory"], stack["extra"], tags="gpu_stack").rc == 0
    finally:
        subprocess.run([helm, "uninstall", release, "--namespace", other_ns, "--kubeconfig", lab.kubeconfig, "--wait"],
                       check=False, capture_output=True)
        lab.kubectl("delete", "namespace", other_ns, "--ignore-not-found", "--wait=true", "--timeout=50s", check=False)
        lab.kubectl("delete", "-f", CLUSTER_POLICY_CRD, "--ignore-not-found", "--wait=true", "--timeout=50s", check=False)


# (bad values, the one line naming the problem, whether every host reports it: a playbook-wide variable is read
# on every host, a role's only where its play runs).
BAD_INPUTS = [
    ({"gpuops_gpu_stack": "cuda"}, "gpuops_gpu_stack: got 'cuda'; expected one of device_plugin, gpu_operator", True),
    ({"nvidia_device_plugin_version": "0.17"}, "nvidia_device_plugin_version: got '0.17'; expected a release tag of "
     "NVIDIA/k8s-device-plugin, such as v0.17.1 or v0.18.0-rc.1", False),
    ({"nvidia_device_plugin_time_slicing_enabled": True, "nvidia_device_plugin_time_slicing_replicas": 0},
     "nvidia_device_plugin_time_slicing_replicas: got 0; expected a number of replicas per GPU, 1 or more", False),
    ({"gpuops_gpu_stack": "gpu_operator", "gpu_operator_chart_path": "/nonexistent/gpu-operator-v25.3.0.tgz"},
     "gpu_operator_chart_path: got '/nonexistent/gpu-operator-v25.3.0.tgz'; expected a chart archive (.tgz) or a "
     "chart directory that exists on the controller, or null to use the chart repository", False),
    ({"gpu_operator_chart_version": "latest"},
     "gpu_operator_chart_version: got 'latest'; expected a chart version, such as v25.3.0", False),
    ({"mpi_operator_version": "0.8"},
     "mpi_operator_version: got '0.8'; expected a release tag of kubeflow/mpi-operator, such as v0.8.0", False),
    ({"mpi_operator_manifest_src": "/nonexistent/mpi-operator.yaml"},
     "mpi_operator_manifest_src: got '/nonexistent/mpi-operator.yaml'; expected an http(s) URL or an existing file "
     "on the controller (the release's mpi-operator.yaml)", False),
]


@pytest.mark.parametrize("bad, message, everywhere", BAD_INPUTS, ids=[m.split(":")[0] for _b, m, _e in BAD_INPUTS])
def test_bad_input_fails_before_any_api_call(lab, stack, tmp_path, bad, message, everywhere):
    # The API address is unreachable: a call made before the check would fail with a connection error.
    extra = dict(stack["extra"], gpuops_kubeconfig=unreachable_kubeconfig(lab, str(tmp_path / "kubeconfig")))
    extra.update(bad)
    run = run_playbook(stack["env"], stack["inventory"], extra)
    assert run.rc != 0
    failures = run.failures()
    expected_hosts = sorted(["localhost"] + (stack["gpu_nodes"] if everywhere else []))
    assert sorted(host for _name, host, _result in failures) == expected_hosts, run.explain()
    for name, _host, result in failures:
        assert name.endswith("Check the variables of every role this run takes here"), run.explain()
        assert result["problems"] == [message]
    assert run.changed == 0
    assert not run.results("Ask the API"), "the API was asked before the input was checked"


def test_bad_host_variable_fails_before_any_api_call(lab, stack, tmp_path):
    inventory = write_inventory(str(tmp_path / "inventory.yml"), stack["gpu_nodes"],
                                gpu_node_labels_taint_enabled=True,
                                gpu_node_labels_taint={"key": "nvidia.com/gpu", "effect": "Sometimes"})
    extra = dict(stack["extra"], gpuops_kubeconfig=unreachable_kubeconfig(lab, str(tmp_path / "kubeconfig")))
    run = run_playbook(stack["env"], inventory, extra)
    assert run.rc != 0
    failures = run.failures()
    assert sorted(host for _n, host, _r in failures) == sorted(stack["gpu_nodes"])
    assert all(r["problems"] == ['gpu_node_labels_taint: got {"effect": "Sometimes", "key": "nvidia.com/gpu"}; expected '
                                 "a taint whose effect is NoSchedule, PreferNoSchedule or NoExecute"]
               for _n, _h, r in failures)
    assert not run.results("Ask the API")


def _mpi_operator_objects(lab):
    crd = yaml.safe_load(lab.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "yaml").stdout)
    deployment = yaml.safe_load(lab.kubectl("get", "deployment", "-n", "mpi-operator", "mpi-operator",
                                            "-o", "yaml").stdout)
    return crd, deployment


def _mpi_operator_image(deployment):
    return deployment["spec"]["template"]["spec"]["containers"][0]["image"]


def test_mpi_operator_upgrades_in_place_from_the_previous_pin_and_is_idempotent(lab, stack):
    """The role's Deployment next to the lab's controller process: kwok's pod runs nothing, so the only
    reconciler of MPIJobs stays the process (it holds the leader lease; the Deployment's pod never competes)."""
    extra = dict(stack["extra"])
    previous = PREVIOUS_PINS["mpi_operator"]
    at_previous = dict(extra, mpi_operator_version=previous, mpi_operator_manifest_src=previous_mpi_operator_manifest())
    try:
        check = run_playbook(stack["env"], stack["inventory"], at_previous, check=True, diff=True, tags="mpi_operator")
        assert check.rc == 0, check.explain()
        assert lab.kubectl("get", "deployment", "-n", "mpi-operator", "mpi-operator", "--ignore-not-found",
                           "-o", "name").stdout.strip() == "", "check mode created the controller"

        # The release pinned before: Kubeflow's release manifest itself, from the Go module proxy.
        old = run_playbook(stack["env"], stack["inventory"], at_previous, tags="mpi_operator")
        assert old.rc == 0, old.explain()
        crd, deployment = _mpi_operator_objects(lab)
        assert {"type": "Established", "status": "True"}.items() <= [
            c for c in crd["status"]["conditions"] if c["type"] == "Established"][0].items()
        assert "v2beta1" in [v["name"] for v in crd["spec"]["versions"] if v["served"]]
        assert deployment["status"]["availableReplicas"] == 1
        assert _mpi_operator_image(deployment) == "mpioperator/mpi-operator:" + previous.lstrip("v")
        uids = (crd["metadata"]["uid"], deployment["metadata"]["uid"])

        # The current pin, with the role's defaults: upgraded in place, the diff naming the new image.
        upgrade = run_playbook(stack["env"], stack["inventory"], extra, diff=True, tags="mpi_operator")
        assert upgrade.rc == 0, upgrade.explain()
        crd, deployment = _mpi_operator_objects(lab)
        assert (crd["metadata"]["uid"], deployment["metadata"]["uid"]) == uids, "upgrade deleted and recreated"
        current_image = "mpioperator/mpi-operator:" + pinned("mpi_operator").lstrip("v")
        assert _mpi_operator_image(deployment) == current_image
        assert deployment["metadata"]["labels"]["gpuops.io/mpi-operator-version"] == pinned("mpi_operator")
        assert deployment["status"]["updatedReplicas"] == 1 and deployment["status"]["availableReplicas"] == 1
        image_diffs = [item for name, item in upgrade.diffs() if "controller's Deployment" in name
                       and current_image in str(item.get("after"))]
        assert image_diffs, "the upgrade's diff does not show the new image"

        again = run_playbook(stack["env"], stack["inventory"], extra, diff=True, tags="mpi_operator")
        assert again.rc == 0, again.explain()
        assert again.changed == 0, again.explain()
        # The lab's controller process still holds the leader lease: the kwok pod never took over.
        lease = lab.kubectl("get", "lease", "-n", "mpi-operator", "mpi-operator", "-o",
                            "jsonpath={.spec.holderIdentity}").stdout
        assert lease and not lease.startswith("mpi-operator-"), lease
    finally:
        # Leave the lab as it was: no Deployment or RBAC of the role; the CRD stays (the lab applied it).
        down = run_playbook(stack["env"], stack["inventory"], dict(extra, mpi_operator_state="absent"),
                            tags="mpi_operator")
        assert down.rc == 0, down.explain()
    assert lab.kubectl("get", "deployment", "-n", "mpi-operator", "mpi-operator", "--ignore-not-found",
                       "-o", "name").stdout.strip() == ""
    assert lab.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "name").stdout.strip()


def test_mpi_operator_stops_at_an_mpijob_crd_that_serves_v1(lab, stack):
    """The Kubeflow Training Operator's MPIJob v1 beside the lab's MPI Operator: a served v1 version added to the
    lab's CRD stands in for it (replacing the CRD would take the API from the lab's running MPI Operator)."""
    v1 = {"name": "v1", "served": True, "storage": False,
          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    lab.kubectl("patch", "crd", "mpijobs.kubeflow.org", "--type=json",
                "-p", json.dumps([{"op": "add", "path": "/spec/versions/-", "value": v1}]))
    try:
        before = yaml.safe_load(lab.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "yaml").stdout)
        run = run_playbook(stack["env"], stack["inventory"], stack["extra"], tags="mpi_operator")
        assert run.rc != 0
        [(name, host, result)] = run.failures()
        assert (name.split(" : ")[-1], host) == ("Fail when the cluster's MPIJob CRD serves kubeflow.org/v1", "localhost")
        assert result["msg"].startswith(
            "the cluster's CRD mpijobs.kubeflow.org serves MPIJob kubeflow.org/v1 (served versions v2beta1, v1, stored "
            "v2beta1): the Kubeflow Training Operator's MPIJob, or an MPI Operator before v0.4; 0 MPIJob(s) of that "
            "version exist. The MPI Operator %s serves MPIJob v2beta1 under the same CRD name. Nothing was changed. "
            % pinned("mpi_operator")), result["msg"]
        assert "--enable-scheme=tfjob --enable-scheme=pytorchjob" in result["msg"]
        assert "kubectl delete crd mpijobs.kubeflow.org" in result["msg"]
        assert run.changed == 0
        after = yaml.safe_load(lab.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "yaml").stdout)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert lab.kubectl("get", "deployment", "-n", "mpi-operator", "mpi-operator", "--ignore-not-found",
                           "-o", "name").stdout.strip() == ""
    finally:
        versions = yaml.safe_load(lab.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "yaml").stdout)["spec"]["versions"]
        index = [v["name"] for v in versions].index("v1")
        lab.kubectl("patch", "crd", "mpijobs.kubeflow.org", "--type=json",
                    "-p", json.dumps([{"op": "remove", "path": "/spec/versions/%d" % index}]))


def test_device_plugin_upgrades_in_place_from_the_previous_pin(lab, stack):
    ns = stack["namespace"]
    previous = PREVIOUS_PINS["nvidia_device_plugin"]
    old = run_playbook(stack["env"], stack["inventory"], dict(stack["extra"], nvidia_device_plugin_version=previous),
                       tags="nvidia_device_plugin")
    assert old.rc == 0, old.explain()
    before = daemonset(lab, ns, "nvidia-device-plugin")
    assert before["spec"]["template"]["spec"]["containers"][0]["image"] == "nvcr.io/nvidia/k8s-device-plugin:" + previous

    upgrade = run_playbook(stack["env"], stack["inventory"], stack["extra"], diff=True, tags="nvidia_device_plugin")
    assert upgrade.rc == 0, upgrade.explain()
    after = daemonset(lab, ns, "nvidia-device-plugin")
    assert after["metadata"]["uid"] == before["metadata"]["uid"], "upgrade deleted and recreated the DaemonSet"
    assert after["spec"]["template"]["spec"]["containers"][0]["image"] == DEVICE_PLUGIN_IMAGE
    assert [item for name, item in upgrade.diffs() if "Apply the device plugin" in name
            and DEVICE_PLUGIN_IMAGE in str(item.get("after"))], "the upgrade's diff does not show the new image"
    expected_nodes = gpu_labelled_nodes(lab)

    def rolled_to_the_pin():
        placed = pods_by_node(lab, ns, DEVICE_PLUGIN_PODS)
        return sorted(placed) == expected_nodes and all(
            pod.spec.containers[0].image == DEVICE_PLUGIN_IMAGE for pod in placed.values())

    wait_for(rolled_to_the_pin, 120, "the device plugin pods to roll to " + DEVICE_PLUGIN_IMAGE)
    assert run_playbook(stack["env"], stack["inventory"], stack["extra"], tags="nvidia_device_plugin").changed == 0


def test_device_plugin_from_a_static_manifest(lab, stack, tmp_path):
    """nvidia_device_plugin_manifest_src: a manifest in the shape of NVIDIA's static one (a DaemonSet without a
    nodeSelector, written here, not NVIDIA's file) gets the GPU node selector; absent removes what it holds."""
    ns = "%s-static" % stack["namespace"]
    manifest = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": ns},
         "spec": {"selector": {"matchLabels": {"name": "nvidia-device-plugin-ds"}},
                  "template": {"metadata": {"labels": {"name": "nvidia-device-plugin-ds"}},
                               "spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                                         "effect": "NoSchedule"}],
                                        "priorityClassName": "system-node-critical",
                                        "containers": [{"name": "nvidia-device-plugin-ctr",
                                                        "image": DEVICE_PLUGIN_IMAGE}]}}}},
    ]
    path = tmp_path / "nvidia-device-plugin.yml"
    path.write_text(yaml.safe_dump_all(manifest))
    extra = dict(stack["extra"], nvidia_device_plugin_manifest_src=str(path))
    try:
        run = run_playbook(stack["env"], stack["inventory"], extra, tags="nvidia_device_plugin")
        assert run.rc == 0, run.explain()
        ds = daemonset(lab, ns, "nvidia-device-plugin-daemonset")
        assert ds["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
        expected_nodes = gpu_labelled_nodes(lab)
        assert ds["status"]["desiredNumberScheduled"] == len(expected_nodes)
        assert sorted(pods_by_node(lab, ns, "name=nvidia-device-plugin-ds")) == expected_nodes
        assert run_playbook(stack["env"], stack["inventory"], extra, tags="nvidia_device_plugin").changed == 0

        removed = run_playbook(stack["env"], stack["inventory"], dict(extra, nvidia_device_plugin_state="absent"),
                               tags="nvidia_device_plugin")
        assert removed.rc == 0, removed.explain()
        assert daemonset(lab, ns, "nvidia-device-plugin-daemonset") is None
        assert pods_by_node(lab, ns, "name=nvidia-device-plugin-ds") == {}
        assert lab.core.read_namespace(ns).metadata.name == ns, "the namespace is never deleted"
    finally:
        lab.kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=true", "--timeout=50s", check=False)
