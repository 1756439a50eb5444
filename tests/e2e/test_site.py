# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The main job end to end, as a person runs it: tools/lab.sh (make lab) twice, the example inventories
checked against the lab it made, then tools/lab_down.sh (make lab-down).

The lab is the default one (cluster gpuops-lab, podman network gpuops-lab, containers gpuops-lab-*); the
integration tier's control plane is a cluster of its own and is left alone. Whatever happens, the lab is
taken down at the end of this module. The first run builds what the cache lacks (on a fresh machine: the
node image, Horovod, the workload image and the Kubernetes binaries, which take long).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from gpuops_testlib.ansible_run import AnsibleRunError, ansible_env, mode_options, program, run_playbook, write_play
from gpuops_testlib.lab_pods import SHORT_BENCHMARK_ARGS, WORKLOAD_BENCHMARK, WORKLOAD_PYTHON, controller_inventory
from main_job import (
    EXAMPLES, KUBECONFIG, LAB_DIR, LAB_DOWN, LAUNCHERS, MPI_OPERATOR_MANIFEST, REPO_ROOT, RUN_DIR, TRAINING_DIR,
    TRAINING_OPERATOR_KUSTOMIZATION, TWO_GPU_JOB, VALIDATE_NODE_VARS, Run, command_env, kubectl, lab_containers,
    lab_kubectl_path, lab_network_exists, lab_processes, listening_ports, take_down_a_lab_left_up, workload_image,
)


LAUNCHED_BY = {"MPIJob": "an MPIJob (default/gpuops-benchmark)",
               "SSH launcher": "horovodrun --gloo over SSH (node1, node2)"}
# Where the ranks ran, as the log names them: the MPIJob's worker pods, or the nodes themselves.
HOSTS = {"MPIJob": ["gpuops-benchmark-worker-0", "gpuops-benchmark-worker-1"], "SSH launcher": ["node1", "node2"]}


def _headline(output):
    """The headline tools/lab.sh prints last, and its site.yml line."""
    assert "==== gpuops lab:" in output, output[-4000:]
    summary = output[output.index("==== gpuops lab:"):]
    assert re.search(r"^==== gpuops lab: PASSED in \S+ ====$", summary, re.M), summary
    return summary


