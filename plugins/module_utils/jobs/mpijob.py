# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What is particular to a Kubeflow MPIJob (kubeflow.org/v2beta1): its replica specs (a launcher that
runs mpirun, workers that run sshd), slots per worker, and why one fails.

The MPIJob's failure predicate ends a wait as soon as the job cannot succeed any more:

* the MPIJob has the condition Failed=True (launcher Job failed, a worker was evicted, deadline);
* a worker pod is in phase Failed: the MPI Operator never replaces a failed worker, so mpirun on
  the launcher has lost a rank and the job can only fail, after the launcher's retries;
* a container of the launcher or of a worker cannot start (an image that cannot be pulled, a
  container the runtime cannot create): the kubelet would retry it until the timeout;
* the MPI Operator rejected the job (a ValidationError event on a job with no condition yet): it
  will never act on it.

Everything else (pod template pieces, comparison, status, logs, the lifecycle) is shared with the other
job kinds in this package.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs import pod_template
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import (
    containers_cannot_start,
    failed_pods,
    failed_pods_text,
    gone_or_failed,
    rejected_by_operator,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kind import (
    KUBEFLOW_JOB_NAME_LABEL,
    KUBEFLOW_JOB_ROLE_LABEL,
    JobKind,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import is_dns1035_label

KIND = "MPIJob"
LAUNCHER_CREATION_POLICIES = ("AtStartup", "WaitForWorkersReady")
CLEAN_POD_POLICIES = ("None", "Running", "All")
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_SSH_PORT = 22
# A failed launcher pod stays, with its log. Under the operator's default, OnFailure, the kubelet restarts
# the container and the Job controller deletes the pod once its restarts pass the backoff limit.
LAUNCHER_RESTART_POLICY = "Never"

# The options that describe the job; a raw `definition` excludes them all.
HIGH_LEVEL_OPTIONS = (
    "image", "command", "worker_command", "workers", "slots_per_worker", "gpus_per_worker", "env",
    "resources", "launcher_resources", "host_network", "node_selector", "tolerations",
    "launcher_creation_policy", "clean_pod_policy", "ttl_seconds_after_finished",
    "active_deadline_seconds", "backoff_limit", "ssh_auth_mount_path", "mpi_implementation",
    "image_pull_policy", "labels", "annotations", "shm_size", "privileged", "host_paths", "service_account",
    "worker_ssh_port", "spread_workers",
)
# Options whose default the module's argument spec fills in: at that value they count as not given.
_OPTION_DEFAULTS = {"privileged": False, "spread_workers": False}

_CHOICES = (("launcher_creation_policy", LAUNCHER_CREATION_POLICIES),
            ("clean_pod_policy", CLEAN_POD_POLICIES),
            ("mpi_implementation", MPI_IMPLEMENTATIONS),
            ("image_pull_policy", pod_template.IMAGE_PULL_POLICIES))


def mpijob_failure(observation):
    """The failure predicate: why the MPIJob cannot succeed any more, or None while it still can."""
    reason = gone_or_failed(KIND, observation)
    if reason or observation.status["phase"] == "Succeeded":
        return reason
    failed = failed_pods(MPIJOB, observation, "worker")
    if failed:
        return ("worker pod(s) failed: {0}; the MPI Operator does not replace a failed worker, so mpirun has "
                "lost a rank and the job cannot succeed".format(failed_pods_text(failed, MPIJOB.role_label)))
    return containers_cannot_start(observation) or rejected_by_operator(observation, "the MPI Operator", KIND)


MPIJOB = JobKind(KIND, "kubeflow.org", "v2beta1", "mpijobs", failure=mpijob_failure, log_role="launcher")


def invalid(problems):
    return InvalidArgumentError(problems, KIND)


def name_problems(name, workers=1):
    """The MPI Operator names pods <name>-worker-<i> and a Service <name>: both must be DNS-1035 labels."""
    if not isinstance(name, str) or not name:
        return ["name is required (the MPIJob's metadata.name)"]
    longest = "{0}-worker-{1}".format(name, max(int(workers or 1), 1) - 1)
    if not is_dns1035_label(name):
        return ["name {0!r} must be a DNS-1035 label: lowercase letters, digits and '-', starting with a "
                "letter and ending with a letter or digit".format(name)]
    if len(longest) > 63:
        return ["name {0!r} is too long: the last worker's hostname {1!r} must be at most 63 characters".format(
            name, longest)]
    return []


def _counts(params, problems):
    """Workers, GPUs per worker and slots per worker, with their defaults."""
    workers = pod_template.int_option(params, "workers", 1, problems)
    if workers is None and params.get("workers") is None:
        workers = 1
    gpus = max(pod_template.int_option(params, "gpus_per_worker", 0, problems) or 0, 0)
    slots = pod_template.int_option(params, "slots_per_worker", 1, problems)
    if params.get("slots_per_worker") is None:
        # One MPI rank per GPU is what Horovod expects; CPU-only workers run one rank each.
        slots = gpus if gpus > 0 else 1
    return workers, gpus, slots


def _option_problems(params, gpu_resource):
    problems = []
    image, command, worker_command = params.get("image"), params.get("command"), params.get("worker_command")
    if not isinstance(image, str) or not image.strip():
        problems.append("image is required with state=present (the container image of launcher and workers), "
                        "unless definition is given")
    if not command:
        problems.append("command is required with state=present: the launcher's command as a list, "
                        "e.g. [mpirun, -np, '4', python, train.py]")
    elif not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        problems.append("command must be a list of strings, got {0!r}".format(command))
    if worker_command is not None and (not isinstance(worker_command, list) or not worker_command
                                       or not all(isinstance(part, str) for part in worker_command)):
        problems.append("worker_command must be a non-empty list of strings, got {0!r}".format(worker_command))
    problems.extend(pod_template.gpu_resource_problems(gpu_resource))
    for argument, allowed in _CHOICES:
        if params.get(argument) is not None and params[argument] not in allowed:
            problems.append("{0} must be one of {1}, got {2!r}".format(argument, ", ".join(allowed), params[argument]))
    mount = params.get("ssh_auth_mount_path")
    if mount is not None and (not isinstance(mount, str) or not mount.startswith("/")):
        problems.append("ssh_auth_mount_path must be an absolute path, got {0!r}".format(mount))
    return problems


def _run_policy(params, problems):
    run_policy = {}
    if params.get("clean_pod_policy") is not None:
        run_policy["cleanPodPolicy"] = params["clean_pod_policy"]
    run_policy.update(pod_template.int_fields(params, (("ttl_seconds_after_finished", "ttlSecondsAfterFinished", 0),
                                                       ("active_deadline_seconds", "activeDeadlineSeconds", 1),
                                                       ("backoff_limit", "backoffLimit", 0)), problems))
    return run_policy


def _one_worker_per_node(name):
    """At most one more worker of this job on any node than on another, and no worker placed against that:
    with as many workers as nodes, one on each, so that every allreduce crosses the network."""
    return {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {KUBEFLOW_JOB_NAME_LABEL: name, KUBEFLOW_JOB_ROLE_LABEL: "worker"}}}


def build_mpijob(params):
    """The MPIJob body for the module's high-level arguments. Raises InvalidArgumentError.

    `params` holds the module's options (missing ones count as not given).
    """
    problems = []
    name = params.get("name")
    gpu_resource = params.get("gpu_resource_name") or DEFAULT_GPU_RESOURCE
    workers, gpus, slots = _counts(params, problems)
    run_policy = _run_policy(params, problems)
    problems.extend(name_problems(name, workers if isinstance(workers, int) else 1))
    problems.extend(_option_problems(params, gpu_resource))
    env = pod_template.normalize_env(params.get("env"), problems)
    worker_resources = pod_template.normalize_resources(params.get("resources"), "resources", problems)
    launcher_resources = pod_template.normalize_resources(params.get("launcher_resources"), "launcher_resources",
                                                          problems)
    tolerations = pod_template.normalize_tolerations(params.get("tolerations"), problems)
    node_selector = pod_template.normalize_node_selector(params.get("node_selector"), problems)
    shm = pod_template.shm_volume(params.get("shm_size"), problems)
    host_paths = pod_template.host_path_volumes(params.get("host_paths"), problems)
    service_account = pod_template.service_account_name(params.get("service_account"), problems)
    ssh_port = pod_template.port_option(params, "worker_ssh_port", 0, problems)
    if ssh_port is None:
        ssh_port = DEFAULT_SSH_PORT
    if gpus:
        pod_template.set_extended_resource(worker_resources, gpu_resource, gpus, "gpus_per_worker", problems)
    if problems:
        raise invalid(problems)

    image, pull = params.get("image"), params.get("image_pull_policy")
    launcher_pod = {"containers": [pod_template.container("launcher", image, params.get("command"), env,
                                                          launcher_resources, pull)]}
    worker_pod = {"containers": [pod_template.container("worker", image, params.get("worker_command"), env,
                                                        worker_resources, pull)]}
    if ssh_port:
        # The MPI Operator creates the launcher once every worker is ready; without the probe a worker is
        # ready as soon as its container starts, and mpirun can reach it before sshd listens, failing the job.
        worker_pod["containers"][0]["readinessProbe"] = pod_template.tcp_readiness_probe(ssh_port)
    if params.get("host_network"):
        launcher_pod["hostNetwork"] = True
        worker_pod["hostNetwork"] = True
    # Placement applies to the workers, which hold the GPUs; the launcher only runs mpirun.
    if node_selector:
        worker_pod["nodeSelector"] = node_selector
    if params.get("spread_workers"):
        worker_pod["topologySpreadConstraints"] = [_one_worker_per_node(name)]
    if tolerations:
        worker_pod["tolerations"] = tolerations
    if shm:
        pod_template.mount(launcher_pod, [shm])
        pod_template.mount(worker_pod, [shm])
    # Host paths and privilege are for the ranks' devices (RDMA, hugepages, sysfs); mpirun needs neither.
    pod_template.mount(worker_pod, host_paths)
    if params.get("privileged"):
        pod_template.privileged(worker_pod)
    if service_account:
        launcher_pod["serviceAccountName"] = service_account
        worker_pod["serviceAccountName"] = service_account

    spec = {
        "slotsPerWorker": slots,
        "launcherCreationPolicy": params.get("launcher_creation_policy") or "WaitForWorkersReady",
        "mpiImplementation": params.get("mpi_implementation") or "OpenMPI",
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "restartPolicy": LAUNCHER_RESTART_POLICY, "template": {"spec": launcher_pod}},
            "Worker": {"replicas": workers, "template": {"spec": worker_pod}},
        },
    }
    if run_policy:
        spec["runPolicy"] = run_policy
    if params.get("ssh_auth_mount_path"):
        spec["sshAuthMountPath"] = params["ssh_auth_mount_path"]

    return {"apiVersion": MPIJOB.api_version, "kind": KIND, "metadata": pod_template.job_metadata(params, name),
            "spec": spec}


