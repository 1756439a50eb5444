# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU stack's OpenShift paths against the lab, with test-only CRDs standing in for OpenShift's and OLM's APIs.

tests/integration/data/crds/openshift_olm/ makes the lab's API serve SecurityContextConstraints, OLM's
OperatorGroup, Subscription, InstallPlan and ClusterServiceVersion, and the GPU Operator's ClusterPolicy, so the
roles detect "OpenShift with OLM". A thread plays OLM and the operator: it answers a Subscription with an
InstallPlan waiting for approval, installs the CSV (with an example ClusterPolicy) once the plan is approved, and
marks a ClusterPolicy ready. The real OLM, catalog and operator are not part of this; SCC admission is not
enforced (the CRD only stores the object).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid

import pytest

from gpu_stack_harness import (
    DATA_DIR, WITHOUT_GPU_VALIDATION, ansible_env, fake_node, mpi_operator_manifest, run_playbook, unique, wait_for,
    write_inventory,
)
from gpuops_testlib.versions import pinned

OLM = ("operators.coreos.com", "v1alpha1")
CRDS = os.path.join(DATA_DIR, "crds", "openshift_olm")
STARTING_CSV = "gpu-operator-certified." + pinned("gpu_operator_chart")
CHANNEL = ".".join(pinned("gpu_operator_chart").split(".")[:2])
EXAMPLE_POLICY = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "gpu-cluster-policy"},
                  "spec": {"operator": {"defaultRuntime": "crio"}, "driver": {"enabled": True, "useOpenKernelModules": False},
                           "mig": {"strategy": "single"}, "devicePlugin": {"enabled": True},
                           "dcgmExporter": {"enabled": True}}}


@pytest.fixture(scope="module")
def openshift_apis(lab):
    """The stand-in CRDs, Established; deleted (and waited for) at the end so later tests see plain Kubernetes."""
    lab.kubectl("apply", "-f", CRDS)
    names = sorted(name[:-len(".yaml")] for name in os.listdir(CRDS) if name.endswith(".yaml"))
    lab.kubectl("wait", "--for=condition=Established", "--timeout=60s", *["crd/%s" % n for n in names])
    yield
    lab.kubectl("delete", "-f", CRDS, "--wait=true", "--timeout=50s", check=False)


class FakeOlm(threading.Thread):
    """OLM's and the GPU Operator's side of the exchange, just enough to drive the role's waits."""

    def __init__(self, lab, namespace):
        super().__init__(daemon=True)
        self.lab = lab
        self.namespace = namespace
        self.stop = threading.Event()
        self.errors = []

    def _list(self, plural, version=OLM[1], group=OLM[0]):
        return self.lab.custom.list_namespaced_custom_object(group, version, self.namespace, plural)["items"]

    def _status(self, plural, name, status):
        self.lab.custom.patch_namespaced_custom_object_status(OLM[0], OLM[1], self.namespace, plural, name,
                                                              {"status": status})

    def step(self):
        for sub in self._list("subscriptions"):
            status = sub.get("status") or {}
            if not status.get("installPlanRef"):
                plan = "install-%s" % uuid.uuid4().hex[:5]
                self.lab.custom.create_namespaced_custom_object(OLM[0], OLM[1], self.namespace, "installplans", {
                    "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                    "metadata": {"name": plan, "namespace": self.namespace},
                    "spec": {"approval": "Manual", "approved": False,
                             "clusterServiceVersionNames": [sub["spec"]["startingCSV"]]}})
                self._status("subscriptions", sub["metadata"]["name"],
                             {"state": "UpgradePending", "installPlanRef": {"name": plan, "namespace": self.namespace}})
        csvs = set(csv["metadata"]["name"] for csv in self._list("clusterserviceversions"))
        for plan in self._list("installplans"):
            # OLM carries out an approved plan once; a finished plan is never run again.
            if plan["spec"].get("approved") and (plan.get("status") or {}).get("phase") != "Complete":
                for csv in plan["spec"]["clusterServiceVersionNames"]:
                    if csv not in csvs:
                        self.lab.custom.create_namespaced_custom_object(
                            OLM[0], OLM[1], self.namespace, "clusterserviceversions", {
                                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                                "metadata": {"name": csv, "namespace": self.namespace,
                                             "annotations": {"alm-examples": json.dumps([EXAMPLE_POLICY])}},
                                "spec": {"displayName": "NVIDIA GPU Operator"}})
                        self._status("clusterserviceversions", csv, {"phase": "Succeeded"})
                    for sub in self._list("subscriptions"):
                        self._status("subscriptions", sub["metadata"]["name"],
                                     {"state": "AtLatestKnown", "installedCSV": csv})
                self._status("installplans", plan["metadata"]["name"], {"phase": "Complete"})
        for policy in self.lab.custom.list_cluster_custom_object("nvidia.com", "v1", "clusterpolicies")["items"]:
            if (policy.get("status") or {}).get("state") != "ready":
                self.lab.custom.patch_cluster_custom_object_status("nvidia.com", "v1", "clusterpolicies",
                                                                   policy["metadata"]["name"],
                                                                   {"status": {"state": "ready"}})

    def run(self):
        while not self.stop.is_set():
            try:
                self.step()
            except Exception as exc:  # pylint: disable=broad-except
                # Kept for the test's failure message; the loop goes on (objects may vanish mid-step).
                self.errors.append(repr(exc))
            time.sleep(0.3)


