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

from ansible_collections.gpuops.cluster.plugins.module_utils.common.open_mpi import mca_environment
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs import kubeflow, pod_template
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import failed_pods, failed_pods_text, operator_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kind import (
    KUBEFLOW_JOB_NAME_LABEL,
    KUBEFLOW_JOB_ROLE_LABEL,
    JobKind,
)

KIND = "MPIJob"
LAUNCHER_CREATION_POLICIES = ("AtStartup", "WaitForWorkersReady")
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_SSH_PORT = 22
# What the MPI Operator gives an Open MPI launcher in Open MPI 4's names alone (OMPI_MCA_*: its host file at
# /etc/mpi/hostfile, the workers' names whole, SSH retries), which Open MPI 5's mpirun does not read.
OPERATOR_OPEN_MPI_SETTINGS = {"orte_default_hostfile": "/etc/mpi/hostfile", "orte_keep_fqdn_hostnames": "true",
                              "plm_rsh_args": "-o ConnectionAttempts=10"}
# A failed launcher pod stays, with its log. Under the operator's default, OnFailure, the kubelet restarts
# the container and the Job controller deletes the pod once its restarts pass the backoff limit.
LAUNCHER_RESTART_POLICY = "Never"
# How long the launcher waits for its workers' names to resolve before mpirun starts anyway (and reports
# the name it could not reach). A worker's DNS record follows its readiness by the time the cluster's DNS
# takes to see the new endpoints, which under load is long enough for a launcher created at once to fail.
WORKER_NAMES_WAIT_SECONDS = 120

# The options that describe the job; a raw `definition` excludes them all.
HIGH_LEVEL_OPTIONS = (
    "image", "command", "worker_command", "workers", "slots_per_worker", "gpus_per_worker", "env",
    "resources", "launcher_resources", "host_network", "node_selector", "tolerations",
    "launcher_creation_policy", "clean_pod_policy", "ttl_seconds_after_finished",
    "active_deadline_seconds", "backoff_limit", "ssh_auth_mount_path", "mpi_implementation",
    "image_pull_policy", "labels", "annotations", "shm_size", "privileged", "capabilities", "host_paths", "service_account",
    "worker_ssh_port", "spread_workers", "image_pull_secrets",
)
# Options whose default the module's argument spec fills in: at that value they count as not given.
_OPTION_DEFAULTS = {"privileged": False, "spread_workers": False}

_CHOICES = (("launcher_creation_policy", LAUNCHER_CREATION_POLICIES),
            ("clean_pod_policy", kubeflow.CLEAN_POD_POLICIES),
            ("mpi_implementation", MPI_IMPLEMENTATIONS),
            ("image_pull_policy", pod_template.IMAGE_PULL_POLICIES))


def _lost_rank(observation):
    failed = failed_pods(MPIJOB, observation, "worker")
    if failed:
        return ("worker pod(s) failed: {0}; the MPI Operator does not replace a failed worker, so mpirun has "
                "lost a rank and the job cannot succeed".format(failed_pods_text(failed, MPIJOB.role_label)))
    return None


def mpijob_failure(observation):
    """The failure predicate: why the MPIJob cannot succeed any more, or None while it still can."""
    return operator_failure(observation, KIND, "the MPI Operator", _lost_rank)


MPIJOB = JobKind(KIND, "kubeflow.org", "v2beta1", "mpijobs", failure=mpijob_failure, log_role="launcher")


def invalid(problems):
    return InvalidArgumentError(problems, KIND)


def name_problems(name, workers=1):
    """The MPI Operator names pods <name>-worker-<i> and a Service <name>: both must be DNS-1035 labels."""
    return kubeflow.name_problems(KIND, name, "-worker-{0}".format(max(int(workers or 1), 1) - 1),
                                  "the last worker's hostname")


def _counts(params, problems):
    """Workers, GPUs per worker and slots per worker, with their defaults."""
    workers, gpus = kubeflow.worker_counts(params, problems)
    slots = pod_template.int_option(params, "slots_per_worker", 1, problems)
    if params.get("slots_per_worker") is None:
        # One MPI rank per GPU is what Horovod expects; CPU-only workers run one rank each.
        slots = gpus if gpus > 0 else 1
    return workers, gpus, slots


def wait_for_workers_script(seconds=WORKER_NAMES_WAIT_SECONDS):
    """sh that returns once $JOB-worker-0.$JOB ... $JOB-worker-<$WORKERS - 1>.$JOB resolve, or after `seconds`
    saying which does not; at once where the image has no getent to ask with."""
    return ('command -v getent >/dev/null || exit 0; deadline=$(($(date +%s) + {0})); index=0; '
            'while [ "$index" -lt "$WORKERS" ]; do host="$JOB-worker-$index.$JOB"; '
            'until getent hosts "$host" >/dev/null; do '
            'if [ "$(date +%s)" -ge "$deadline" ]; then echo "$host does not resolve after {0} s"; exit 0; fi; '
            'sleep 1; done; index=$((index + 1)); done').format(seconds)