def _definition_workers(body, problems):
    """The worker count of a raw definition (1 when it does not say), checking its replica specs."""
    spec = body.get("spec")
    replica_specs = spec.get("mpiReplicaSpecs") if isinstance(spec, dict) else None
    if not isinstance(replica_specs, dict) or not isinstance(replica_specs.get("Launcher"), dict):
        problems.append("definition.spec.mpiReplicaSpecs.Launcher is required")
        return 1
    worker = replica_specs.get("Worker") or {}
    replicas = worker.get("replicas", 1)
    if not isinstance(replicas, int):
        return 1
    if "Worker" in replica_specs and "replicas" in worker and replicas < 1:
        problems.append("definition.spec.mpiReplicaSpecs.Worker.replicas must be at least 1, got {0}".format(replicas))
    return replicas


def from_definition(definition, name=None, namespace=None):
    """Check a raw MPIJob definition and fill in name and namespace. Raises InvalidArgumentError."""
    if not isinstance(definition, dict):
        raise invalid(["definition must be a dict (an MPIJob manifest), got {0!r}".format(type(definition).__name__)])
    problems = []
    if definition.get("apiVersion") != MPIJOB.api_version:
        problems.append("definition.apiVersion must be {0}, got {1!r}".format(MPIJOB.api_version,
                                                                              definition.get("apiVersion")))
    if definition.get("kind") != KIND:
        problems.append("definition.kind must be {0}, got {1!r}".format(KIND, definition.get("kind")))
    body = copy.deepcopy(definition)
    metadata = body.setdefault("metadata", {}) or {}
    body["metadata"] = metadata
    for field, given in (("name", name), ("namespace", namespace)):
        if not given:
            continue
        if metadata.get(field) not in (None, given):
            problems.append("{0} {1!r} differs from definition.metadata.{0} {2!r}".format(field, given, metadata[field]))
        metadata[field] = given
    metadata.setdefault("namespace", "default")
    workers = _definition_workers(body, problems)
    problems.extend("definition.metadata." + problem for problem in name_problems(metadata.get("name"), workers))
    if problems:
        raise invalid(problems)
    return body


def high_level_options_given(params):
    return sorted(option for option in HIGH_LEVEL_OPTIONS
                  if params.get(option) not in (None, "", [], {}) and params.get(option) is not _OPTION_DEFAULTS.get(option))


def desired_job(params):
    """The MPIJob body from either `definition` or the high-level options; never both."""
    if params.get("definition") is not None:
        given = high_level_options_given(params)
        if given:
            raise invalid(["definition is mutually exclusive with {0}: give a raw MPIJob or "
                           "the high-level options, not both".format(", ".join(given))])
        return from_definition(params["definition"], params.get("name"), params.get("namespace"))
    return build_mpijob(params)


def job_to_delete(params):
    """(namespace, name) of the job state=absent removes, from the options or the definition's metadata."""
    definition_meta = (params.get("definition") or {}).get("metadata") or {}
    name = params.get("name") or definition_meta.get("name")
    namespace = params.get("namespace") or definition_meta.get("namespace") or "default"
    problems = name_problems(name)
    if problems:
        raise invalid(problems)
    return namespace, name
