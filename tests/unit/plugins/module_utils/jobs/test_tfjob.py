# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TFJob kind: the body built from the options or a raw definition, its failure predicate, and its wait
against a fake cluster (the master's log, every replica's log)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError, JobFailedError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import wait_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.logs import replica_logs, result_log
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB, build_mpijob
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import Observation
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.tfjob import (
    TFJOB,
    build_tfjob,
    desired_job,
    from_definition,
    job_to_delete,
    tfjob_failure,
)
from gpuops_testlib.fake_job_api import (
    BENCH,
    LOG,
    FakeMPIJobApi,
    running,
    settings,
    succeeded,
)
from gpuops_testlib.tfjob_pods import CREATED, RUNNING, ps_crashes, replicas_run, tf_pod

PS_JOB = dict(name="ps-bench", namespace="ml", image="tensorflow:2.16.1-gpu",
              command=["python3", "/opt/bench.py", "--strategy", "parameter_server"],
              workers=2, parameter_servers=1, chief=True, gpus_per_worker=1,
              env={"TF_CPP_MIN_LOG_LEVEL": 1}, resources={"cpu": 8, "memory": "32Gi"},
              ps_resources={"cpu": 4, "memory": "16Gi"}, node_selector={"nvidia.com/gpu.present": True},
              tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
              shm_size="2Gi", spread_workers=True, clean_pod_policy="Running", ttl_seconds_after_finished=600,
              active_deadline_seconds=3600, backoff_limit=0, image_pull_policy="IfNotPresent")

ENV = [{"name": "TF_CPP_MIN_LOG_LEVEL", "value": "1"}]
PORTS = [{"name": "tfjob-port", "containerPort": 2222}]
PLACEMENT = {"nodeSelector": {"nvidia.com/gpu.present": "true"},
             "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}


def tensorflow(resources=None, **fields):
    """The tensorflow container every replica of PS_JOB has."""
    container = {"name": "tensorflow", "image": "tensorflow:2.16.1-gpu", "imagePullPolicy": "IfNotPresent",
                 "command": ["python3", "/opt/bench.py", "--strategy", "parameter_server"], "env": ENV, "ports": PORTS}
    if resources:
        container["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    container.update(fields)
    return container


def test_a_parameter_server_job_has_gpu_workers_cpu_parameter_servers_and_a_chief_that_only_coordinates():
    assert build_tfjob(PS_JOB) == {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob",
        "metadata": {"name": "ps-bench", "namespace": "ml"},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 600, "activeDeadlineSeconds": 3600,
                          "backoffLimit": 0},
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "restartPolicy": "Never", "template": {"spec": dict(
                    PLACEMENT,
                    containers=[tensorflow({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
                                           volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}])],
                    volumes=[{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}],
                    topologySpreadConstraints=[{
                        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"training.kubeflow.org/job-name": "ps-bench",
                                                          "training.kubeflow.org/replica-type": "worker"}}}])}},
                "PS": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {
                    "containers": [tensorflow({"cpu": "4", "memory": "16Gi"})]}}},
                "Chief": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": dict(
                    PLACEMENT, containers=[tensorflow()])}},
            },
        },
    }