def test_openshift_device_plugin_then_olm_operator_and_back(lab, openshift_apis, tmp_path):
    prefix = unique("os")
    gpu_nodes = ["%s-gpu-a" % prefix, "%s-gpu-b" % prefix]
    for name in gpu_nodes:
        lab.core.create_node(fake_node(name))
    plugin_ns, olm_ns = "%s-plugin" % prefix, "%s-olm" % prefix
    env = ansible_env(str(tmp_path))
    inventory = write_inventory(str(tmp_path / "inventory.yml"), gpu_nodes)
    extra = {"gpuops_kubeconfig": lab.kubeconfig, "nvidia_device_plugin_namespace": plugin_ns,
             "nvidia_device_plugin_name": "%s-dp" % prefix, "gpu_operator_olm_namespace": olm_ns,
             "gpu_operator_cluster_policy_name": "%s-policy" % prefix, "nvidia_device_plugin_wait_timeout": 180,
             "gpu_operator_wait_timeout": 120, "mpi_operator_manifest_src": mpi_operator_manifest(),
             **WITHOUT_GPU_VALIDATION}
    olm = FakeOlm(lab, olm_ns)
    try:
        # The device plugin on "OpenShift": the SCC for its service account, the namespace without a node selector.
        plugin = run_playbook(env, inventory, extra, tags="gpu_stack")
        assert plugin.rc == 0, plugin.explain()
        scc = lab.custom.get_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints",
                                                   "%s-dp" % prefix)
        assert scc["users"] == ["system:serviceaccount:%s:%s-dp" % (plugin_ns, prefix)]
        assert scc["allowHostDirVolumePlugin"] is True and scc["allowPrivilegedContainer"] is False
        assert lab.core.read_namespace(plugin_ns).metadata.annotations["openshift.io/node-selector"] == ""
        for name in gpu_nodes:
            assert lab.core.read_node(name).metadata.labels["openshift.com/gpu-accelerator"] == "true"

        # Switch to the operator: OLM is detected, the plugin and its SCC go first.
        olm.start()
        operator = dict(extra, gpuops_gpu_stack="gpu_operator", gpu_operator_driver_enabled=False,
                        gpu_operator_mig_strategy="mixed")
        run = run_playbook(env, inventory, operator, tags="gpu_stack")
        assert run.rc == 0, run.explain() + "\nfake OLM: %s" % olm.errors[-3:]
        assert lab.kubectl("get", "daemonset", "-n", plugin_ns, "--no-headers", "-o", "name").stdout.strip() == ""
        assert lab.kubectl("get", "securitycontextconstraints", "%s-dp" % prefix, "--ignore-not-found",
                           "-o", "name").stdout.strip() == ""
        sub = lab.custom.get_namespaced_custom_object(OLM[0], OLM[1], olm_ns, "subscriptions", "gpu-operator-certified")
        assert sub["spec"] == {"name": "gpu-operator-certified", "channel": CHANNEL, "startingCSV": STARTING_CSV,
                               "installPlanApproval": "Manual", "source": "certified-operators",
                               "sourceNamespace": "openshift-marketplace"}
        (plan,) = lab.custom.list_namespaced_custom_object(OLM[0], OLM[1], olm_ns, "installplans")["items"]
        assert plan["spec"]["approved"] is True
        policy = lab.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "%s-policy" % prefix)
        # The CSV's example with the role's settings over it.
        assert policy["spec"] == dict(EXAMPLE_POLICY["spec"], driver={"enabled": False, "useOpenKernelModules": False},
                                      mig={"strategy": "mixed"})

        again = run_playbook(env, inventory, operator, tags="gpu_stack")
        assert again.rc == 0, again.explain()
        assert again.changed == 0, again.explain()

        # And back: the ClusterPolicy, Subscription, CSV and OperatorGroup go; the device plugin returns.
        back = run_playbook(env, inventory, extra, tags="gpu_stack")
        assert back.rc == 0, back.explain()
        for plural in ("subscriptions", "clusterserviceversions"):
            assert lab.custom.list_namespaced_custom_object(OLM[0], OLM[1], olm_ns, plural)["items"] == []
        assert lab.custom.list_namespaced_custom_object("operators.coreos.com", "v1", olm_ns,
                                                        "operatorgroups")["items"] == []
        assert lab.kubectl("get", "clusterpolicy", "%s-policy" % prefix, "--ignore-not-found",
                           "-o", "name").stdout.strip() == ""

        def plugin_back():
            return lab.kubectl("get", "daemonset", "-n", plugin_ns, "-o", "name").stdout.strip()

        wait_for(plugin_back, 30, "the device plugin back")
    finally:
        olm.stop.set()
        lab.kubectl("delete", "clusterpolicy", "%s-policy" % prefix, "--ignore-not-found", check=False)
        lab.kubectl("delete", "securitycontextconstraints", "%s-dp" % prefix, "--ignore-not-found", check=False)
        for namespace in (plugin_ns, olm_ns):
            lab.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true", "--timeout=50s",
                        check=False)
        for name in gpu_nodes:
            lab.kubectl("delete", "node", name, "--ignore-not-found", check=False)


