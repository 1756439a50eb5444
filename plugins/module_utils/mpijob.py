# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Kubeflow MPIJob (kubeflow.org/v2beta1) lifecycle: spec builder, status reader, fail-fast waits.

Plain Python, no Ansible: plugins/modules/mpijob.py is a thin adapter. The cluster is reached
through an object with the methods of `KubernetesMPIJobApi` (tests pass a fake one).

The flow is validate (local, every problem at once) -> build the MPIJob -> compare with the live
job -> create / replace / leave -> wait with a success predicate and a failure predicate. The
failure predicate ends the wait as soon as the job cannot succeed any more:

* the MPIJob has the condition Failed=True (launcher Job failed, a worker was evicted, deadline);
* a worker pod is in phase Failed: the MPI Operator never replaces a failed worker, so mpirun on
  the launcher has lost a rank and the job can only fail, after the launcher's retries;
* the MPI Operator rejected the job (a ValidationError event on a job with no condition yet): it
  will never act on it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import re
import time

from ansible_collections.gpuops.cluster.plugins.module_utils import k8s_wait

GROUP = "kubeflow.org"
VERSION = "v2beta1"
PLURAL = "mpijobs"
API_VERSION = GROUP + "/" + VERSION
KIND = "MPIJob"

# Labels the MPI Operator puts on the pods it makes (pkg/apis/kubeflow/v2beta1/constants.go).
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"

# The spec this module applied, as compact JSON: the next run compares against exactly what it
# asked for, not against the live spec, to which the API server adds the CRD's defaults.
APPLIED_SPEC_ANNOTATION = "gpuops.io/applied-spec"
APPLIED_SPEC_HASH_ANNOTATION = "gpuops.io/applied-spec-sha256"

# The ConfigMap key that holds a recorded launcher log (see launcher_log()).
SIMULATED_LOG_KEY = "launcher.log"

LAUNCHER_CREATION_POLICIES = ("AtStartup", "WaitForWorkersReady")
CLEAN_POD_POLICIES = ("None", "Running", "All")
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
TOLERATION_OPERATORS = ("Exists", "Equal")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")

HIGH_LEVEL_OPTIONS = (
    "image", "command", "worker_command", "workers", "slots_per_worker", "gpus_per_worker", "env",
    "resources", "launcher_resources", "host_network", "node_selector", "tolerations",
    "launcher_creation_policy", "clean_pod_policy", "ttl_seconds_after_finished",
    "active_deadline_seconds", "backoff_limit", "ssh_auth_mount_path", "mpi_implementation",
    "image_pull_policy", "labels", "annotations",
)

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"