def test_a_minimal_job_is_one_worker_on_port_2222_and_the_port_host_network_and_privilege_are_options():
    assert build_tfjob(dict(name="mnist", image="tf:2.16", command=["python3", "mnist.py"])) == {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "mnist", "namespace": "default"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {
            "containers": [{"name": "tensorflow", "image": "tf:2.16", "command": ["python3", "mnist.py"],
                            "ports": [{"name": "tfjob-port", "containerPort": 2222}]}]}}}}},
    }
    body = build_tfjob(dict(name="mnist", image="tf:2.16", command=["python3", "mnist.py"], parameter_servers=1,
                            port=2345, host_network=True, privileged=True, host_paths=["/dev/infiniband"],
                            service_account="trainer"))
    worker = body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    ps = body["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]
    for pod in (worker, ps):
        assert pod["containers"][0]["ports"] == [{"name": "tfjob-port", "containerPort": 2345}]
        assert (pod["hostNetwork"], pod["dnsPolicy"], pod["serviceAccountName"]) == (
            True, "ClusterFirstWithHostNet", "trainer")
    # The devices and privilege are for the workers, which hold the GPUs.
    assert worker["containers"][0]["securityContext"] == {"privileged": True}
    assert worker["volumes"] == [{"name": "host-path-0", "hostPath": {"path": "/dev/infiniband"}}]
    assert "securityContext" not in ps["containers"][0] and "volumes" not in ps


def test_infiniband_in_the_workers_rdma_resource_ipc_lock_shm_and_host_paths_without_privilege():
    """RDMA through a device plugin's resource: the workers, which hold the GPUs, ask for it beside them, add only
    IPC_LOCK (to pin the memory RDMA registers), get the /dev/shm size and the host paths; nothing is privileged,
    and the parameter servers and the chief get none of it."""
    body = build_tfjob(dict(PS_JOB, gpus_per_worker=8, shm_size="32Gi", capabilities=["IPC_LOCK", "IPC_LOCK"],
                            resources={"rdma/rdma_shared_device_a": 1, "memory": "512Gi"},
                            host_paths=["/dev/infiniband"]))
    specs = body["spec"]["tfReplicaSpecs"]
    worker = specs["Worker"]["template"]["spec"]
    container = worker["containers"][0]
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    wanted = {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1", "memory": "512Gi"}
    assert container["resources"] == {"limits": wanted, "requests": wanted}
    assert worker["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}},
                                 {"name": "host-path-0", "hostPath": {"path": "/dev/infiniband"}}]
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"},
                                         {"name": "host-path-0", "mountPath": "/dev/infiniband"}]
    for replica_type in ("PS", "Chief"):
        pod = specs[replica_type]["template"]["spec"]
        assert "securityContext" not in pod["containers"][0] and "volumes" not in pod, replica_type
        assert "rdma/rdma_shared_device_a" not in pod["containers"][0].get("resources", {}).get("limits", {})
    both = build_tfjob(dict(PS_JOB, privileged=True, capabilities=["IPC_LOCK"]))["spec"]["tfReplicaSpecs"]["Worker"]
    assert both["template"]["spec"]["containers"][0]["securityContext"] == {
        "privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}


def test_image_pull_secrets_are_referenced_by_every_replica_type():
    body = build_tfjob(dict(PS_JOB, image_pull_secrets=["gpuops-registry"]))
    specs = body["spec"]["tfReplicaSpecs"]
    assert sorted(specs) == ["Chief", "PS", "Worker"]
    for replica in specs.values():
        assert replica["template"]["spec"]["imagePullSecrets"] == [{"name": "gpuops-registry"}]
    assert all("imagePullSecrets" not in replica["template"]["spec"]
               for replica in build_tfjob(dict(PS_JOB, image_pull_secrets=[]))["spec"]["tfReplicaSpecs"].values())
    assert problems_of(dict(PS_JOB, image_pull_secrets=["ngc key"])) == [
        "image_pull_secrets[0]: 'ngc key' must be a Secret's name, a DNS-1123 subdomain such as gpuops-registry"]


def test_volumes_reach_every_replica_type_as_the_program_in_a_configmap_must():
    program = {"name": "benchmark-program", "mount_path": "/opt/gpuops/benchmark", "read_only": True,
               "configMap": {"name": "gpuops-benchmark-program"}}
    specs = build_tfjob(dict(PS_JOB, volumes=[program]))["spec"]["tfReplicaSpecs"]
    for replica in specs.values():
        pod = replica["template"]["spec"]
        assert {"name": "benchmark-program", "configMap": {"name": "gpuops-benchmark-program"}} in pod["volumes"]
        assert {"name": "benchmark-program", "mountPath": "/opt/gpuops/benchmark", "readOnly": True} in \
            pod["containers"][0]["volumeMounts"]
    assert problems_of(dict(PS_JOB, volumes=[{"name": "program", "mount_path": "relative"}])) == [
        "volumes[0] must be a dict with name, an absolute mount_path and a volume source such as "
        "persistentVolumeClaim: {claimName: data}, got {'name': 'program', 'mount_path': 'relative'}"]


def problems_of(params):
    with pytest.raises(InvalidArgumentError) as raised:
        desired_job(params)
    return raised.value.problems


def test_every_bad_input_is_named_in_one_error():
    problems = problems_of(dict(name="Bad_Name", command="python3 train.py", workers=0, parameter_servers=-1,
                                gpus_per_worker=-1, clean_pod_policy="Sometimes", backoff_limit=-1, port=70000,
                                ps_resources={"memory": "lots"}, env={"A=B": 1}))
    assert problems == [
        "workers must be at least 1, got 0",
        "gpus_per_worker must be at least 0, got -1",
        "parameter_servers must be at least 0, got -1",
        "backoff_limit must be at least 0, got -1",
        "name 'Bad_Name' must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and "
        "ending with a letter or digit",
        "image is required with state=present (the container image of every replica), unless definition is given",
        "command must be a list of strings, got 'python3 train.py'",
        "clean_pod_policy must be one of None, Running, All, got 'Sometimes'",
        "env: variable name 'A=B' must be a non-empty string without '='",
        "ps_resources: 'lots' is not a valid quantity for memory (expected a non-negative number with an optional "
        "suffix such as m, Mi, Gi or G, e.g. 500m, 16Gi, 2)",
        "port must be a TCP port (at most 65535), got 70000",
    ]


def test_the_longest_pod_name_must_fit_in_63_characters_whichever_replica_type_has_it():
    base = dict(image="tf", command=["python3", "t.py"])
    assert problems_of(dict(base, name="a" * 55, workers=10)) == [
        "name '{0}' is too long: the longest pod name '{0}-worker-9' must be at most 63 characters".format("a" * 55)]
    assert build_tfjob(dict(base, name="a" * 54, workers=10))["metadata"]["name"] == "a" * 54
    chief_and_ps = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "b" * 56},
                    "spec": {"tfReplicaSpecs": {
                        replica_type: {"replicas": 1, "template": {"spec": {"containers": [{"name": "tensorflow"}]}}}
                        for replica_type in ("Chief", "PS")}}}
    assert problems_of(dict(definition=chief_and_ps)) == [
        "definition.metadata.name '{0}' is too long: the longest pod name '{0}-chief-0' must be at most 63 "
        "characters".format("b" * 56)]


