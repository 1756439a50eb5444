# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What is particular to a Kubeflow TFJob (kubeflow.org/v1, the Training Operator's API): its replica specs
(workers that hold the GPUs, optional parameter servers and a chief, every one running the same command,
TensorFlow reading its part from the TF_CONFIG the operator injects), and why one fails.

The Training Operator labels each pod with its replica type in lowercase (training.kubeflow.org/replica-type:
chief, worker, ps, evaluator) and its index, and names it <name>-<replica type>-<index>. The pod whose log
tells the result has training.kubeflow.org/job-role=master: the chief, or worker 0 when there is none, whose
completion makes the job succeed.

The TFJob's failure predicate ends a wait as soon as the job cannot succeed any more:

* the TFJob has the condition Failed=True;
* a pod of a replica type with restartPolicy Never (every replica this module builds, and the operator's
  default) is in phase Failed: the operator does not restart it and fails the job;
* a container of any pod cannot start (an image that cannot be pulled, a container the runtime cannot create);
* the Training Operator rejected the job (a ValidationError event on a job with no condition yet).
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

KIND = "TFJob"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
# The Training Operator's webhook refuses a TFJob whose replicas have no container of this name, and it puts
# TF_CONFIG in that container only.
CONTAINER_NAME = "tensorflow"
# The port the TensorFlow servers listen on, named as the operator looks it up for TF_CONFIG and the Services.
PORT_NAME = "tfjob-port"
DEFAULT_PORT = 2222
# The job-role label's value on the pod whose log tells the result, and the prefix of the result's log keys.
MASTER_ROLE = "master"

# The options that describe the job; a raw `definition` excludes them all.
HIGH_LEVEL_OPTIONS = (
    "image", "command", "workers", "parameter_servers", "chief", "gpus_per_worker", "env", "resources",
    "ps_resources", "host_network", "node_selector", "tolerations", "clean_pod_policy", "ttl_seconds_after_finished",
    "active_deadline_seconds", "backoff_limit", "image_pull_policy", "labels", "annotations", "shm_size",
    "privileged", "capabilities", "host_paths", "service_account", "spread_workers", "port", "success_policy",
    "image_pull_secrets", "volumes",
)
# Options whose default the module's argument spec fills in: at that value they count as not given.
_OPTION_DEFAULTS = {"privileged": False, "spread_workers": False, "chief": False}

SUCCESS_POLICIES = ("AllWorkers",)
_CHOICES = (("clean_pod_policy", kubeflow.CLEAN_POD_POLICIES),
            ("image_pull_policy", pod_template.IMAGE_PULL_POLICIES),
            ("success_policy", SUCCESS_POLICIES))


SPECS = kubeflow.ReplicaSpecs("tfReplicaSpecs", CONTAINER_NAME, PORT_NAME, "enableDynamicWorker")


def _failed_replicas(observation):
    return kubeflow.failed_replicas(TFJOB, SPECS, observation)


def tfjob_failure(observation):
    """The failure predicate: why the TFJob cannot succeed any more, or None while it still can."""
    return operator_failure(observation, KIND, "the Training Operator", _failed_replicas)


TFJOB = JobKind(KIND, "kubeflow.org", "v1", "tfjobs", failure=tfjob_failure, log_role=MASTER_ROLE,
                role_label=KUBEFLOW_REPLICA_TYPE_LABEL, log_label=KUBEFLOW_JOB_ROLE_LABEL, replica_logs=True)


def name_problems(name, replicas=None):
    """The Training Operator names each pod, and the Service in front of it, <name>-<replica type>-<index>:
    `name` must be a DNS-1035 label and the longest of those names at most 63 characters. `replicas` maps
    each replica type in lowercase to its count (one worker when not given)."""
    suffixes = ["-{0}-{1}".format(replica_type, count - 1)
                for replica_type, count in sorted((replicas or {"worker": 1}).items()) if count > 0]
    return kubeflow.name_problems(KIND, name, max(suffixes or ["-worker-0"], key=len), "the longest pod name")


