# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What is particular to a Kubeflow PyTorchJob (kubeflow.org/v1, the Training Operator's API): one Master replica
and Worker replicas, every pod running the same command, PyTorch reading its part from the environment the operator
injects, and why one fails.

The Training Operator (v1.9) gives the container named pytorch of every pod MASTER_ADDR (the master's Service,
<name>-master-0), MASTER_PORT (the master's container port pytorchjob-port), WORLD_SIZE (pods x nprocPerNode),
RANK (the pod's index: the master 0, worker i i+1), and for torchrun PET_NNODES, PET_NODE_RANK and
PET_NPROC_PER_NODE. It names each pod <name>-<replica type>-<index>, labels it with its replica type in lowercase,
and the master also with training.kubeflow.org/job-role=master: the job succeeds when the master completes.
Workers get an init container that waits until the master's name resolves.

The failure predicate ends a wait as soon as the job cannot succeed any more: the condition Failed, a failed pod
of a replica with restartPolicy Never (every replica built here), a container that cannot start, or the
operator's rejection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs import kubeflow, pod_template
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import operator_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kind import (
    KUBEFLOW_JOB_NAME_LABEL,
    KUBEFLOW_JOB_ROLE_LABEL,
    KUBEFLOW_REPLICA_TYPE_LABEL,
    JobKind,
)

KIND = "PyTorchJob"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
# The Training Operator's webhook refuses a PyTorchJob whose replicas have no container of this name, and it puts
# its environment in that container only.
CONTAINER_NAME = "pytorch"
# The port of the rendezvous on the master, named as the operator looks it up for MASTER_PORT and the Services.
PORT_NAME = "pytorchjob-port"
DEFAULT_PORT = 23456
MASTER_ROLE = "master"

HIGH_LEVEL_OPTIONS = (
    "image", "command", "workers", "procs_per_worker", "gpus_per_worker", "env", "resources", "host_network",
    "node_selector", "tolerations", "clean_pod_policy", "ttl_seconds_after_finished", "active_deadline_seconds",
    "backoff_limit", "image_pull_policy", "labels", "annotations", "shm_size", "privileged", "capabilities",
    "host_paths", "service_account", "spread_workers", "port", "image_pull_secrets", "volumes",
)
_OPTION_DEFAULTS = {"privileged": False, "spread_workers": False}
_CHOICES = (("clean_pod_policy", kubeflow.CLEAN_POD_POLICIES), ("image_pull_policy", pod_template.IMAGE_PULL_POLICIES))
# A job with an elasticPolicy outlives a failed worker.
SPECS = kubeflow.ReplicaSpecs("pytorchReplicaSpecs", CONTAINER_NAME, PORT_NAME, "elasticPolicy")


def pytorchjob_failure(observation):
    """The failure predicate: why the PyTorchJob cannot succeed any more, or None while it still can."""
    return operator_failure(observation, KIND, "the Training Operator",
                            lambda seen: kubeflow.failed_replicas(PYTORCHJOB, SPECS, seen))


PYTORCHJOB = JobKind(KIND, "kubeflow.org", "v1", "pytorchjobs", failure=pytorchjob_failure, log_role=MASTER_ROLE,
                     role_label=KUBEFLOW_REPLICA_TYPE_LABEL, log_label=KUBEFLOW_JOB_ROLE_LABEL, replica_logs=True)


def name_problems(name, replicas=None):
    """Each pod, and the Service in front of it, is named <name>-<replica type>-<index>: `name` must be a DNS-1035
    label and the longest of those names at most 63 characters. `replicas` maps each replica type in lowercase to
    its count (the master alone when not given)."""
    suffixes = ["-{0}-{1}".format(replica_type, count - 1)
                for replica_type, count in sorted((replicas or {"master": 1}).items()) if count > 0]
    return kubeflow.name_problems(KIND, name, max(suffixes or ["-master-0"], key=len), "the longest pod name")


def _option_problems(params, gpu_resource):
    problems = kubeflow.image_and_command_problems(params, "every pod", "the command every pod runs, as a list, e.g. "
                                                   "[torchrun, --nproc-per-node, '2', train.py]")
    return problems + pod_template.gpu_resource_problems(gpu_resource) + pod_template.choice_problems(params, _CHOICES)


def build_pytorchjob(params):
    """The PyTorchJob body for the module's high-level arguments: `workers` pods, the first the Master replica, the
    others Worker replicas, alike. Raises InvalidArgumentError listing every problem."""
    problems = []
    name = params.get("name")
    gpu_resource = params.get("gpu_resource_name") or DEFAULT_GPU_RESOURCE
    workers, gpus = kubeflow.worker_counts(params, problems)
    procs = pod_template.int_option(params, "procs_per_worker", 1, problems)
    run_policy = kubeflow.run_policy(params, problems)
    problems.extend(name_problems(name, {"master": 1, "worker": max((workers or 1) - 1, 0)}))
    problems.extend(_option_problems(params, gpu_resource))
    options = pod_template.pod_options(params, problems)
    volumes = pod_template.extra_volumes(params.get("volumes"), problems)
    port = pod_template.port_option(params, "port", 1, problems) or DEFAULT_PORT
    if gpus:
        pod_template.set_extended_resource(options.resources, gpu_resource, gpus, "gpus_per_worker", problems)
    if problems:
        raise InvalidArgumentError(problems, KIND)

    def replica(count):
        container = pod_template.container(CONTAINER_NAME, params["image"], params["command"], options.env,
                                           options.resources, params.get("image_pull_policy"))
        pod = kubeflow.replica_pod(params, options, volumes, container, (PORT_NAME, port), placed=True)
        kubeflow.grant_training_devices(pod, params, options)
        if params.get("spread_workers"):
            # Master and workers alike: every pod trains.
            pod["topologySpreadConstraints"] = [pod_template.one_per_node({KUBEFLOW_JOB_NAME_LABEL: name})]
        return kubeflow.replica_spec(count, pod)

    replica_specs = {"Master": replica(1)}
    if workers > 1:
        replica_specs["Worker"] = replica(workers - 1)
    spec = {"pytorchReplicaSpecs": replica_specs}
    if procs is not None:
        # The operator's WORLD_SIZE counts it, and torchrun reads it as PET_NPROC_PER_NODE.
        spec["nprocPerNode"] = str(procs)
    if run_policy:
        spec["runPolicy"] = run_policy
    return {"apiVersion": PYTORCHJOB.api_version, "kind": KIND, "metadata": pod_template.job_metadata(params, name),
            "spec": spec}


def _definition_replicas(body, problems):
    return kubeflow.definition_replicas(SPECS, KIND, body, problems)


def from_definition(definition, name=None, namespace=None):
    """Check a raw PyTorchJob definition and fill in name and namespace. Raises InvalidArgumentError."""
    return kubeflow.from_definition(PYTORCHJOB, definition, name, namespace, _definition_replicas, name_problems)


# The module's state=present and state=absent: the PyTorchJob body, and (namespace, name) of the job to delete.
desired_job, job_to_delete = kubeflow.job_functions(PYTORCHJOB, HIGH_LEVEL_OPTIONS, _OPTION_DEFAULTS,
                                                    build_pytorchjob, from_definition, name_problems)
