# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MPIJob spec builder and input validation: built bodies compared with whole expected bodies."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.applied_spec import spec_differences, with_applied_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import (
    build_mpijob,
    desired_job,
    from_definition,
    wait_for_workers_container,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.quantities import quantity_text

DGX_PAIR = dict(
    name="resnet50-16gpu",
    namespace="training",
    image="registry.example.com/horovod:0.28.1",
    command=["mpirun", "-np", "16", "python3", "/opt/bench.py"],
    worker_command=["/usr/sbin/sshd", "-De"],
    workers=2,
    gpus_per_worker=8,
    env={"NCCL_DEBUG": "INFO", "NCCL_IB_DISABLE": 0, "HOROVOD_HIERARCHICAL_ALLREDUCE": True},
    resources={"cpu": 32, "memory": "256Gi", "hugepages-1Gi": "16Gi"},
    host_network=True,
    node_selector={"nvidia.com/gpu.present": True},
    tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    clean_pod_policy="Running",
    ttl_seconds_after_finished=3600,
    active_deadline_seconds=7200,
    ssh_auth_mount_path="/home/mpiuser/.ssh",
    mpi_implementation="OpenMPI",
)

SSH_PROBE = {"tcpSocket": {"port": 22}, "periodSeconds": 1}

# The MPI Operator gives the launcher its host file and SSH options in Open MPI 4's names alone; Open MPI 5's mpirun
# reads these.
OPEN_MPI_5_ENV = [
    {"name": "PRTE_MCA_plm_ssh_args", "value": "-o ConnectionAttempts=10"},
    {"name": "PRTE_MCA_prte_default_hostfile", "value": "/etc/mpi/hostfile"},
    {"name": "PRTE_MCA_prte_keep_fqdn_hostnames", "value": "true"},
]

DGX_PAIR_ENV = [
    {"name": "HOROVOD_HIERARCHICAL_ALLREDUCE", "value": "true"},
    {"name": "NCCL_DEBUG", "value": "INFO"},
    {"name": "NCCL_IB_DISABLE", "value": "0"},
]

DGX_PAIR_EXPECTED = {
    "apiVersion": "kubeflow.org/v2beta1",
    "kind": "MPIJob",
    "metadata": {"name": "resnet50-16gpu", "namespace": "training"},
    "spec": {
        "slotsPerWorker": 8,
        "launcherCreationPolicy": "WaitForWorkersReady",
        "mpiImplementation": "OpenMPI",
        "sshAuthMountPath": "/home/mpiuser/.ssh",
        "runPolicy": {"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 3600, "activeDeadlineSeconds": 7200},
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {
                "hostNetwork": True,
                "initContainers": [wait_for_workers_container("resnet50-16gpu", 2, "registry.example.com/horovod:0.28.1",
                                                              None, None)],
                "containers": [{"name": "launcher", "image": "registry.example.com/horovod:0.28.1",
                                "command": ["mpirun", "-np", "16", "python3", "/opt/bench.py"],
                                "env": DGX_PAIR_ENV + OPEN_MPI_5_ENV}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {
                "hostNetwork": True,
                "nodeSelector": {"nvidia.com/gpu.present": "true"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{
                    "name": "worker", "image": "registry.example.com/horovod:0.28.1",
                    "command": ["/usr/sbin/sshd", "-De"],
                    "readinessProbe": SSH_PROBE,
                    "env": DGX_PAIR_ENV,
                    "resources": {
                        "limits": {"cpu": "32", "memory": "256Gi", "hugepages-1Gi": "16Gi", "nvidia.com/gpu": "8"},
                        "requests": {"cpu": "32", "memory": "256Gi", "hugepages-1Gi": "16Gi", "nvidia.com/gpu": "8"},
                    }}]}}},
        },
    },
}


def test_dgx_pair_with_gpus_hugepages_env_and_tolerations():
    assert build_mpijob(DGX_PAIR) == DGX_PAIR_EXPECTED


def test_minimal_cpu_job_gets_one_worker_one_slot_and_the_defaults():
    body = build_mpijob(dict(name="pi", image="mpi-pi:latest", command=["mpirun", "/home/mpiuser/pi"]))
    assert body == {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {
            "slotsPerWorker": 1,
            "launcherCreationPolicy": "WaitForWorkersReady",
            "mpiImplementation": "OpenMPI",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {
                    "initContainers": [wait_for_workers_container("pi", 1, "mpi-pi:latest", None, None)],
                    "containers": [
                        {"name": "launcher", "image": "mpi-pi:latest", "command": ["mpirun", "/home/mpiuser/pi"],
                         "env": OPEN_MPI_5_ENV}]}}},
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "worker", "image": "mpi-pi:latest",
                     "readinessProbe": SSH_PROBE}]}}},
            },
        },
    }