def _check_launchers():
    """Each launcher's verdict, read from the JSON report its training_verdict role wrote."""
    for name, stem in LAUNCHERS.items():
        report_path = os.path.join(TRAINING_DIR, stem + ".json")
        with open(report_path, encoding="utf-8") as handle:
            report = json.load(handle)
        assert report["passed"] is True, (name, report["failures"])
        assert report["ranks"] == 4 and report["device"] == "CPU" and report["complete"] is True, report
        assert report["model"] == "small_cnn" and report["batch_size"] == 16, report
        assert sorted({rank["host"] for rank in report["per_rank"]}) == HOSTS[name]
        # The rank census: two ranks on each host, as the launcher placed them.
        assert report["placement"] == {"hosts": dict((host, 2) for host in HOSTS[name]), "ranks_named": 4,
                                       "expected": [2, 2]}, report["placement"]
        assert report["img_per_sec_total"]["mean"] > 0 and report["baseline_img_per_sec"] > 0
        # The baseline is the lab's one rank alone, read from its report: a run of the same kind, so no warning.
        baseline_report = os.path.join(TRAINING_DIR, "lab-baseline.json")
        assert report["baseline"]["path"] == baseline_report and report["baseline"]["ranks"] == 1, report["baseline"]
        assert not [warning for warning in report["warnings"] if "baseline" in warning], report["warnings"]
        assert report["scaling_efficiency"] == pytest.approx(
            report["img_per_sec_total"]["mean"] / (4 * report["baseline_img_per_sec"]), rel=0.01)
        assert report["transports"] == {}
        # The lines a person reads are the report's own, made where the log was judged.
        lines = dict(line.split(":", 1) for line in report["summary"])
        assert lines["verdict"].strip().startswith("PASSED (" + LAUNCHED_BY[name]), lines
        assert lines["scaling"].strip().endswith(", measured in %s)" % baseline_report), lines
        assert lines["transport"].strip() == "no NCCL: CPU ranks, " + (
            "Open MPI over TCP" if name == "MPIJob" else "Gloo over TCP"), lines
        assert lines["report"].strip() == report_path
        assert lines["placement"].strip() == "2 hosts (%s: 2 ranks, %s: 2 ranks), as the launcher placed them (2 hosts " \
            "of 2 ranks each)" % tuple(HOSTS[name])
        chart = os.path.join(TRAINING_DIR, stem + ".png")
        assert lines["chart"].strip() == chart
        with open(chart, "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    # The MPIJob's workers ran in real pods on both lab nodes, placed there by the scheduler.
    events = json.loads(kubectl("get", "events", "-n", "default", "--field-selector", "reason=Scheduled",
                                "-o", "json").stdout)["items"]
    placed = dict(re.match(r"Successfully assigned default/(\S+) to (\S+)", event["message"]).groups()
                  for event in events if "gpuops-benchmark-worker-" in event["message"])
    assert sorted(placed.values()) == ["node1", "node2"], placed


def _site_recap():
    with open(os.path.join(LAB_DIR, "logs", "site.log"), encoding="utf-8") as handle:
        log = handle.read()
    recap = log[log.rindex("PLAY RECAP"):]
    hosts = dict(re.findall(r"^(\S+)\s+: (ok=.*)$", recap, re.M))
    return {host: dict((key, int(value)) for key, value in re.findall(r"(\w+)=(\d+)", counts))
            for host, counts in hosts.items()}


def test_first_run_creates_the_lab_and_passes_through_both_launchers(first_run):
    assert first_run.rc == 0, first_run.explain()
    _headline(first_run.output)
    for number in range(1, 8):
        assert re.search(r"stage %d/7: .*(done in \S+|present)" % number, first_run.output) or (
            # A lab of the same inputs measured the one-rank baseline before; it is kept across teardowns.
            number == 5 and "stage 5/7: baseline reused (" in first_run.output), number
    _check_launchers()
    recap = _site_recap()
    assert sorted(recap) == ["localhost", "node1", "node2"]
    assert all(counts["failed"] == 0 and counts["unreachable"] == 0 for counts in recap.values()), recap
    sys.stderr.write("first make lab: %.0f s\n" % first_run.seconds)


def test_second_run_changes_nothing_and_passes_again(second_run):
    assert second_run.rc == 0, second_run.explain()
    summary = _headline(second_run.output)
    recap = _site_recap()
    assert sorted(recap) == ["localhost", "node1", "node2"]
    assert all(counts["changed"] == 0 and counts["failed"] == 0 for counts in recap.values()), recap
    assert re.search(r"^site\.yml: +changed=0 on every host", summary, re.M), summary
    # Nothing was built or recorded again.
    assert "stage 5/7: baseline present" in second_run.output
    assert "[workload-image] present:" in second_run.output or "building" not in second_run.output
    _check_launchers()
    sys.stderr.write("second make lab: %.0f s\n" % second_run.seconds)


def _inventory(name):
    out = subprocess.run([program("ansible-inventory"), "-i", os.path.join(EXAMPLES, name), "--list"], cwd=REPO_ROOT,
                         env=command_env(), capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "WARNING" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def _ranks(variables):
    slots = variables["mpijob_launcher_slots_per_worker"]
    assert slots == variables["mpijob_launcher_gpus_per_worker"] or variables["mpijob_launcher_gpus_per_worker"] == 1
    return variables["mpijob_launcher_workers"] * slots


def test_dgx_openshift_example_lists_two_dgx_nodes_a_16_rank_job_and_a_2_gpu_job():
    inventory = _inventory("dgx-openshift")
    assert inventory["gpu_nodes"]["hosts"] == ["dgx-01", "dgx-02"]
    for host in ("dgx-01", "dgx-02"):
        variables = inventory["_meta"]["hostvars"][host]
        assert variables["gpuops_gpu_stack"] == "device_plugin"
        assert variables["gpu_network_bond_members"] == ["enp1s0f0", "enp1s0f1"]
        assert variables["gpu_network_bond_mtu"] == 9000
        assert len(variables["gpu_network_bond_addresses"]) == 1
        assert (variables["mpijob_launcher_workers"], variables["mpijob_launcher_slots_per_worker"],
                variables["mpijob_launcher_gpus_per_worker"]) == (2, 8, 8)
        assert _ranks(variables) == variables["gpuops_training_expect_ranks"] == 16
        assert variables["gpuops_training_require_transport"] == ["P2P", "NET/Socket"]
    addresses = {inventory["_meta"]["hostvars"][host]["gpu_network_bond_addresses"][0] for host in ("dgx-01", "dgx-02")}
    assert len(addresses) == 2
    with open(TWO_GPU_JOB, encoding="utf-8") as handle:
        job = yaml.safe_load(handle)
    assert (job["mpijob_launcher_workers"], job["mpijob_launcher_slots_per_worker"],
            job["mpijob_launcher_gpus_per_worker"]) == (2, 1, 1)
    assert _ranks(job) == job["gpuops_training_expect_ranks"] == 2
    # One worker per node, by a spread constraint rather than by requests sized to fill a node.
    assert job["mpijob_launcher_spread_workers"] is True and "kube_job_resources" not in job


def test_cloud_example_lists_four_vms_with_1g_hugepages_and_one_nic_per_gpu():
    inventory = _inventory("cloud-vms")
    hosts = ["gpu-vm-1", "gpu-vm-2", "gpu-vm-3", "gpu-vm-4"]
    assert inventory["gpu_nodes"]["hosts"] == hosts
    addresses = set()
    for host in hosts:
        variables = inventory["_meta"]["hostvars"][host]
        assert variables["hugepages_1g_count"] > 0 and variables["hugepages_mount_page_size"] == "1G"
        nics = variables["gpu_network_secondary_nics"]
        assert len(nics) == variables["mpijob_launcher_gpus_per_worker"] == 8
        assert len({nic["device"] for nic in nics}) == len({nic["table"] for nic in nics}) == 8
        addresses.update(nic["address"] for nic in nics)
        # NCCL's sockets over exactly those NICs, from gpuops_nccl: the VMs' /etc/nccl.conf and the ranks alike.
        assert variables["gpuops_nccl"]["NCCL_SOCKET_IFNAME"].split(",") == [nic["device"] for nic in nics]
        assert variables["mpijob_launcher_workers"] == len(hosts)
        assert _ranks(variables) == variables["gpuops_training_expect_ranks"] == 32
        assert variables["kube_job_resources"]["hugepages-1Gi"].endswith("Gi")
    assert len(addresses) == 32


@pytest.mark.parametrize("example", ["dgx-openshift", "cloud-vms", "dgx-h100-ib"])
def test_examples_grant_no_reboot_and_no_runtime_restart(example):
    """An example copied into production must not reboot nodes or restart their runtime: those are granted for a
    maintenance window, on the command line."""
    hostvars = _inventory(example)["_meta"]["hostvars"]
    granted = sorted("%s: %s" % (host, name) for host, variables in hostvars.items() for name, value in variables.items()
                     if name.endswith(("_reboot_allowed", "_restart_allowed")) and value not in (None, False))
    assert granted == []
    # The drain is set up (it happens only once a reboot or restart is granted), with the collection's kubeconfig.
    assert {variables["node_reboot_kubernetes_node_name"] for variables in hostvars.values()} == {
        "{{ inventory_hostname }}"}
    assert not any("node_reboot_kubeconfig" in variables for variables in hostvars.values())


@pytest.mark.parametrize("example", ["dgx-openshift", "cloud-vms", "dgx-h100-ib"])
def test_example_node_variables_pass_the_roles_argument_specs(example):
    run = Run([program("ansible-playbook"), "-i", os.path.join(EXAMPLES, example), VALIDATE_NODE_VARS], timeout=600)
    assert run.rc == 0, run.explain()
    recap = run.output[run.output.rindex("PLAY RECAP"):]
    assert len(re.findall(r": ok=1 .*failed=0", recap)) == len(_inventory(example)["gpu_nodes"]["hosts"]), recap
    # The same check refuses a bad value, naming it: it is not vacuous.
    bad = Run([program("ansible-playbook"), "-i", os.path.join(EXAMPLES, example), VALIDATE_NODE_VARS,
               "-e", "hugepages_unsupported_action=ignore"], timeout=600)
    assert bad.rc != 0 and "hugepages_unsupported_action must be one of" in bad.output, bad.explain()


def _lab_client():
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    return client.CoreV1Api(config.new_client_from_config(config_file=KUBECONFIG))


def _fake_node(name, cpu, gpus, offers=None, ready=("True", "KubeletReady", "reported by the test")):
    """A Node of the example's, Ready as its kubelet would have reported it just now: the cluster check before the run
    asks that of every GPU host's node, and the node controller marks it Unknown only after its grace period (tens of
    seconds; the check runs in the first seconds). `offers`: extended resources it offers too, as a device plugin's."""
    capacity = dict({"cpu": str(cpu), "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}, **(offers or {}))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    status, reason, message = ready
    ready = {"type": "Ready", "status": status, "reason": reason, "message": message, "lastHeartbeatTime": now,
             "lastTransitionTime": now}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "type": "kwok",
                                                  "gpuops.io/e2e-example": "true"},
                         "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {},
            "status": {"capacity": capacity, "allocatable": capacity, "conditions": [ready],
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "fake"}}}


def _check_run(example, extra_files=(), playbook="site.yml", tags="gpu_stack,mpi_operator,verify"):
    """playbook --check --diff of an example against the lab API, with the JSON callback."""
    overrides = {
        # The example's cluster is the lab's for this check.
        "gpuops_kubeconfig": KUBECONFIG,
        # The example's manifest URL is GitHub, out of reach here: the same release's file, from the Go module cache.
        "mpi_operator_manifest_src": MPI_OPERATOR_MANIFEST,
        "training_operator_manifest_src": TRAINING_OPERATOR_KUSTOMIZATION,
        "training_operator_kustomize_binary": lab_kubectl_path(),
        # Nothing reaches the example's hosts: no node stage, and the GPU values come from here, not nvidia-smi.
        "prepare_nodes_hosts": "no_host_in_this_check",
        "gpu_node_labels_gather_enabled": False,
        "gpu_node_labels_gpu_count": 8,
        "gpu_node_labels_gpu_product": "NVIDIA-A100-SXM4-80GB",
    }
    done = run_playbook(os.path.join(REPO_ROOT, "playbooks", playbook), os.path.join(EXAMPLES, example),
                        [json.dumps(overrides)] + ["@" + path for path in extra_files],
                        mode_options(check=True, diff=True, tags=tags),
                        env=ansible_env(TMPDIR=os.path.join(LAB_DIR, "tmp")), timeout=900)
    try:
        report = done.document
    except AnsibleRunError:
        pytest.fail("no JSON from ansible-playbook:\n" + done.explain(), pytrace=False)
    return done, report, list(done.tasks())


def _result(results, name):
    """The first result, not skipped, of the task with this name (a role's tasks are named "<role> : <name>")."""
    found = [result for task, _host, result in results
             if (task == name or task.endswith(" : " + name)) and not result.get("skipped")]
    assert found, "no result of task %r" % name
    return found[0]


@pytest.mark.parametrize("example, nodes, job, extra, ranks, resource", [
    ("dgx-openshift", ["dgx-01", "dgx-02"], "gpuops-16gpu", (), 16, None),
    ("dgx-openshift", ["dgx-01", "dgx-02"], "gpuops-2gpu", (TWO_GPU_JOB,), 2, None),
    ("cloud-vms", ["gpu-vm-1", "gpu-vm-2", "gpu-vm-3", "gpu-vm-4"], "gpuops-32gpu", (), 32, ("hugepages-1Gi", "32Gi")),
    ("dgx-h100-ib", ["dgx-h100-01", "dgx-h100-02"], "gpuops-h100-ib", (), 16, ("rdma/rdma_shared_device_a", "1")),
])
def test_example_check_mode_against_the_lab_plans_labels_and_the_job_and_creates_nothing(  # pylint: disable=too-many-arguments
        second_run, example, nodes, job, extra, ranks, resource):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    core = _lab_client()
    # The InfiniBand example's pods ask for the RDMA device plugin's resource, which its nodes offer (the cluster
    # check refuses a resource no GPU host's node offers).
    offers = {resource[0]: "8"} if resource and "/" in resource[0] else None
    for name in nodes:
        core.create_node(_fake_node(name, cpu=80, gpus=8, offers=offers))
    try:
        playbook = "site.yml" if not extra else "verify_training.yml"
        tags = "gpu_stack,mpi_operator,verify" if not extra else "all"
        run, report, results = _check_run(example, extra, playbook, tags)
        failures = [(task, host, result.get("msg")) for task, host, result in results if result.get("failed")]
        assert run.rc == 0 and not failures, "%s\n%s" % (failures, run.output[-3000:])
        hosts_seen = {host for _task, host, _result in results}
        assert not set(nodes) & {host for host, stats in report["stats"].items() if stats.get("unreachable")}

        planned = _result(results, "Run the benchmark as an MPIJob and wait until it succeeds (failing as soon as it fails)")
        assert planned["changed"] is True and planned["method"] == "created", planned
        spec = planned["spec"]
        worker = spec["mpiReplicaSpecs"]["Worker"]
        assert worker["replicas"] == len(nodes)
        assert spec["slotsPerWorker"] * worker["replicas"] == ranks
        container = worker["template"]["spec"]["containers"][0]
        assert int(container["resources"]["limits"]["nvidia.com/gpu"]) == ranks // worker["replicas"]
        if resource:
            assert container["resources"]["limits"][resource[0]] == resource[1], container["resources"]
        # The cutoff-aggregation and InfiniBand examples spread their two workers over the two nodes.
        spread = worker["template"]["spec"].get("topologySpreadConstraints")
        spreads = bool(extra) or example == "dgx-h100-ib"
        assert (spread[0]["topologyKey"] if spread else None) == ("kubernetes.io/hostname" if spreads else None), spread
        if example == "dgx-h100-ib":
            # IB without privilege, and the NCCL settings of gpuops_nccl, which the hosts' /etc/nccl.conf also gets.
            assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}, container
            assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}} in worker["template"]["spec"]["volumes"]
            env = dict((item["name"], item["value"]) for item in container["env"])
            assert env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1,mlx5_2,mlx5_3" and env["NCCL_SOCKET_IFNAME"] == "eth0", env
        command = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
        assert command[:3] == ["mpirun", "-np", str(ranks)], command

        if not extra:
            # The example's GPU hosts were found Ready nodes of the cluster before the run planned anything.
            checked = _result(results, "Check that the cluster answers, before any change")
            assert [(node["name"], node["ready"]) for node in checked["nodes"]] == [(name, True) for name in nodes], checked
            labels = _result(results, "Apply the GPU labels to every node at once")
            assert labels["changed"] is True, labels
            assert "localhost" in hosts_seen
        # Check mode created nothing: no label, no job.
        for name in nodes:
            assert "nvidia.com/gpu.present" not in (core.read_node(name).metadata.labels or {})
        out = kubectl("get", "mpijobs", "-A", "-o", "name").stdout
        assert job not in out, out
    finally:
        for name in nodes:
            core.delete_node(name)