# k8s.io/apimachinery/pkg/api/resource: a decimal number with an optional binary (Ki..Ei),
# decimal SI (n, u, m, k, M..E) or exponent suffix. Resource quantities may not be negative.
_QUANTITY_RE = re.compile(r"^(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
_DNS1035_LABEL_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_RESOURCE_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage")


class MPIJobError(Exception):
    """Base of the errors reported to the user; the message is meant for a person."""

    def __init__(self, message, **details):
        super(MPIJobError, self).__init__(message)
        self.details = details


class InvalidArgumentError(MPIJobError):
    """Bad input, found before any API call. `problems` lists every one, each naming its argument."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(InvalidArgumentError, self).__init__(
            "invalid MPIJob arguments ({0} problem(s)): {1}".format(len(self.problems), "; ".join(self.problems)),
            problems=self.problems)


class SpecConflictError(MPIJobError):
    """The job exists with another spec and force is off."""


class JobFailedError(MPIJobError):
    """The wait saw the job fail; `details` holds the whole result (reason, pods, events, log)."""


class WaitTimeoutError(MPIJobError):
    """The wait ran out of time; `details` holds what was last seen."""


class ApiError(MPIJobError):
    """An API call failed; the message says which call and what the server answered."""


# ---------------------------------------------------------------------------------------------
# Input validation


def quantity_text(value):
    """A resource quantity as the API wants it (a string), or None when it is not a valid one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value >= 0 else None
    if isinstance(value, float):
        if value < 0:
            return None
        value = repr(value)
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _QUANTITY_RE.match(value) else None


def resource_name_problem(name):
    """Why `name` cannot be a container resource name; None when it can."""
    if not isinstance(name, str) or not name:
        return "resource name must be a non-empty string, got {0!r}".format(name)
    if name in STANDARD_RESOURCES:
        return None
    if name.startswith("hugepages-"):
        if quantity_text(name[len("hugepages-"):]) is None:
            return ("hugepage resource {0!r} must be hugepages-<page size> with a quantity page size, "
                    "e.g. hugepages-2Mi or hugepages-1Gi".format(name))
        return None
    if "/" in name:
        prefix, _sep, local = name.partition("/")
        if _DNS1123_SUBDOMAIN_RE.match(prefix) and _RESOURCE_NAME_RE.match(local) and len(local) <= 63:
            return None
        return "extended resource name {0!r} must be <dns subdomain>/<name>, e.g. nvidia.com/gpu".format(name)
    return ("unknown resource name {0!r}: expected cpu, memory, ephemeral-storage, hugepages-<size> "
            "or a domain-qualified extended resource such as nvidia.com/gpu".format(name))


def _is_counted(name):
    """Extended resources and hugepages cannot be overcommitted: request must equal limit."""
    return name.startswith("hugepages-") or "/" in name


def normalize_resources(value, argument, problems):
    """Turn `resources`-style input into {"limits": {...}, "requests": {...}}, checking every entry.

    Accepts the Kubernetes form (a dict with `limits` and/or `requests`) or a flat dict of
    resource: quantity, which sets both requests and limits (what hugepages and GPUs need anyway).
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append("{0} must be a dict, got {1!r}".format(argument, value))
        return {}
    structured = bool(value) and set(value) <= {"limits", "requests"}
    sections = value if structured else {"limits": value}
    result = {}
    for section in ("limits", "requests"):
        entries = sections.get(section)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            problems.append("{0}.{1} must be a dict of resource: quantity, got {2!r}".format(argument, section, entries))
            continue
        clean = {}
        for name, quantity in entries.items():
            where = "{0}.{1}".format(argument, section) if structured else argument
            problem = resource_name_problem(name)
            if problem:
                problems.append("{0}: {1}".format(where, problem))
                continue
            text = quantity_text(quantity)
            if text is None:
                problems.append("{0}: {1!r} is not a valid quantity for {2} (expected a non-negative number with "
                                "an optional suffix such as m, Mi, Gi or G, e.g. 500m, 16Gi, 2)".format(
                                    where, quantity, name))
                continue
            clean[name] = text
        if clean:
            result[section] = clean
    if not structured and "limits" in result:
        result["requests"] = dict(result["limits"])
    limits, requests = result.get("limits", {}), result.get("requests", {})
    for name in sorted(set(limits) | set(requests)):
        if _is_counted(name) and name in limits and name in requests and limits[name] != requests[name]:
            problems.append("{0}: {1} cannot be overcommitted: requests ({2}) must equal limits ({3})".format(
                argument, name, requests[name], limits[name]))
    if any(name.startswith("hugepages-") for name in set(limits) | set(requests)):
        if not any(name in ("cpu", "memory") for name in set(limits) | set(requests)):
            problems.append("{0}: hugepages need a cpu or memory request as well (the API server "
                            "rejects a container with hugepages alone)".format(argument))
    return result


def _text(value):
    """Env and selector values are strings in the API; YAML hands over numbers and booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value


def normalize_env(env, problems):
    if env is None:
        return []
    if not isinstance(env, dict):
        problems.append("env must be a dict of NAME: value, got {0!r}".format(env))
        return []
    result = []
    for name in sorted(env):
        value = _text(env[name])
        if not isinstance(name, str) or not name or "=" in name:
            problems.append("env: variable name {0!r} must be a non-empty string without '='".format(name))
            continue
        if value is None:
            value = ""
        if not isinstance(value, str):
            problems.append("env: value of {0} must be a string, number or boolean, got {1!r}".format(name, value))
            continue
        result.append({"name": name, "value": value})
    return result


def normalize_tolerations(tolerations, problems):
    result = []
    for index, toleration in enumerate(tolerations or []):
        where = "tolerations[{0}]".format(index)
        if not isinstance(toleration, dict):
            problems.append("{0} must be a dict with key, operator, value, effect, got {1!r}".format(where, toleration))
            continue
        unknown = sorted(set(toleration) - {"key", "operator", "value", "effect", "tolerationSeconds",
                                            "toleration_seconds"})
        if unknown:
            problems.append("{0}: unknown field(s) {1}; expected key, operator, value, effect, "
                            "tolerationSeconds".format(where, ", ".join(unknown)))
        clean = {}
        operator = toleration.get("operator", "Equal")
        if operator not in TOLERATION_OPERATORS:
            problems.append("{0}: operator {1!r} must be Exists or Equal".format(where, operator))
        clean["operator"] = operator
        key = toleration.get("key")
        if key:
            clean["key"] = key
        elif operator != "Exists":
            problems.append("{0}: a toleration without a key must use operator Exists".format(where))
        value = _text(toleration.get("value"))
        if value not in (None, ""):
            if operator == "Exists":
                problems.append("{0}: operator Exists takes no value (got {1!r})".format(where, value))
            clean["value"] = value
        effect = toleration.get("effect")
        if effect:
            if effect not in TAINT_EFFECTS:
                problems.append("{0}: effect {1!r} must be one of {2}".format(where, effect, ", ".join(TAINT_EFFECTS)))
            clean["effect"] = effect
        seconds = toleration.get("tolerationSeconds", toleration.get("toleration_seconds"))
        if seconds is not None:
            if effect != "NoExecute":
                problems.append("{0}: tolerationSeconds applies only to effect NoExecute".format(where))
            if isinstance(seconds, bool) or not isinstance(seconds, int):
                problems.append("{0}: tolerationSeconds must be an integer, got {1!r}".format(where, seconds))
            clean["tolerationSeconds"] = seconds
        result.append(clean)
    return result


def name_problems(name, workers=1):
    """The MPI Operator names pods <name>-worker-<i> and a Service <name>: both must be DNS-1035 labels."""
    if not isinstance(name, str) or not name:
        return ["name is required (the MPIJob's metadata.name)"]
    longest = "{0}-worker-{1}".format(name, max(int(workers or 1), 1) - 1)
    if not _DNS1035_LABEL_RE.match(name):
        return ["name {0!r} must be a DNS-1035 label: lowercase letters, digits and '-', starting with a "
                "letter and ending with a letter or digit".format(name)]
    if len(longest) > 63:
        return ["name {0!r} is too long: the last worker's hostname {1!r} must be at most 63 characters".format(
            name, longest)]
    return []


def _positive_int(params, argument, minimum, problems):
    value = params.get(argument)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append("{0} must be an integer, got {1!r}".format(argument, value))
        return None
    if value < minimum:
        problems.append("{0} must be at least {1}, got {2}".format(argument, minimum, value))
    return value


# ---------------------------------------------------------------------------------------------
# Spec builder


def build_mpijob(params):
    """The MPIJob body for the module's high-level arguments. Raises InvalidArgumentError.

    `params` holds the module's options (missing ones count as not given).
    """
    problems = []
    name = params.get("name")
    namespace = params.get("namespace") or "default"
    image = params.get("image")
    command = params.get("command")
    worker_command = params.get("worker_command")
    gpu_resource = params.get("gpu_resource_name") or DEFAULT_GPU_RESOURCE

    workers = _positive_int(params, "workers", 1, problems)
    if workers is None and params.get("workers") is None:
        workers = 1
    gpus = _positive_int(params, "gpus_per_worker", 0, problems) or 0
    gpus = max(gpus, 0)
    slots = _positive_int(params, "slots_per_worker", 1, problems)
    if params.get("slots_per_worker") is None:
        # One MPI rank per GPU is what Horovod expects; CPU-only workers run one rank each.
        slots = gpus if gpus > 0 else 1
    ttl = _positive_int(params, "ttl_seconds_after_finished", 0, problems)
    deadline = _positive_int(params, "active_deadline_seconds", 1, problems)
    backoff = _positive_int(params, "backoff_limit", 0, problems)

    problems.extend(name_problems(name, workers if isinstance(workers, int) else 1))
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
    if resource_name_problem(gpu_resource) or "/" not in gpu_resource:
        problems.append("gpu_resource_name {0!r} must be a domain-qualified extended resource such as "
                        "nvidia.com/gpu".format(gpu_resource))

    choices = (("launcher_creation_policy", LAUNCHER_CREATION_POLICIES),
               ("clean_pod_policy", CLEAN_POD_POLICIES),
               ("mpi_implementation", MPI_IMPLEMENTATIONS),
               ("image_pull_policy", IMAGE_PULL_POLICIES))
    for argument, allowed in choices:
        if params.get(argument) is not None and params[argument] not in allowed:
            problems.append("{0} must be one of {1}, got {2!r}".format(argument, ", ".join(allowed), params[argument]))
    mount = params.get("ssh_auth_mount_path")
    if mount is not None and (not isinstance(mount, str) or not mount.startswith("/")):
        problems.append("ssh_auth_mount_path must be an absolute path, got {0!r}".format(mount))

    env = normalize_env(params.get("env"), problems)
    worker_resources = normalize_resources(params.get("resources"), "resources", problems)
    launcher_resources = normalize_resources(params.get("launcher_resources"), "launcher_resources", problems)
    tolerations = normalize_tolerations(params.get("tolerations"), problems)

    node_selector = params.get("node_selector") or {}
    if not isinstance(node_selector, dict):
        problems.append("node_selector must be a dict of label: value, got {0!r}".format(node_selector))
        node_selector = {}
    node_selector = dict((key, _text(value)) for key, value in node_selector.items())

    if gpus:
        limits = worker_resources.setdefault("limits", {})
        given = limits.get(gpu_resource)
        if given is not None and given != str(gpus):
            problems.append("resources sets {0}: {1} but gpus_per_worker is {2}; give the GPU count in one place".format(
                gpu_resource, given, gpus))
        limits[gpu_resource] = str(gpus)
        if "requests" in worker_resources:
            worker_resources["requests"][gpu_resource] = str(gpus)

    if problems:
        raise InvalidArgumentError(problems)

    def container(container_name, container_command, resources):
        spec = {"name": container_name, "image": image}
        if container_command:
            spec["command"] = list(container_command)
        if env:
            spec["env"] = copy.deepcopy(env)
        if resources:
            spec["resources"] = copy.deepcopy(resources)
        if params.get("image_pull_policy"):
            spec["imagePullPolicy"] = params["image_pull_policy"]
        return spec

    launcher_pod = {"containers": [container("launcher", command, launcher_resources)]}
    worker_pod = {"containers": [container("worker", worker_command, worker_resources)]}
    if params.get("host_network"):
        launcher_pod["hostNetwork"] = True
        worker_pod["hostNetwork"] = True
    # Placement applies to the workers, which hold the GPUs; the launcher only runs mpirun.
    if node_selector:
        worker_pod["nodeSelector"] = node_selector
    if tolerations:
        worker_pod["tolerations"] = tolerations

    run_policy = {}
    if params.get("clean_pod_policy") is not None:
        run_policy["cleanPodPolicy"] = params["clean_pod_policy"]
    if ttl is not None:
        run_policy["ttlSecondsAfterFinished"] = ttl
    if deadline is not None:
        run_policy["activeDeadlineSeconds"] = deadline
    if backoff is not None:
        run_policy["backoffLimit"] = backoff

    spec = {
        "slotsPerWorker": slots,
        "launcherCreationPolicy": params.get("launcher_creation_policy") or "WaitForWorkersReady",
        "mpiImplementation": params.get("mpi_implementation") or "OpenMPI",
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": launcher_pod}},
            "Worker": {"replicas": workers, "template": {"spec": worker_pod}},
        },
    }
    if run_policy:
        spec["runPolicy"] = run_policy
    if mount:
        spec["sshAuthMountPath"] = mount

    metadata = {"name": name, "namespace": namespace}
    if params.get("labels"):
        metadata["labels"] = dict((key, _text(value)) for key, value in params["labels"].items())
    if params.get("annotations"):
        metadata["annotations"] = dict((key, _text(value)) for key, value in params["annotations"].items())
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}