def test_a_gpu_operator_subscribed_elsewhere_stops_the_run_until_it_may_be_replaced(lab, openshift_apis, tmp_path):
    """An OLM install that is not the collection's: a Subscription to the package in a namespace of its own, with
    its CSV, and a ClusterPolicy without the collection's label. The device plugin path stops naming them, and
    with gpu_operator_replace_existing deletes the ClusterPolicy, the Subscription and the CSV, then goes on."""
    prefix = unique("os")
    gpu_node, site_ns, policy = "%s-gpu" % prefix, "%s-site" % prefix, "%s-site-policy" % prefix
    csv = "gpu-operator-certified.v25.3.0"
    lab.core.create_node(fake_node(gpu_node))
    lab.kubectl("create", "namespace", site_ns)
    lab.custom.create_namespaced_custom_object(OLM[0], OLM[1], site_ns, "subscriptions", {
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": "gpu-operator-certified", "namespace": site_ns},
        "spec": {"name": "gpu-operator-certified", "channel": "v25.3", "source": "certified-operators",
                 "sourceNamespace": "openshift-marketplace"}})
    lab.custom.patch_namespaced_custom_object_status(OLM[0], OLM[1], site_ns, "subscriptions", "gpu-operator-certified",
                                                     {"status": {"installedCSV": csv}})
    lab.custom.create_namespaced_custom_object(OLM[0], OLM[1], site_ns, "clusterserviceversions", {
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": csv, "namespace": site_ns}, "spec": {"displayName": "NVIDIA GPU Operator"}})
    lab.custom.create_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", dict(
        EXAMPLE_POLICY, metadata={"name": policy}))
    env = ansible_env(str(tmp_path))
    inventory = write_inventory(str(tmp_path / "inventory.yml"), [gpu_node])
    extra = {"gpuops_kubeconfig": lab.kubeconfig, "nvidia_device_plugin_namespace": "%s-plugin" % prefix,
             "nvidia_device_plugin_name": "%s-dp" % prefix, "gpu_operator_olm_namespace": "%s-olm" % prefix,
             "nvidia_device_plugin_wait_timeout": 180, "gpu_operator_wait_timeout": 120,
             "mpi_operator_manifest_src": mpi_operator_manifest(), **WITHOUT_GPU_VALIDATION}
    try:
        refused = run_playbook(env, inventory, extra, tags="gpu_stack")
        assert refused.rc != 0
        [(_name, host, result)] = refused.failures()
        assert host == "localhost"
        assert ("is served and ClusterPolicy %s (no Helm release; OLM Subscription gpu-operator-certified in "
                "namespace %s). Its own device plugin" % (policy, site_ns)) in result["msg"], result["msg"]
        assert refused.changed == 0

        replaced = run_playbook(env, inventory, dict(extra, gpu_operator_replace_existing=True), tags="gpu_stack")
        assert replaced.rc == 0, replaced.explain()
        assert lab.kubectl("get", "clusterpolicy", policy, "--ignore-not-found", "-o", "name").stdout.strip() == ""
        for plural in ("subscriptions", "clusterserviceversions"):
            assert lab.custom.list_namespaced_custom_object(OLM[0], OLM[1], site_ns, plural)["items"] == []
        assert lab.kubectl("get", "daemonset", "-n", "%s-plugin" % prefix, "-o", "name").stdout.strip()
    finally:
        lab.kubectl("delete", "clusterpolicy", policy, "--ignore-not-found", check=False)
        lab.kubectl("delete", "securitycontextconstraints", "%s-dp" % prefix, "--ignore-not-found", check=False)
        for namespace in (site_ns, "%s-plugin" % prefix):
            lab.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true", "--timeout=50s",
                        check=False)
        lab.kubectl("delete", "node", gpu_node, "--ignore-not-found", check=False)