def test_gpu_hosts_that_are_not_ready_nodes_stop_the_run_in_the_cluster_check_before_any_change(second_run):
    """The DGX example against the lab's API server, one of its nodes there but not Ready (as its kubelet would report
    a runtime that is down), the other not there: both named in the cluster check, and no play after the checks ran."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    core = _lab_client()
    core.create_node(_fake_node("dgx-01", cpu=80, gpus=8, ready=("False", "KubeletNotReady", "container runtime is down")))
    try:
        run, report, results = _check_run("dgx-openshift")
    finally:
        core.delete_node("dgx-01")
    assert run.rc != 0
    failed = [(task, result.get("msg")) for task, _host, result in results if result.get("failed")]
    assert len(failed) == 1 and failed[0][0] == "Stop when the cluster lacks a node or a resource the run needs", failed
    message = failed[0][1]
    assert message.startswith("gpu_node_labels_node_name: not a node of the cluster: dgx-02 (its nodes: "), message
    assert "node dgx-01 is not Ready (KubeletNotReady: container runtime is down)" in message, message
    assert [play["play"]["name"] for play in report["plays"]] == ["Check every input before any change"]


NO_OPERATOR_JOB = os.path.join(EXAMPLES, "jobs", "dgx-openshift-no-operator.yml")
SINGLE_NODE_POD_JOB = os.path.join(EXAMPLES, "jobs", "dgx-single-node-pod.yml")
T4_TFJOB = os.path.join(EXAMPLES, "jobs", "t4-pool-tfjob.yml")


def test_no_operator_example_plans_host_network_workers_on_port_22122_and_mpirun_over_them_creating_nothing(second_run):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    run, _report, results = _check_run("dgx-openshift", (NO_OPERATOR_JOB,), "verify_training.yml", "all")
    failures = [(task, result.get("msg")) for task, _host, result in results if result.get("failed")]
    assert run.rc == 0 and not failures, "%s\n%s" % (failures, run.output[-3000:])
    workers = _result(results, "Start the workers (sshd) and wait until every one answers")["job"]["spec"]
    pod = workers["template"]["spec"]
    assert (workers["parallelism"], workers["completionMode"], pod["hostNetwork"]) == (2, "Indexed", True)
    container = pod["containers"][0]
    assert container["readinessProbe"]["tcpSocket"]["port"] == 22122
    assert container["command"][-1] == "sync && echo 3 > /proc/sys/vm/drop_caches && exec /usr/sbin/sshd -De -p 22122"
    assert container["securityContext"] == {"privileged": True}
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert {"name": "imagenet", "persistentVolumeClaim": {"claimName": "imagenet"}} in pod["volumes"]
    assert pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == \
        "kubernetes.io/hostname"
    mpirun = _result(results, "Run mpirun over the workers and wait until it succeeds (failing as soon as it fails)")
    launcher = mpirun["job"]["spec"]["template"]["spec"]["containers"][0]
    hosts = "gpuops-no-operator-workers-0.gpuops-no-operator-workers:8,gpuops-no-operator-workers-1.gpuops-no-operator-workers:8"
    assert launcher["command"][:5] == ["mpirun", "-np", "16", "-H", hosts], launcher["command"]
    # The workers' port, in mpirun's environment under Open MPI 4's name and Open MPI 5's.
    env = dict((item["name"], item.get("value")) for item in launcher["env"])
    assert env["OMPI_MCA_plm_rsh_args"] == env["PRTE_MCA_plm_ssh_args"] == "-p 22122", env
    assert "gpuops-no-operator" not in kubectl("get", "jobs", "-A", "-o", "name").stdout


def test_single_node_example_plans_horovodrun_on_the_eight_gpus_of_one_dgx_creating_nothing(second_run):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    run, _report, results = _check_run("dgx-openshift", (SINGLE_NODE_POD_JOB,), "verify_training.yml", "all")
    failures = [(task, result.get("msg")) for task, _host, result in results if result.get("failed")]
    assert run.rc == 0 and not failures, "%s\n%s" % (failures, run.output[-3000:])
    planned = _result(results, "Run the ranks in one pod and wait until it succeeds (failing as soon as it fails)")
    pod = planned["job"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["command"][:5] == ["horovodrun", "-np", "8", "-H", "localhost:8"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert pod["nodeSelector"] == {"kubernetes.io/hostname": "dgx-01"}
    assert "gpuops-dgx-01" not in kubectl("get", "jobs", "-A", "-o", "name").stdout


def test_tfjob_example_plans_a_chief_four_t4_workers_and_two_parameter_servers_creating_nothing(second_run):
    """The Training Operator the lab runs is the example's but for the controller's image (the lab's own build), and
    the example's TFJob is planned."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    run, _report, results = _check_run("cloud-vms", (T4_TFJOB,), "site.yml", "training_operator,verify")
    failures = [(task, result.get("msg")) for task, _host, result in results if result.get("failed")]
    assert run.rc == 0 and not failures, "%s\n%s" % (failures, run.output[-3000:])
    changed = [task for task, _host, result in results if result.get("changed") and "training_operator" in task]
    assert changed == ["gpuops.cluster.training_operator : Apply the service account, the Service and the controller's "
                       "Deployment"], changed
    spec = _result(results, "Run the TFJob and wait until it succeeds (failing as soon as it cannot)")["tfjob"]["spec"]
    replicas = spec["tfReplicaSpecs"]
    assert dict((kind, replica["replicas"]) for kind, replica in replicas.items()) == {"Chief": 1, "Worker": 4, "PS": 2}
    worker = replicas["Worker"]["template"]["spec"]
    assert worker["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
    assert worker["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert spec["runPolicy"]["cleanPodPolicy"] == "Running"
    assert "resnet50-t4" not in kubectl("get", "tfjobs", "-A", "-o", "name").stdout


BASELINE_JOB = os.path.join(EXAMPLES, "jobs", "one-gpu-baseline.yml")


def _verify_and_summary(tmp_path, cache):
    """(a playbook of verify_training.yml then training_summary.yml, an environment whose cache is `cache`)."""
    playbook = write_play(tmp_path / "verify.yml",
                          [{"ansible.builtin.import_playbook": os.path.join(REPO_ROOT, "playbooks", name)}
                           for name in ("verify_training.yml", "training_summary.yml")])
    return playbook, ansible_env(GPUOPS_CACHE=str(cache), TMPDIR=os.path.join(LAB_DIR, "tmp"))


def test_an_inventory_without_path_variables_is_judged_once_and_role_thresholds_reach_the_verdict(second_run, tmp_path):
    """verify_training.yml and training_summary.yml from an inventory that sets no path variable (the log and
    report go under $GPUOPS_CACHE/training), with a 2-rank MPIJob in real pods; then the same job judged
    again with a rank count given to the launcher role, which the verdict must hold it to."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    namespace = "e2e-verdict"
    variables = {"gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "mpijob", "kube_job_namespace": namespace,
                 "mpijob_launcher_name": "bench", "mpijob_launcher_image": workload_image(),
                 "kube_job_image_pull_policy": "Never", "mpijob_launcher_workers": 2,
                 "kube_job_python": "/opt/gpuops/venv/bin/python3",
                 "kube_job_benchmark_path": "/opt/gpuops/benchmark/gpuops_benchmark.py",
                 "kube_job_benchmark_args": ["--framework", "tensorflow", "--device", "cpu", "--model", "small_cnn",
                                             "--batch-size", "8", "--num-warmup-batches", "1", "--num-iters", "2",
                                             "--num-batches-per-iter", "1"],
                 "kube_job_wait_timeout": 900}
    cache = tmp_path / "cache"
    playbook, env = _verify_and_summary(tmp_path, cache)
    try:
        judged = run_playbook(playbook, controller_inventory(tmp_path / "inventory.yml", variables), env=env, timeout=1200)
        assert judged.rc == 0, judged.explain()
        # Judged once, by the launcher's training_verdict role; the summary playbook judged nothing.
        assert len(judged.results("Judge the training log")) == 1
        skipped = judged.results("Judge the log named by gpuops_summary_log")
        assert len(skipped) == 1 and skipped[0].get("skipped") is True, skipped
        report_path = str(cache / "training" / "bench.json")
        with open(report_path, encoding="utf-8") as handle:
            report = json.load(handle)
        assert report["passed"] is True and report["ranks"] == 2, report["failures"]
        printed = judged.result("Print the summary")["msg"]
        assert printed == report["summary"]
        assert printed[0] == "verdict:     PASSED (an MPIJob (%s/bench))" % namespace, printed
        assert "log:         %s" % (cache / "training" / "bench.log") in printed
        assert "report:      %s" % report_path in printed

        held = run_playbook(playbook, controller_inventory(tmp_path / "inventory.yml", dict(
            variables, gpuops_training_min_img_per_sec_per_device=1000000)), env=env, timeout=1200)
        assert held.rc != 0
        assert [name for name, _result in held.failed()] == ["Fail with every unmet threshold"], held.explain()
        assert "img/sec per CPU is under the minimum 1e+06: mean " in held.failed()[0][1]["msg"]
        with open(report_path, encoding="utf-8") as handle:
            report = json.load(handle)
        assert report["passed"] is False and report["summary"][0].startswith("verdict:     FAILED (an MPIJob")
    finally:
        # Waited for: the input tests that follow compare the API's objects before and after their runs.
        kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=180s", check=False)


def test_the_one_gpu_baseline_job_file_passes_where_the_main_run_requires_a_network_and_leaves_its_log_alone(
        second_run, tmp_path):
    """The shipped baseline job file over an inventory whose main run is two workers that must talk NET/Socket, with a
    log path of its own: one GPU, one rank, its own log under the cache, passed, and the main run's log not written."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    namespace = "e2e-baseline"
    main_log = tmp_path / "main-run.log"
    variables = {"gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "mpijob", "kube_job_namespace": namespace,
                 "mpijob_launcher_name": "main-run", "mpijob_launcher_image": workload_image(),
                 "kube_job_image_pull_policy": "Never", "mpijob_launcher_workers": 2,
                 "mpijob_launcher_gpus_per_worker": 2, "mpijob_launcher_spread_workers": True,
                 "verify_training_log_path": str(main_log), "gpuops_training_expect_ranks": 4,
                 "gpuops_training_require_transport": ["NET/Socket"],
                 "kube_job_python": WORKLOAD_PYTHON, "kube_job_benchmark_path": WORKLOAD_BENCHMARK,
                 "kube_job_benchmark_args": SHORT_BENCHMARK_ARGS, "kube_job_wait_timeout": 900}
    cache = tmp_path / "cache"
    playbook, env = _verify_and_summary(tmp_path, cache)
    try:
        measured = run_playbook(playbook, controller_inventory(tmp_path / "inventory.yml", variables),
                                options=["-e", "@" + BASELINE_JOB], env=env, timeout=1200)
        assert measured.rc == 0, measured.explain()
        with open(str(cache / "training" / "gpuops-baseline.json"), encoding="utf-8") as handle:
            report = json.load(handle)
        assert report["passed"] is True and report["ranks"] == 1, report["failures"]
        assert report["img_per_sec_per_device"]["mean"] > 0, report["img_per_sec_per_device"]
        assert not main_log.exists()
        printed = measured.result("Print the summary")["msg"]
        assert any(line.startswith("images/sec:") for line in printed), printed
        workers = json.loads(kubectl("get", "mpijob", "-n", namespace, "gpuops-baseline", "-o", "json").stdout)
        worker = workers["spec"]["mpiReplicaSpecs"]["Worker"]
        assert worker["replicas"] == 1 and workers["spec"]["slotsPerWorker"] == 1
        assert worker["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    finally:
        kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=180s", check=False)


def test_an_mpijob_whose_mpirun_put_every_rank_on_one_worker_completes_and_fails_the_rank_census(second_run, tmp_path):
    """Two workers of two slots whose mpirun maps the four ranks onto the first worker (--map-by ppr:4:node), as an
    mpirun that ignored the operator's host file leaves them: the job succeeds with the right rank count, and the
    verdict fails it, naming the one host that ran every rank."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    namespace = "e2e-census"
    variables = {"gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "mpijob", "kube_job_namespace": namespace,
                 "mpijob_launcher_name": "census", "mpijob_launcher_image": workload_image(),
                 "kube_job_image_pull_policy": "Never", "mpijob_launcher_workers": 2,
                 "mpijob_launcher_slots_per_worker": 2, "mpijob_launcher_spread_workers": True,
                 "mpijob_launcher_mpirun_args": ["--allow-run-as-root", "-bind-to", "none", "--oversubscribe",
                                                 "--map-by", "ppr:4:node"],
                 "kube_job_python": WORKLOAD_PYTHON, "kube_job_benchmark_path": WORKLOAD_BENCHMARK,
                 "kube_job_benchmark_args": SHORT_BENCHMARK_ARGS, "kube_job_wait_timeout": 900}
    cache = tmp_path / "cache"
    playbook, env = _verify_and_summary(tmp_path, cache)
    try:
        run = run_playbook(playbook, controller_inventory(tmp_path / "inventory.yml", variables), env=env, timeout=900)
        assert run.rc != 0 and run.failed()[-1][0] == "Fail with every unmet threshold", run.explain()
        with open(str(cache / "training" / "census.json"), encoding="utf-8") as handle:
            report = json.load(handle)
        assert report["complete"] is True and report["ranks"] == 4, report
        assert report["placement"] == {"hosts": {"census-worker-0": 4}, "ranks_named": 4, "expected": [2, 2]}
        assert report["failures"] == ["the ranks ran on 1 host (census-worker-0: 4 ranks); the launcher placed them on "
                                      "2 hosts of 2 ranks each"]
        job = json.loads(kubectl("get", "mpijob", "-n", namespace, "census", "-o", "json").stdout)
        assert {"type": "Succeeded", "status": "True"}.items() <= [
            condition for condition in job["status"]["conditions"] if condition["type"] == "Succeeded"][0].items()
    finally:
        kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=180s", check=False)


def test_teardown_of_a_lab_left_up_as_the_tier_starts_leaves_nothing_but_the_cached_builds(second_run):
    """The README's order, make lab then make test: the lab the second run left up is the one an earlier make lab
    leaves, and the tier's start takes it down with the call this test makes."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    processes = lab_processes()
    assert processes, "no process of the lab control plane is running before the teardown"
    ports = listening_ports(processes)
    assert ports, "the lab's processes listen on no port"
    with open(KUBECONFIG, encoding="utf-8") as handle:
        server = yaml.safe_load(handle)["clusters"][0]["cluster"]["server"]
    assert int(server.rsplit(":", 1)[1]) in ports
    image = workload_image()

    down = take_down_a_lab_left_up("the e2e tier's teardown test")
    assert down is not None, "the lab the second run left up was not seen as up"
    assert "nothing of the lab is left" in down.output, down.explain()

    assert lab_containers() == []
    assert not lab_network_exists()
    assert lab_processes() == {}
    still = ports & listening_ports()
    assert not still, "ports of the lab still listening: %s" % sorted(still)
    for path in (RUN_DIR, TRAINING_DIR, os.path.join(LAB_DIR, "ssh"), os.path.join(LAB_DIR, "logs"),
                 os.path.join(LAB_DIR, "tmp")):
        assert not os.path.exists(path), path
    # The cached builds stay for the next make lab.
    assert subprocess.run(["podman", "image", "exists", image], check=False).returncode == 0
    assert os.path.exists(lab_kubectl_path())
    # With nothing left, the tier's start has nothing to take down; tools/lab_down.sh itself says so.
    assert take_down_a_lab_left_up("the e2e tier's teardown test, again") is None
    again = Run(["bash", LAB_DOWN], timeout=900)
    assert again.rc == 0 and "nothing of the lab is left" in again.output, again.explain()