def from_definition(definition, name=None, namespace=None):
    """Check a raw MPIJob definition and fill in name and namespace. Raises InvalidArgumentError."""
    if not isinstance(definition, dict):
        raise InvalidArgumentError(["definition must be a dict (an MPIJob manifest), got {0!r}".format(
            type(definition).__name__)])
    problems = []
    if definition.get("apiVersion") != API_VERSION:
        problems.append("definition.apiVersion must be {0}, got {1!r}".format(API_VERSION, definition.get("apiVersion")))
    if definition.get("kind") != KIND:
        problems.append("definition.kind must be {0}, got {1!r}".format(KIND, definition.get("kind")))
    body = copy.deepcopy(definition)
    metadata = body.setdefault("metadata", {}) or {}
    body["metadata"] = metadata
    if name:
        if metadata.get("name") not in (None, name):
            problems.append("name {0!r} differs from definition.metadata.name {1!r}".format(name, metadata["name"]))
        metadata["name"] = name
    if namespace:
        if metadata.get("namespace") not in (None, namespace):
            problems.append("namespace {0!r} differs from definition.metadata.namespace {1!r}".format(
                namespace, metadata["namespace"]))
        metadata["namespace"] = namespace
    metadata.setdefault("namespace", "default")
    spec = body.get("spec")
    replica_specs = spec.get("mpiReplicaSpecs") if isinstance(spec, dict) else None
    if not isinstance(replica_specs, dict) or not isinstance(replica_specs.get("Launcher"), dict):
        problems.append("definition.spec.mpiReplicaSpecs.Launcher is required")
        workers = 1
    else:
        worker = replica_specs.get("Worker") or {}
        workers = worker.get("replicas", 1) if isinstance(worker.get("replicas", 1), int) else 1
        if "Worker" in replica_specs and isinstance(worker.get("replicas"), int) and worker["replicas"] < 1:
            problems.append("definition.spec.mpiReplicaSpecs.Worker.replicas must be at least 1, got {0}".format(
                worker["replicas"]))
    problems.extend("definition.metadata." + problem for problem in name_problems(metadata.get("name"), workers))
    if problems:
        raise InvalidArgumentError(problems)
    return body