def wait_for_workers_container(name, workers, image, resources, image_pull_policy):
    """The launcher's init container: it returns once every worker's name (as the MPI Operator writes it
    in the hostfile, <name>-worker-<i>.<name>) resolves, or after WORKER_NAMES_WAIT_SECONDS."""
    env = [{"name": "JOB", "value": name}, {"name": "WORKERS", "value": str(workers)}]
    return pod_template.container("wait-for-workers", image, ["sh", "-c", wait_for_workers_script()], env, resources,
                                  image_pull_policy)


def open_mpi_5_env(env, ssh_port):
    """The launcher's environment: the module's, and the MPI Operator's Open MPI settings in Open MPI 5's names (with
    the workers' SSH port where it is not 22), each unless the environment given names it."""
    settings = dict(OPERATOR_OPEN_MPI_SETTINGS)
    if ssh_port != DEFAULT_SSH_PORT:
        settings["plm_rsh_args"] += " -p %d" % ssh_port
    given = set(item["name"] for item in env or [])
    return list(env or []) + [{"name": name, "value": value} for name, value in sorted(mca_environment(
        settings, open_mpi_4=False).items()) if name not in given]


def _option_problems(params, gpu_resource):
    problems = kubeflow.image_and_command_problems(params, "launcher and workers", "the launcher's command as a list, "
                                                   "e.g. [mpirun, -np, '4', python, train.py]")
    worker_command = params.get("worker_command")
    if worker_command is not None and (not isinstance(worker_command, list) or not worker_command
                                       or not all(isinstance(part, str) for part in worker_command)):
        problems.append("worker_command must be a non-empty list of strings, got {0!r}".format(worker_command))
    problems.extend(pod_template.gpu_resource_problems(gpu_resource))
    problems.extend(pod_template.choice_problems(params, _CHOICES))
    mount = params.get("ssh_auth_mount_path")
    if mount is not None and (not isinstance(mount, str) or not mount.startswith("/")):
        problems.append("ssh_auth_mount_path must be an absolute path, got {0!r}".format(mount))
    return problems


def build_mpijob(params):
    """The MPIJob body for the module's high-level arguments. Raises InvalidArgumentError.

    `params` holds the module's options (missing ones count as not given).
    """
    problems = []
    name = params.get("name")
    gpu_resource = params.get("gpu_resource_name") or DEFAULT_GPU_RESOURCE
    workers, gpus, slots = _counts(params, problems)
    run_policy = kubeflow.run_policy(params, problems)
    problems.extend(name_problems(name, workers if isinstance(workers, int) else 1))
    problems.extend(_option_problems(params, gpu_resource))
    (env, worker_resources, tolerations, node_selector, shm, host_paths, service_account,
     pull_secrets, capabilities) = pod_template.pod_options(params, problems)
    launcher_resources = pod_template.normalize_resources(params.get("launcher_resources"), "launcher_resources",
                                                          problems)
    ssh_port = pod_template.port_option(params, "worker_ssh_port", 0, problems)
    if ssh_port is None:
        ssh_port = DEFAULT_SSH_PORT
    if gpus:
        pod_template.set_extended_resource(worker_resources, gpu_resource, gpus, "gpus_per_worker", problems)
    if problems:
        raise invalid(problems)

    image, pull = params.get("image"), params.get("image_pull_policy")
    implementation = params.get("mpi_implementation") or "OpenMPI"
    launcher_env = open_mpi_5_env(env, ssh_port) if implementation == "OpenMPI" else env
    launcher_pod = {"initContainers": [wait_for_workers_container(name, workers, image, launcher_resources, pull)],
                    "containers": [pod_template.container("launcher", image, params.get("command"), launcher_env,
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
        worker_pod["topologySpreadConstraints"] = [pod_template.one_per_node({KUBEFLOW_JOB_NAME_LABEL: name,
                                                                              KUBEFLOW_JOB_ROLE_LABEL: "worker"})]
    if tolerations:
        worker_pod["tolerations"] = tolerations
    if shm:
        pod_template.mount(launcher_pod, [shm])
        pod_template.mount(worker_pod, [shm])
    # Host paths and privilege are for the ranks' devices (RDMA, hugepages, sysfs); mpirun needs neither.
    pod_template.mount(worker_pod, host_paths)
    pod_template.grant_device_access(worker_pod, params.get("privileged"), capabilities)
    if service_account:
        launcher_pod["serviceAccountName"] = service_account
        worker_pod["serviceAccountName"] = service_account
    pod_template.pull_with(launcher_pod, pull_secrets)
    pod_template.pull_with(worker_pod, pull_secrets)

    spec = {
        "slotsPerWorker": slots,
        "launcherCreationPolicy": params.get("launcher_creation_policy") or "WaitForWorkersReady",
        "mpiImplementation": implementation,
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
    return kubeflow.from_definition(MPIJOB, definition, name, namespace, _definition_workers, name_problems)


# The module's state=present and state=absent: the MPIJob body, and (namespace, name) of the job to delete.
desired_job, job_to_delete = kubeflow.job_functions(MPIJOB, HIGH_LEVEL_OPTIONS, _OPTION_DEFAULTS, build_mpijob,
                                                    from_definition, name_problems)