def test_open_mpi_5_gets_the_workers_ssh_port_and_a_setting_the_user_gave_is_left_alone():
    body = build_mpijob(dict(DGX_PAIR, worker_ssh_port=2222, env={"PRTE_MCA_prte_keep_fqdn_hostnames": "false"}))
    launcher_env = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"]
    assert launcher_env == [
        {"name": "PRTE_MCA_prte_keep_fqdn_hostnames", "value": "false"},
        {"name": "PRTE_MCA_plm_ssh_args", "value": "-o ConnectionAttempts=10 -p 2222"},
        {"name": "PRTE_MCA_prte_default_hostfile", "value": "/etc/mpi/hostfile"}]
    # The workers only run sshd: no mpirun reads these there.
    worker_env = body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"]
    assert worker_env == [{"name": "PRTE_MCA_prte_keep_fqdn_hostnames", "value": "false"}]


def test_an_mpi_other_than_open_mpi_gets_no_open_mpi_settings():
    body = build_mpijob(dict(DGX_PAIR, mpi_implementation="Intel"))
    assert body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"] == DGX_PAIR_ENV


def test_slots_default_to_gpus_and_an_explicit_value_wins():
    base = dict(name="j", image="i", command=["mpirun"], gpus_per_worker=4)
    assert build_mpijob(base)["spec"]["slotsPerWorker"] == 4
    assert build_mpijob(dict(base, slots_per_worker=2))["spec"]["slotsPerWorker"] == 2


def test_structured_resources_keep_cpu_overcommit_and_add_gpus_to_both_sections():
    body = build_mpijob(dict(name="j", image="i", command=["mpirun"], gpus_per_worker=2, gpu_resource_name="amd.com/gpu",
                             resources={"requests": {"cpu": "500m", "memory": "1Gi", "hugepages-2Mi": "512Mi"},
                                        "limits": {"cpu": 2, "memory": "1Gi", "hugepages-2Mi": "512Mi"}}),
                        )
    resources = body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]
    assert resources == {
        "requests": {"cpu": "500m", "memory": "1Gi", "hugepages-2Mi": "512Mi", "amd.com/gpu": "2"},
        "limits": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "512Mi", "amd.com/gpu": "2"},
    }


def test_launcher_resources_atstartup_backoff_image_pull_policy_and_metadata():
    body = build_mpijob(dict(name="j", image="i", command=["mpirun"], launcher_resources={"cpu": 1, "memory": "2Gi"},
                             launcher_creation_policy="AtStartup", backoff_limit=0, image_pull_policy="IfNotPresent",
                             mpi_implementation="Intel", labels={"team": "ml"}, annotations={"gpuops.io/run": 7}))
    launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["resources"] == {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}
    assert launcher["imagePullPolicy"] == "IfNotPresent"
    assert body["spec"]["launcherCreationPolicy"] == "AtStartup"
    assert body["spec"]["mpiImplementation"] == "Intel"
    assert body["spec"]["runPolicy"] == {"backoffLimit": 0}
    assert body["metadata"] == {"name": "j", "namespace": "default", "labels": {"team": "ml"},
                                "annotations": {"gpuops.io/run": "7"}}