def high_level_options_given(params):
    return sorted(option for option in HIGH_LEVEL_OPTIONS if params.get(option) not in (None, [], {}))


def desired_job(params):
    """The MPIJob body from either `definition` or the high-level options; never both."""
    if params.get("definition") is not None:
        given = high_level_options_given(params)
        if given:
            raise InvalidArgumentError(["definition is mutually exclusive with {0}: give a raw MPIJob or "
                                        "the high-level options, not both".format(", ".join(given))])
        return from_definition(params["definition"], params.get("name"), params.get("namespace"))
    return build_mpijob(params)


# ---------------------------------------------------------------------------------------------
# Comparing with the live job


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def spec_hash(spec):
    return hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()


def with_applied_spec(body):
    """The body to send: the desired one, annotated with the spec it carries."""
    sent = copy.deepcopy(body)
    annotations = sent["metadata"].setdefault("annotations", {})
    annotations[APPLIED_SPEC_ANNOTATION] = canonical_json(body["spec"])
    annotations[APPLIED_SPEC_HASH_ANNOTATION] = spec_hash(body["spec"])
    return sent


def _differences(desired, actual, path, out, subset):
    if isinstance(desired, dict) and isinstance(actual, dict):
        keys = set(desired) if subset else set(desired) | set(actual)
        for key in sorted(keys):
            _differences(desired.get(key), actual.get(key), "{0}.{1}".format(path, key), out, subset)
    elif isinstance(desired, list) and isinstance(actual, list) and len(desired) == len(actual):
        for index, (want, have) in enumerate(zip(desired, actual)):
            _differences(want, have, "{0}[{1}]".format(path, index), out, subset)
    elif desired != actual:
        out.append("{0}: {1} -> {2}".format(path, canonical_json(actual), canonical_json(desired)))