def _option_problems(params, gpu_resource):
    problems = kubeflow.image_and_command_problems(params, "every replica", "the command every replica runs, as "
                                                   "a list, e.g. [python3, train.py]")
    return problems + pod_template.gpu_resource_problems(gpu_resource) + pod_template.choice_problems(params, _CHOICES)


def build_tfjob(params):
    """The TFJob body for the module's high-level arguments. Raises InvalidArgumentError listing every problem.

    `params` holds the module's options (missing ones count as not given).
    """
    problems = []
    name = params.get("name")
    gpu_resource = params.get("gpu_resource_name") or DEFAULT_GPU_RESOURCE
    workers, gpus = kubeflow.worker_counts(params, problems)
    parameter_servers = pod_template.int_option(params, "parameter_servers", 0, problems) or 0
    chief = bool(params.get("chief"))
    run_policy = kubeflow.run_policy(params, problems)
    problems.extend(name_problems(name, {"chief": int(chief), "worker": max(workers or 1, 1),
                                         "ps": max(parameter_servers, 0)}))
    problems.extend(_option_problems(params, gpu_resource))
    options = pod_template.pod_options(params, problems)
    worker_resources = options.resources
    ps_resources = pod_template.normalize_resources(params.get("ps_resources"), "ps_resources", problems)
    volumes = pod_template.extra_volumes(params.get("volumes"), problems)
    port = pod_template.port_option(params, "port", 1, problems) or DEFAULT_PORT
    if gpus:
        pod_template.set_extended_resource(worker_resources, gpu_resource, gpus, "gpus_per_worker", problems)
    if problems:
        raise InvalidArgumentError(problems, KIND)

    def replica(count, resources, placed):
        """A replica spec; `placed`: its pods go where node_selector and tolerations say."""
        container = pod_template.container(CONTAINER_NAME, params["image"], params["command"], options.env, resources,
                                           params.get("image_pull_policy"))
        # Every replica runs the program: each gets the volumes (a ConfigMap holding the program, datasets).
        return kubeflow.replica_spec(count, kubeflow.replica_pod(params, options, volumes, container,
                                                                 (PORT_NAME, port), placed))

    replica_specs = {"Worker": replica(workers, worker_resources, placed=True)}
    if parameter_servers:
        replica_specs["PS"] = replica(parameter_servers, ps_resources, placed=False)
    if chief:
        # The coordinator of ParameterServerStrategy holds no GPU, but runs where the workers may.
        replica_specs["Chief"] = replica(1, {}, placed=True)
    worker_pod = replica_specs["Worker"]["template"]["spec"]
    # Host paths and privilege are for the devices of the replicas that hold the GPUs.
    kubeflow.grant_training_devices(worker_pod, params, options)
    if params.get("spread_workers"):
        worker_pod["topologySpreadConstraints"] = [pod_template.one_per_node({KUBEFLOW_JOB_NAME_LABEL: name,
                                                                              KUBEFLOW_REPLICA_TYPE_LABEL: "worker"})]

    spec = {"tfReplicaSpecs": replica_specs}
    if params.get("success_policy"):
        spec["successPolicy"] = params["success_policy"]
    if run_policy:
        spec["runPolicy"] = run_policy
    return {"apiVersion": TFJOB.api_version, "kind": KIND, "metadata": pod_template.job_metadata(params, name),
            "spec": spec}


def _definition_replicas(body, problems):
    return kubeflow.definition_replicas(SPECS, KIND, body, problems)


def from_definition(definition, name=None, namespace=None):
    """Check a raw TFJob definition and fill in name and namespace. Raises InvalidArgumentError."""
    return kubeflow.from_definition(TFJOB, definition, name, namespace, _definition_replicas, name_problems)


# The module's state=present and state=absent: the TFJob body, and (namespace, name) of the job to delete.
desired_job, job_to_delete = kubeflow.job_functions(TFJOB, HIGH_LEVEL_OPTIONS, _OPTION_DEFAULTS, build_tfjob,
                                                    from_definition, name_problems)