def test_a_worker_is_ready_when_its_sshd_answers_on_the_port_given_and_0_adds_no_probe():
    base = dict(name="j", image="i", command=["mpirun"], host_network=True)

    def probe(**params):
        worker = build_mpijob(dict(base, **params))["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        return worker["containers"][0].get("readinessProbe")

    assert probe(worker_ssh_port=2222) == {"tcpSocket": {"port": 2222}, "periodSeconds": 1}
    assert probe(worker_ssh_port=0) is None
    for port, expected in ((65536, "worker_ssh_port must be a TCP port (at most 65535), got 65536"),
                           (-1, "worker_ssh_port must be at least 0, got -1"),
                           ("22", "worker_ssh_port must be an integer, got '22'")):
        with pytest.raises(InvalidArgumentError) as caught:
            build_mpijob(dict(base, worker_ssh_port=port))
        assert expected in str(caught.value)


def test_spread_workers_puts_one_worker_of_this_job_per_node_at_most_one_apart():
    worker = build_mpijob(dict(name="two-gpus", image="i", command=["mpirun"], workers=2, gpus_per_worker=1,
                               spread_workers=True))["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["topologySpreadConstraints"] == [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"training.kubeflow.org/job-name": "two-gpus",
                                          "training.kubeflow.org/job-role": "worker"}}}]
    assert "topologySpreadConstraints" not in build_mpijob(dict(name="j", image="i", command=["mpirun"], spread_workers=False))[
        "spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]


@pytest.mark.parametrize("value, expected", [
    ("16Gi", "16Gi"), ("500m", "500m"), (2, "2"), ("1.5", "1.5"), ("1e3", "1e3"), (0.5, "0.5"),
    ("16 GB", None), ("16gi", None), ("-1", None), (-1, None), (True, None), ("", None), ("Gi", None),
])
def test_quantity_syntax(value, expected):
    assert quantity_text(value) == expected


def problems_of(params):
    with pytest.raises(InvalidArgumentError) as raised:
        desired_job(params)
    return raised.value.problems


VALID = dict(name="bench", image="horovod:0.28.1", command=["mpirun", "python3", "bench.py"])


def test_workers_below_one_is_refused_naming_workers():
    assert problems_of(dict(VALID, workers=0)) == ["workers must be at least 1, got 0"]


def test_negative_gpus_per_worker_is_refused_naming_it():
    assert problems_of(dict(VALID, gpus_per_worker=-2)) == ["gpus_per_worker must be at least 0, got -2"]


def test_definition_with_wrong_api_version_and_kind_is_refused():
    problems = problems_of(dict(definition={"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
                                            "metadata": {"name": "x"},
                                            "spec": {"mpiReplicaSpecs": {"Launcher": {}}}}))
    assert problems == ["definition.apiVersion must be kubeflow.org/v2beta1, got 'kubeflow.org/v1'",
                        "definition.kind must be MPIJob, got 'TFJob'"]


def test_resources_with_unknown_quantity_syntax_is_refused_naming_resources_and_the_value():
    problems = problems_of(dict(VALID, resources={"memory": "16 GB", "cpu": 4}))
    assert len(problems) == 1
    assert problems[0].startswith("resources: '16 GB' is not a valid quantity for memory")


def test_unknown_resource_name_and_bad_hugepage_size_are_refused():
    problems = problems_of(dict(VALID, resources={"gpu": 1, "hugepages-huge": "1Gi", "memory": "1Gi"}))
    assert problems[0].startswith("resources: unknown resource name 'gpu'")
    assert problems[1].startswith("resources: hugepage resource 'hugepages-huge' must be hugepages-<page size>")


def test_hugepages_need_equal_request_and_limit_and_a_memory_request():
    problems = problems_of(dict(VALID, resources={"requests": {"hugepages-1Gi": "2Gi"},
                                                  "limits": {"hugepages-1Gi": "4Gi"}}))
    assert problems == [
        "resources: hugepages-1Gi cannot be overcommitted: requests (2Gi) must equal limits (4Gi)",
        "resources: hugepages need a cpu or memory request as well (the API server rejects a container "
        "with hugepages alone)",
    ]


def test_gpu_count_given_twice_with_different_values_is_refused():
    problems = problems_of(dict(VALID, gpus_per_worker=8, resources={"nvidia.com/gpu": 4, "cpu": 1}))
    assert problems == ["resources sets nvidia.com/gpu: 4 but gpus_per_worker is 8; give the GPU count in one place"]


def test_every_problem_is_reported_at_once():
    problems = problems_of(dict(name="Bad_Name", workers=0, slots_per_worker=0, env={"A=B": 1},
                                tolerations=[{"key": "k", "operator": "Exists", "value": "v", "effect": "Sometimes"}]))
    assert problems == [
        "workers must be at least 1, got 0",
        "slots_per_worker must be at least 1, got 0",
        "name 'Bad_Name' must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter "
        "and ending with a letter or digit",
        "image is required with state=present (the container image of launcher and workers), unless definition "
        "is given",
        "command is required with state=present: the launcher's command as a list, e.g. [mpirun, -np, '4', "
        "python, train.py]",
        "env: variable name 'A=B' must be a non-empty string without '='",
        "tolerations[0]: operator Exists takes no value (got 'v')",
        "tolerations[0]: effect 'Sometimes' must be one of NoSchedule, PreferNoSchedule, NoExecute",
    ]


def test_name_too_long_for_the_last_worker_hostname():
    problems = problems_of(dict(VALID, name="a" * 55, workers=10))
    assert problems == ["name '{0}' is too long: the last worker's hostname '{0}-worker-9' must be at most "
                        "63 characters".format("a" * 55)]
    assert build_mpijob(dict(VALID, name="a" * 54, workers=10))["metadata"]["name"] == "a" * 54


def test_definition_is_mutually_exclusive_with_high_level_options():
    problems = problems_of(dict(definition={"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob"},
                                image="x", workers=2, labels={"team": "ml"}))
    assert problems == ["definition is mutually exclusive with image, labels, workers: give a raw MPIJob or the "
                        "high-level options, not both"]


def test_definition_gets_name_and_namespace_and_is_otherwise_kept():
    definition = copy.deepcopy(DGX_PAIR_EXPECTED)
    del definition["metadata"]
    body = from_definition(definition, name="raw", namespace="ns1")
    assert body["metadata"] == {"name": "raw", "namespace": "ns1"}
    assert body["spec"] == DGX_PAIR_EXPECTED["spec"]
    assert "metadata" not in definition


def test_definition_name_conflict_and_zero_workers_are_refused():
    definition = copy.deepcopy(DGX_PAIR_EXPECTED)
    definition["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 0
    problems = problems_of(dict(definition=definition, name="other"))
    assert problems == ["name 'other' differs from definition.metadata.name 'resnet50-16gpu'",
                        "definition.spec.mpiReplicaSpecs.Worker.replicas must be at least 1, got 0"]


def test_applied_spec_annotation_makes_removed_fields_count_as_differences():
    body = build_mpijob(DGX_PAIR)
    live = with_applied_spec(body)
    # The API server adds the CRD's defaults; those are not differences.
    live["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "Never"
    assert spec_differences(body, live) == []
    smaller = build_mpijob(dict(DGX_PAIR, workers=4, node_selector=None))
    assert spec_differences(smaller, live) == [
        'spec.mpiReplicaSpecs.Launcher.template.spec.initContainers[0].env[1].value: "2" -> "4"',
        "spec.mpiReplicaSpecs.Worker.replicas: 2 -> 4",
        'spec.mpiReplicaSpecs.Worker.template.spec.nodeSelector: {"nvidia.com/gpu.present":"true"} -> null',
    ]


def test_job_without_the_annotation_is_compared_on_the_desired_fields_only():
    body = build_mpijob(DGX_PAIR)
    live = copy.deepcopy(body)
    live["spec"]["runPolicy"]["backoffLimit"] = 6
    assert spec_differences(body, live) == []
    live["spec"]["slotsPerWorker"] = 1
    assert spec_differences(body, live) == ["spec.slotsPerWorker: 1 -> 8"]


def test_shm_is_a_memory_emptydir_mounted_in_launcher_and_every_worker():
    body = build_mpijob(dict(VALID, shm_size="2Gi"))
    volume = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}
    for role in ("Launcher", "Worker"):
        pod = body["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert pod["volumes"] == [volume]
        assert pod["containers"][0]["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert "volumes" not in build_mpijob(dict(VALID, shm_size=""))["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]


def test_privileged_host_paths_and_service_account():
    body = build_mpijob(dict(VALID, shm_size="1Gi", privileged=True, host_paths=["/dev/hugepages", "/sys"],
                             service_account="gpuops-benchmark"))
    launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    worker = body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        {"name": "host-path-0", "hostPath": {"path": "/dev/hugepages"}},
        {"name": "host-path-1", "hostPath": {"path": "/sys"}},
    ]
    assert worker["containers"][0]["volumeMounts"] == [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "host-path-0", "mountPath": "/dev/hugepages"},
        {"name": "host-path-1", "mountPath": "/sys"},
    ]
    assert worker["containers"][0]["securityContext"] == {"privileged": True}
    # mpirun needs neither the host's devices nor privilege.
    assert launcher["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}]
    assert "securityContext" not in launcher["containers"][0]
    assert launcher["serviceAccountName"] == worker["serviceAccountName"] == "gpuops-benchmark"


def test_infiniband_in_pods_rdma_resource_ipc_lock_and_shm_without_privilege():
    """RDMA through a device plugin's resource: the workers ask for it beside their GPUs, add only IPC_LOCK (to pin
    the memory RDMA registers) and get the /dev/shm size; nothing is privileged, and mpirun's pod gets neither."""
    body = build_mpijob(dict(VALID, gpus_per_worker=8, shm_size="32Gi", capabilities=["IPC_LOCK", "IPC_LOCK"],
                             resources={"rdma/rdma_shared_device_a": 1, "memory": "512Gi"}))
    launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    worker = body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["containers"][0]["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    wanted = {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1", "memory": "512Gi"}
    assert worker["containers"][0]["resources"] == {"limits": wanted, "requests": wanted}
    assert worker["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}}]
    assert "securityContext" not in launcher and "resources" not in launcher
    both = build_mpijob(dict(VALID, privileged=True, capabilities=["IPC_LOCK"]))["spec"]["mpiReplicaSpecs"]["Worker"]
    assert both["template"]["spec"]["containers"][0]["securityContext"] == {
        "privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}


def test_bad_capabilities_are_refused_naming_them():
    assert problems_of(dict(VALID, capabilities=["CAP_IPC_LOCK", "ipc_lock", 7])) == [
        "capabilities[0]: write 'IPC_LOCK' without its CAP_ prefix, as Kubernetes takes it",
        "capabilities[1]: 'ipc_lock' must be a Linux capability in capitals such as IPC_LOCK or SYS_RESOURCE",
        "capabilities[2]: 7 must be a Linux capability in capitals such as IPC_LOCK or SYS_RESOURCE",
    ]
    assert problems_of(dict(VALID, capabilities="IPC_LOCK")) == [
        "capabilities must be a list of Linux capabilities such as [IPC_LOCK], got 'IPC_LOCK'"]


def test_image_pull_secrets_are_referenced_by_the_launcher_and_every_worker():
    body = build_mpijob(dict(VALID, image_pull_secrets=["gpuops-registry", "ngc"]))
    for role in ("Launcher", "Worker"):
        pod = body["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "gpuops-registry"}, {"name": "ngc"}]
    # None given, or an empty list (a role with no registry credentials), leaves the pods as they were.
    for given in (None, []):
        worker = build_mpijob(dict(VALID, image_pull_secrets=given))["spec"]["mpiReplicaSpecs"]["Worker"]
        assert "imagePullSecrets" not in worker["template"]["spec"]


def test_bad_or_repeated_image_pull_secrets_are_refused_naming_them():
    assert problems_of(dict(VALID, image_pull_secrets=["Registry_Creds", "ngc", "ngc"])) == [
        "image_pull_secrets[0]: 'Registry_Creds' must be a Secret's name, a DNS-1123 subdomain such as gpuops-registry",
        "image_pull_secrets[2]: ngc is given twice",
    ]


def test_definition_is_mutually_exclusive_with_image_pull_secrets():
    definition = copy.deepcopy(DGX_PAIR_EXPECTED)
    assert problems_of(dict(definition=definition, image_pull_secrets=["gpuops-registry"])) == [
        "definition is mutually exclusive with image_pull_secrets: give a raw MPIJob or the high-level options, "
        "not both"]
    assert desired_job(dict(definition=definition, image_pull_secrets=[]))["spec"] == DGX_PAIR_EXPECTED["spec"]


def test_privileged_off_and_no_host_paths_leave_the_pods_alone():
    worker = build_mpijob(dict(VALID, privileged=False, host_paths=[]))["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["template"]["spec"] == {"containers": [{"name": "worker", "image": "horovod:0.28.1",
                                                          "readinessProbe": SSH_PROBE}]}


def test_bad_shm_size_host_paths_and_service_account_are_refused_naming_them():
    problems = problems_of(dict(VALID, shm_size="1 GB", host_paths=["dev/hugepages", "/sys", "/sys"],
                                service_account="Bench_SA"))
    assert problems == [
        "shm_size: '1 GB' is not a valid quantity (expected a memory size such as 512Mi or 1Gi)",
        "host_paths[0]: 'dev/hugepages' must be an absolute path such as /dev/hugepages",
        "host_paths[2]: /sys is given twice",
        "service_account 'Bench_SA' must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', "
        "starting and ending with a letter or digit",
    ]


def test_definition_with_privileged_at_its_default_is_accepted_but_not_with_host_paths():
    definition = copy.deepcopy(DGX_PAIR_EXPECTED)
    assert desired_job(dict(definition=definition, privileged=False))["spec"] == DGX_PAIR_EXPECTED["spec"]
    assert problems_of(dict(definition=definition, privileged=True, host_paths=["/sys"])) == [
        "definition is mutually exclusive with host_paths, privileged: give a raw MPIJob or the high-level options, "
        "not both"]