def spec_differences(body, live):
    """What differs between the desired body's spec and the live job's, as 'path: live -> desired'.

    A job this module created carries the spec it applied, and is compared with that exactly
    (a removed field counts). Any other job is compared on the fields the desired spec sets,
    since the API server fills in the CRD's defaults.
    """
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    recorded = annotations.get(APPLIED_SPEC_ANNOTATION)
    out = []
    if recorded is not None:
        try:
            applied = json.loads(recorded)
        except ValueError:
            applied = None
        if applied is not None:
            _differences(body["spec"], applied, "spec", out, subset=False)
            return out
    _differences(body["spec"], live.get("spec") or {}, "spec", out, subset=True)
    return out


# ---------------------------------------------------------------------------------------------
# Status reader


def _conditions(job):
    return list(((job or {}).get("status") or {}).get("conditions") or [])


def _true_condition(job, condition_type):
    for condition in _conditions(job):
        if condition.get("type") == condition_type and condition.get("status") == "True":
            return condition
    return None


PHASE_ORDER = ("Failed", "Succeeded", "Suspended", "Restarting", "Running", "Created")


def job_status(job):
    """A summary of an MPIJob's status: phase (the most decisive true condition, or Pending when
    there is none), its reason and message, the conditions and the replica statuses."""
    phase, reason, message = "Pending", None, None
    for condition_type in PHASE_ORDER:
        condition = _true_condition(job, condition_type)
        if condition:
            phase, reason, message = condition_type, condition.get("reason"), condition.get("message")
            break
    status = (job or {}).get("status") or {}
    return {
        "phase": phase,
        "reason": reason,
        "message": message,
        "conditions": _conditions(job),
        "replica_statuses": status.get("replicaStatuses") or {},
        "start_time": status.get("startTime"),
        "completion_time": status.get("completionTime"),
    }


def pod_role(pod):
    return ((pod.get("metadata") or {}).get("labels") or {}).get(JOB_ROLE_LABEL, "")


def pod_summary(pod):
    """Name, role, phase, node and the terminated containers' reasons of one pod."""
    metadata = pod.get("metadata") or {}
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    containers = []
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated")
        if terminated:
            containers.append({"name": container.get("name"), "exit_code": terminated.get("exitCode"),
                               "reason": terminated.get("reason"), "message": terminated.get("message"),
                               "finished_at": terminated.get("finishedAt")})
    summary = {"name": metadata.get("name"), "role": pod_role(pod), "phase": status.get("phase"),
               "node": spec.get("nodeName"), "reason": status.get("reason"), "message": status.get("message")}
    if containers:
        summary["terminated_containers"] = containers
    for condition in status.get("conditions") or []:
        # The scheduler's own words on why the pod has no node, e.g. "Insufficient nvidia.com/gpu".
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            summary["unschedulable"] = condition.get("message") or condition.get("reason")
    return summary


class Observation(object):
    """One look at a job: the MPIJob (None once gone), its pods, and, while it has no condition yet,
    the MPI Operator's warning events about it."""

    __slots__ = ("job", "pods", "warnings", "at")

    def __init__(self, job, pods=(), warnings=(), at=None):
        self.job = job
        self.pods = list(pods)
        self.warnings = list(warnings)
        self.at = at

    @property
    def status(self):
        return job_status(self.job)

    def failed_workers(self):
        return [pod for pod in self.pods if pod_role(pod) == "worker" and (pod.get("status") or {}).get("phase") == "Failed"]