def test_a_definition_gets_name_and_namespace_and_is_otherwise_kept():
    definition = copy.deepcopy(build_tfjob(PS_JOB))
    del definition["metadata"]
    body = desired_job(dict(definition=definition, name="raw", namespace="ns1", chief=False, privileged=False,
                            spread_workers=False))
    assert body["metadata"] == {"name": "raw", "namespace": "ns1"}
    assert body["spec"] == build_tfjob(PS_JOB)["spec"]
    assert job_to_delete(dict(definition=body)) == ("ns1", "raw")


def test_a_definition_is_checked_for_api_version_kind_replicas_and_the_tensorflow_container():
    definition = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "x"},
                  "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
                      {"name": "trainer", "image": "tf"}]}}}, "PS": "one"}}}
    assert problems_of(dict(definition=definition, name="y")) == [
        "definition.apiVersion must be kubeflow.org/v1, got 'kubeflow.org/v2beta1'",
        "definition.kind must be TFJob, got 'MPIJob'",
        "name 'y' differs from definition.metadata.name 'x'",
        "definition.spec.tfReplicaSpecs.PS must be a dict (a replica spec), got 'one'",
        "definition.spec.tfReplicaSpecs.Worker has no container named tensorflow: the Training Operator refuses "
        "the TFJob",
    ]
    with pytest.raises(InvalidArgumentError) as raised:
        from_definition({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x"}})
    assert raised.value.problems == ["definition.spec.tfReplicaSpecs is required"]
    assert problems_of(dict(definition=definition, image="tf", chief=True, labels={"team": "ml"})) == [
        "definition is mutually exclusive with chief, image, labels: give a raw TFJob or the high-level options, "
        "not both"]


def live(params=None, *conditions):
    """The TFJob as the API server returns it, with the conditions (type, reason, message) given."""
    job = build_tfjob(params or PS_JOB)
    job["status"] = {"conditions": [{"type": kind, "status": "True", "reason": reason, "message": message}
                                    for kind, reason, message in conditions]}
    return job


def test_a_failed_worker_or_parameter_server_fails_the_job_at_once_naming_the_pods():
    observation = Observation(live(None, CREATED, RUNNING), pods=[
        tf_pod("chief", 0, "Running", master=True), tf_pod("worker", 0, "Running"),
        tf_pod("worker", 1, "Failed", exit_code=137), tf_pod("ps", 0, "Failed", exit_code=1)])
    assert tfjob_failure(observation) == (
        "ps and worker pod(s) failed: ps-bench-ps-0: container tensorflow exit code 1 (Error); ps-bench-worker-1: "
        "container tensorflow exit code 137 (Error); their replicas have restartPolicy Never, so the Training "
        "Operator does not restart them and the TFJob cannot succeed")
    assert tfjob_failure(Observation(live(None, CREATED, RUNNING), pods=[tf_pod("worker", 0, "Running")])) is None


def test_a_failed_pod_the_operator_restarts_is_no_failure_of_a_raw_definition():
    job = live(None, CREATED, RUNNING)
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    job["spec"]["tfReplicaSpecs"]["PS"]["restartPolicy"] = "OnFailure"
    failed = [tf_pod("worker", 1, "Failed", exit_code=130), tf_pod("ps", 0, "Failed", exit_code=1)]
    assert tfjob_failure(Observation(job, pods=failed)) is None
    dynamic = live(None, CREATED, RUNNING)
    dynamic["spec"]["enableDynamicWorker"] = True
    assert tfjob_failure(Observation(dynamic, pods=failed[:1])) is None
    assert tfjob_failure(Observation(dynamic, pods=failed[1:])).startswith("ps pod(s) failed: ps-bench-ps-0")


def test_an_image_that_cannot_be_pulled_and_the_failed_condition_end_the_wait():
    pulling = Observation(live(None, CREATED), pods=[
        tf_pod("worker", 0, "Pending", waiting=("ErrImagePull", "manifest unknown"))])
    assert tfjob_failure(pulling) == (
        "container(s) cannot start: pod ps-bench-worker-0: container tensorflow (image tensorflow:2.16.1-gpu): "
        "ErrImagePull: manifest unknown")
    failed = Observation(live(None, CREATED, ("Failed", "TFJobFailed",
                                              "TFJob ml/ps-bench has failed because 1 Worker replica(s) failed.")))
    assert tfjob_failure(failed) == ("the TFJob failed: TFJobFailed: TFJob ml/ps-bench has failed because 1 Worker "
                                     "replica(s) failed.")
    done = Observation(live(None, CREATED, ("Succeeded", "TFJobSucceeded", "done")),
                       pods=[tf_pod("worker", 1, "Failed", exit_code=1)])
    assert tfjob_failure(done) is None
    assert wait_failure(TFJOB)(Observation(None)) == "the TFJob was deleted while waiting for it"


def test_a_job_the_training_operator_rejected_fails_the_wait():
    rejected = Observation(live(), warnings=[{"type": "Warning", "reason": "ValidationError",
                                              "message": "TFJobSpec is not valid"}])
    assert tfjob_failure(rejected) == "the Training Operator rejected the TFJob: TFJobSpec is not valid"


class Logs(object):
    """The pod logs an API serves, and which pods were asked for."""

    def __init__(self, logs):
        self.logs = logs
        self.read = []

    def read_pod_log(self, namespace, name, tail_lines):
        self.read.append(name)
        return self.logs[name]


def test_the_result_log_is_the_masters_the_chief_or_without_one_worker_0():
    with_chief = [tf_pod("worker", 0, "Succeeded"), tf_pod("chief", 0, "Succeeded", master=True),
                  tf_pod("ps", 0, "Running")]
    logs = Logs({"ps-bench-chief-0": "chief\n", "ps-bench-worker-0": "worker 0\n"})
    assert result_log(TFJOB, logs, "ml", with_chief, 100) == {
        "text": "chief\n", "source": "pod/ps-bench-chief-0", "pod": "ps-bench-chief-0", "error": None}
    without_chief = [tf_pod("worker", 1, "Running"), tf_pod("worker", 0, "Succeeded", master=True)]
    assert result_log(TFJOB, logs, "ml", without_chief, 100)["pod"] == "ps-bench-worker-0"
    assert result_log(TFJOB, logs, "ml", [tf_pod("worker", 0, "Pending", master=True)], 100)["error"] == (
        "master pod ps-bench-worker-0 has not started (phase Pending)")
    assert result_log(TFJOB, logs, "ml", [tf_pod("ps", 0, "Running")], 100)["error"] == "no master pod exists (yet)"


def test_every_replica_that_started_gives_its_log_by_replica_type_then_index():
    pods = [tf_pod("worker", 10, "Running"), tf_pod("worker", 2, "Failed", exit_code=1),
            tf_pod("ps", 0, "Running"), tf_pod("chief", 0, "Running", master=True), tf_pod("worker", 3, "Pending")]
    logs = Logs({"ps-bench-worker-10": "w10\n", "ps-bench-worker-2": "w2\n", "ps-bench-ps-0": "ps\n",
                 "ps-bench-chief-0": "chief\n"})
    assert replica_logs(TFJOB, logs, "ml", pods, 10) == [
        {"pod": "ps-bench-chief-0", "replica_type": "chief", "index": 0, "text": "chief\n", "error": None},
        {"pod": "ps-bench-ps-0", "replica_type": "ps", "index": 0, "text": "ps\n", "error": None},
        {"pod": "ps-bench-worker-2", "replica_type": "worker", "index": 2, "text": "w2\n", "error": None},
        {"pod": "ps-bench-worker-10", "replica_type": "worker", "index": 10, "text": "w10\n", "error": None},
    ]
    assert "ps-bench-worker-3" not in logs.read


def test_a_failed_parameter_server_fails_the_wait_with_the_masters_and_every_replicas_log():
    logs = {"ps-bench-chief-0": "step 10\nUnavailableError: ps-bench-ps-0 is gone\n",
            "ps-bench-ps-0": "Traceback: OOM\n", "ps-bench-worker-0": "worker 0\n", "ps-bench-worker-1": "worker 1\n"}
    api = FakeMPIJobApi(kind=TFJOB, logs=logs, script={2: replicas_run, 4: ps_crashes})
    with pytest.raises(JobFailedError) as raised:
        ensure_present(TFJOB, api, build_tfjob(PS_JOB), settings(wait=True, log_lines=1))
    details = raised.value.details
    assert str(raised.value) == (
        "TFJob ml/ps-bench FAILED after 2.0 s: ps pod(s) failed: ps-bench-ps-0: container tensorflow exit code 1 "
        "(Error); their replicas have restartPolicy Never, so the Training Operator does not restart them and the "
        "TFJob cannot succeed")
    assert (details["master_log"], details["master_log_source"], details["master_log_error"]) == (
        "UnavailableError: ps-bench-ps-0 is gone\n", "pod/ps-bench-chief-0", None)
    assert "launcher_log" not in details
    assert [(log["pod"], log["text"]) for log in details["replica_logs"]] == [
        ("ps-bench-chief-0", "UnavailableError: ps-bench-ps-0 is gone\n"), ("ps-bench-ps-0", "Traceback: OOM\n"),
        ("ps-bench-worker-0", "worker 0\n"), ("ps-bench-worker-1", "worker 1\n")]
    assert [(pod["name"], pod["role"]) for pod in details["failed_pods"]] == [("ps-bench-ps-0", "ps")]


def test_an_mpijob_result_keeps_its_launcher_log_and_has_no_replica_logs():
    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": LOG}, script={2: running, 3: succeeded})
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True))
    assert result["launcher_log_source"] == "pod/bench-launcher-x7k2p"
    assert "replica_logs" not in result and "master_log" not in result


def test_all_workers_may_have_to_complete_for_the_job_to_succeed():
    """Synchronous training's workers finish together: each one's log is whole only once all have completed."""
    body = build_tfjob(dict(name="in-step", image="i", command=["python3", "bench.py"], workers=2,
                            success_policy="AllWorkers"))
    assert body["spec"]["successPolicy"] == "AllWorkers"
    assert "successPolicy" not in build_tfjob(dict(name="ps", image="i", command=["python3"]))["spec"]
    with pytest.raises(InvalidArgumentError) as refused:
        build_tfjob(dict(name="x", image="i", command=["python3"], success_policy="AnyWorker"))
    assert "success_policy must be one of AllWorkers, got 'AnyWorker'" in str(refused.value)