def job_failure(observation):
    """The failure predicate: why the job cannot succeed any more, or None while it still can."""
    if observation.job is None:
        return "the MPIJob was deleted while waiting for it"
    status = observation.status
    if status["phase"] == "Failed":
        return "the MPIJob failed: {0}: {1}".format(status["reason"] or "Failed", status["message"] or "")
    failed = observation.failed_workers()
    if failed and status["phase"] != "Succeeded":
        parts = []
        for pod in failed:
            summary = pod_summary(pod)
            detail = ", ".join("container {0} exit code {1} ({2})".format(c["name"], c["exit_code"], c["reason"])
                               for c in summary.get("terminated_containers", []))
            parts.append("{0}{1}".format(summary["name"], ": " + detail if detail else ""))
        return ("worker pod(s) failed: {0}; the MPI Operator does not replace a failed worker, so mpirun has "
                "lost a rank and the job cannot succeed".format("; ".join(parts)))
    if not status["conditions"]:
        for event in observation.warnings:
            if event.get("reason") == "ValidationError":
                return "the MPI Operator rejected the MPIJob: {0}".format(event.get("message"))
    return None


def _succeeded(observation):
    return observation.job is not None and observation.status["phase"] == "Succeeded"


def _running(observation):
    return observation.job is not None and observation.status["phase"] in ("Running", "Succeeded")


# What `wait_for` may name: the success predicate of each; all share the failure predicate.
WAIT_PREDICATES = {
    "Succeeded": _succeeded,
    "Running": _running,
}


# ---------------------------------------------------------------------------------------------
# Logs and events


def _created(pod):
    return (pod.get("metadata") or {}).get("creationTimestamp") or ""


def _started(pod):
    status = pod.get("status") or {}
    if status.get("phase") in ("Running", "Succeeded", "Failed"):
        return True
    return any((c.get("state") or {}).get("running") or (c.get("state") or {}).get("terminated")
               for c in status.get("containerStatuses") or [])


def launcher_log(api, namespace, pods, tail_lines, simulated_log_configmap=None):
    """The launcher's log: from the newest launcher pod through the API, else (only where asked) a
    recorded log from a ConfigMap, clearly marked as such.

    Returns a dict with `text` (or None), `source` (pod/<name>, simulated:configmap/<name>, or
    none), `pod` and `error` (why the pod's own log could not be read).
    """
    launchers = sorted((pod for pod in pods if pod_role(pod) == "launcher"), key=_created)
    result = {"text": None, "source": "none", "pod": None, "error": None}
    if not launchers:
        result["error"] = "no launcher pod exists (yet)"
        return result
    pod = launchers[-1]
    name = pod["metadata"]["name"]
    result["pod"] = name
    if not _started(pod):
        result["error"] = "launcher pod {0} has not started (phase {1})".format(name, (pod.get("status") or {}).get("phase"))
        return result
    try:
        result["text"] = api.read_pod_log(namespace, name, tail_lines)
        result["source"] = "pod/" + name
        return result
    except ApiError as error:
        result["error"] = "the API could not serve the log of launcher pod {0}: {1}".format(name, error)
    if simulated_log_configmap:
        data = api.read_config_map(namespace, simulated_log_configmap)
        recorded = (data or {}).get(SIMULATED_LOG_KEY)
        if recorded is None:
            result["error"] += "; ConfigMap {0} has no key {1}".format(simulated_log_configmap, SIMULATED_LOG_KEY)
            return result
        lines = recorded.splitlines()
        if tail_lines:
            lines = lines[-tail_lines:]
        result["text"] = "\n".join(lines) + ("\n" if lines else "")
        result["source"] = "simulated:configmap/" + simulated_log_configmap
    return result


def event_summary(event):
    return {"type": event.get("type"), "reason": event.get("reason"), "message": event.get("message"),
            "count": event.get("count"),
            "last_seen": event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp")}


def failure_details(api, namespace, name, observation):
    """The failing pods (with their events) and the MPIJob's own events, for the failure report."""
    failing = [pod for pod in observation.pods if (pod.get("status") or {}).get("phase") == "Failed"]
    pods = []
    for pod in failing:
        summary = pod_summary(pod)
        summary["events"] = [event_summary(e) for e in api.list_events(namespace, "Pod", summary["name"])]
        pods.append(summary)
    job_events = [event_summary(e) for e in api.list_events(namespace, KIND, name)]
    return {"failed_pods": pods, "events": job_events}


# ---------------------------------------------------------------------------------------------
# Lifecycle


def observe(api, namespace, name, now=time.time):
    job = api.get(namespace, name)
    if job is None:
        return Observation(None, at=now())
    pods = api.list_pods(namespace, name)
    warnings = []
    if not _conditions(job):
        warnings = [e for e in api.list_events(namespace, KIND, name) if e.get("type") == "Warning"]
    return Observation(job, pods, warnings, at=now())


def _wait_gone(api, namespace, name, timeout, interval, ticks=None):
    return k8s_wait.wait_for(lambda: api.get(namespace, name), lambda job: job is None,
                             timeout=timeout, interval=interval, ticks=ticks)


def _status_fields(observation):
    status = observation.status
    return {"phase": status["phase"], "conditions": status["conditions"],
            "replica_statuses": status["replica_statuses"], "start_time": status["start_time"],
            "completion_time": status["completion_time"],
            "pods": [pod_summary(pod) for pod in observation.pods]}


def _log_fields(log):
    return {"launcher_log": log["text"] or "", "launcher_log_source": log["source"],
            "launcher_log_pod": log["pod"], "launcher_log_error": log["error"]}


class Settings(object):
    """The module's options that steer the lifecycle (anything missing takes its default)."""

    def __init__(self, check_mode=False, force=False, wait=False, wait_for="Succeeded", wait_timeout=600,
                 wait_sleep=1.0, log_lines=1000, simulated_log_configmap=None, ticks_factory=None, now=time.time):
        self.check_mode = check_mode
        self.force = force
        self.wait = wait
        self.wait_for = wait_for
        self.wait_timeout = wait_timeout
        self.wait_sleep = wait_sleep
        self.log_lines = log_lines
        self.simulated_log_configmap = simulated_log_configmap
        # Tests hand in a fake clock: a callable returning the ticks of one wait.
        self.ticks_factory = ticks_factory
        self.now = now

    def ticks(self):
        return self.ticks_factory() if self.ticks_factory else None


def ensure_present(api, body, settings):
    """Create the job (or replace it under force), then wait when asked. Returns the result dict;
    raises SpecConflictError, JobFailedError, WaitTimeoutError or ApiError."""
    namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
    live = api.get(namespace, name)
    terminating = live is not None and (live.get("metadata") or {}).get("deletionTimestamp")
    differences = spec_differences(body, live) if live is not None and not terminating else []
    if live is None or terminating:
        method = "created"
    elif differences:
        if not settings.force:
            raise SpecConflictError(
                "MPIJob {0}/{1} exists with a different spec ({2}). MPIJob specs are mostly immutable: set "
                "force=true to delete and recreate it, or use another name.".format(
                    namespace, name, "; ".join(differences[:10])),
                differences=differences)
        method = "replaced"
    else:
        method = "unchanged"

    result = {"changed": method != "unchanged", "method": method, "spec": body["spec"], "differences": differences,
              "diff": {"before": {"spec": live.get("spec")} if live is not None and not terminating else {},
                       "after": {"spec": body["spec"]}}}
    if settings.check_mode:
        result["mpijob"] = live if method == "unchanged" else body
        if method == "unchanged":
            result.update(_status_fields(Observation(live)))
        return result

    if method in ("replaced", "created") and live is not None:
        if method == "replaced":
            api.delete(namespace, name)
        gone = _wait_gone(api, namespace, name, settings.wait_timeout, settings.wait_sleep, settings.ticks())
        if not gone.succeeded:
            raise WaitTimeoutError("MPIJob {0}/{1} was still being deleted after {2} s; it cannot be created "
                                   "again until it is gone".format(namespace, name, settings.wait_timeout), **result)
    if method != "unchanged":
        live = api.create(namespace, with_applied_spec(body))

    if not settings.wait:
        result["mpijob"] = live
        result.update(_status_fields(Observation(live)))
        return result
    return _wait_and_report(api, namespace, name, settings, result)


def _wait_and_report(api, namespace, name, settings, result):
    predicate = WAIT_PREDICATES[settings.wait_for]
    outcome = k8s_wait.wait_for(lambda: observe(api, namespace, name, settings.now), predicate, job_failure,
                                timeout=settings.wait_timeout, interval=settings.wait_sleep, ticks=settings.ticks())
    observation = outcome.observation
    result["mpijob"] = observation.job
    result["elapsed"] = round(outcome.elapsed, 3)
    result.update(_status_fields(observation))
    log = launcher_log(api, namespace, observation.pods, settings.log_lines, settings.simulated_log_configmap)
    result.update(_log_fields(log))
    if outcome.outcome == k8s_wait.FAILED:
        result["reason"] = outcome.reason
        result["detected_at"] = observation.at
        result.update(failure_details(api, namespace, name, observation))
        raise JobFailedError("MPIJob {0}/{1} FAILED after {2:.1f} s: {3}".format(
            namespace, name, outcome.elapsed, outcome.reason), **result)
    if outcome.outcome == k8s_wait.TIMED_OUT:
        phases = ", ".join("{0}={1}{2}".format(p["name"], p["phase"],
                                               " ({0})".format(p["unschedulable"]) if p.get("unschedulable") else "")
                           for p in result["pods"]) or "no pods"
        raise WaitTimeoutError("timed out after {0} s waiting for MPIJob {1}/{2} to be {3}; it is {4} "
                               "(pods: {5})".format(settings.wait_timeout, namespace, name, settings.wait_for,
                                                    result["phase"], phases), **result)
    return result


def ensure_absent(api, namespace, name, settings):
    """Delete the job with foreground propagation (its pods go first); wait until it is gone when asked."""
    live = api.get(namespace, name)
    result = {"changed": live is not None, "method": "deleted" if live is not None else "absent",
              "diff": {"before": {"spec": live.get("spec")} if live is not None else {}, "after": {}}}
    if live is None or settings.check_mode:
        return result
    if not (live.get("metadata") or {}).get("deletionTimestamp"):
        api.delete(namespace, name)
    if settings.wait:
        gone = _wait_gone(api, namespace, name, settings.wait_timeout, settings.wait_sleep, settings.ticks())
        result["elapsed"] = round(gone.elapsed, 3)
        if not gone.succeeded:
            raise WaitTimeoutError("MPIJob {0}/{1} was not gone {2} s after its deletion (foreground: its pods "
                                   "are deleted first)".format(namespace, name, settings.wait_timeout), **result)
    return result


# ---------------------------------------------------------------------------------------------
# The cluster, through the kubernetes client


def _api_error(what, error):
    status = getattr(error, "status", None)
    body = getattr(error, "body", None)
    message = None
    if body:
        try:
            message = json.loads(body).get("message")
        except (ValueError, AttributeError):
            message = str(body)[:500]
    if status:
        detail = ": " + message if message else ""
        return ApiError("{0}: HTTP {1} {2}{3}".format(what, status, getattr(error, "reason", "") or "", detail),
                        status=status)
    return ApiError("{0}: {1}".format(what, error))


class KubernetesMPIJobApi(object):
    """The calls the lifecycle needs, over a kubernetes.client.ApiClient. Objects are plain dicts."""

    def __init__(self, api_client, request_timeout=60):
        from kubernetes import client  # imported here: module_utils must load without it for sanity tests

        self._api_client = api_client
        self._custom = client.CustomObjectsApi(api_client)
        self._core = client.CoreV1Api(api_client)
        self._delete_options = client.V1DeleteOptions(propagation_policy="Foreground")
        self._timeout = request_timeout

    def _plain(self, obj):
        return self._api_client.sanitize_for_serialization(obj)

    def get(self, namespace, name):
        try:
            return self._custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name,
                                                             _request_timeout=self._timeout)
        except Exception as error:  # ApiException, or a connection error from urllib3
            if getattr(error, "status", None) == 404:
                return None
            raise _api_error("reading MPIJob {0}/{1}".format(namespace, name), error)

    def create(self, namespace, body):
        try:
            return self._custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body,
                                                                _request_timeout=self._timeout)
        except Exception as error:
            raise _api_error("creating MPIJob {0}/{1}".format(namespace, body["metadata"]["name"]), error)

    def delete(self, namespace, name):
        try:
            self._custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name,
                                                         body=self._delete_options, _request_timeout=self._timeout)
        except Exception as error:
            if getattr(error, "status", None) == 404:
                return
            raise _api_error("deleting MPIJob {0}/{1}".format(namespace, name), error)

    def list_pods(self, namespace, job_name):
        try:
            pods = self._core.list_namespaced_pod(namespace, label_selector="{0}={1}".format(JOB_NAME_LABEL, job_name),
                                                  _request_timeout=self._timeout)
        except Exception as error:
            raise _api_error("listing the pods of MPIJob {0}/{1}".format(namespace, job_name), error)
        return [self._plain(pod) for pod in pods.items]

    def list_events(self, namespace, kind, name):
        selector = "involvedObject.kind={0},involvedObject.name={1}".format(kind, name)
        try:
            events = self._core.list_namespaced_event(namespace, field_selector=selector, _request_timeout=self._timeout)
        except Exception as error:
            raise _api_error("listing the events of {0} {1}/{2}".format(kind, namespace, name), error)
        return sorted((self._plain(event) for event in events.items),
                      key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")

    def read_pod_log(self, namespace, name, tail_lines):
        kwargs = {"_request_timeout": self._timeout}
        if tail_lines:
            kwargs["tail_lines"] = tail_lines
        try:
            return self._core.read_namespaced_pod_log(name, namespace, **kwargs)
        except Exception as error:
            raise _api_error("reading the log of pod {0}/{1}".format(namespace, name), error)

    def read_config_map(self, namespace, name):
        try:
            return self._core.read_namespaced_config_map(name, namespace, _request_timeout=self._timeout).data or {}
        except Exception as error:
            if getattr(error, "status", None) == 404:
                return None
            raise _api_error("reading ConfigMap {0}/{1}".format(namespace, name), error)
