# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the job kinds of the Kubeflow operators (MPIJob, TFJob, PyTorchJob) share: a name that starts the name of
every pod and Service of the job, the run policy, a job given either by the high-level options or as a raw
definition, never both, and, for the Training Operator's kinds, their replica specs (the pod of a replica, a failed
replica that nothing restarts, the container the operator looks for)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs import pod_template
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import failed_pods, failed_pods_text
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import is_dns1035_label

CLEAN_POD_POLICIES = ("None", "Running", "All")
# A pod's name is its hostname, and the operators give each pod a Service of that name: a DNS-1035 label.
MAX_POD_NAME_LENGTH = 63


def name_problems(kind_name, name, longest_suffix, what):
    """Why `name` cannot name a job of `kind_name` whose longest pod name is `name` + `longest_suffix`
    (e.g. -worker-9), called `what` in the problem."""
    if not isinstance(name, str) or not name:
        return ["name is required (the {0}'s metadata.name)".format(kind_name)]
    if not is_dns1035_label(name):
        return ["name {0!r} must be a DNS-1035 label: lowercase letters, digits and '-', starting with a "
                "letter and ending with a letter or digit".format(name)]
    longest = name + longest_suffix
    if len(longest) > MAX_POD_NAME_LENGTH:
        return ["name {0!r} is too long: {1} {2!r} must be at most {3} characters".format(
            name, what, longest, MAX_POD_NAME_LENGTH)]
    return []


def run_policy(params, problems):
    """The job's spec.runPolicy from the options clean_pod_policy, ttl_seconds_after_finished,
    active_deadline_seconds and backoff_limit ({} when none is given)."""
    policy = {}
    if params.get("clean_pod_policy") is not None:
        policy["cleanPodPolicy"] = params["clean_pod_policy"]
    policy.update(pod_template.int_fields(params, (("ttl_seconds_after_finished", "ttlSecondsAfterFinished", 0),
                                                   ("active_deadline_seconds", "activeDeadlineSeconds", 1),
                                                   ("backoff_limit", "backoffLimit", 0)), problems))
    return policy


def worker_counts(params, problems):
    """The options workers (at least 1; 1 when not given) and gpus_per_worker (at least 0; 0 when not given)."""
    workers = pod_template.int_option(params, "workers", 1, problems)
    if workers is None and params.get("workers") is None:
        workers = 1
    gpus = max(pod_template.int_option(params, "gpus_per_worker", 0, problems) or 0, 0)
    return workers, gpus


def image_and_command_problems(params, image_of, command_hint):
    """Why the options image (of `image_of`) and command (`command_hint` says what it is) cannot be used."""
    problems = []
    image, command = params.get("image"), params.get("command")
    if not isinstance(image, str) or not image.strip():
        problems.append("image is required with state=present (the container image of {0}), unless definition "
                        "is given".format(image_of))
    if not command:
        problems.append("command is required with state=present: {0}".format(command_hint))
    elif not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        problems.append("command must be a list of strings, got {0!r}".format(command))
    return problems


def _definition_body(kind, definition, name, namespace, problems):
    """A copy of a raw `definition` with `name` and `namespace` filled in (namespace default when neither
    says), its apiVersion, kind and metadata checked into `problems`."""
    if not isinstance(definition, dict):
        raise InvalidArgumentError(["definition must be a dict (the whole {0} manifest), got {1!r}".format(
            kind.kind, type(definition).__name__)], kind.kind)
    if definition.get("apiVersion") != kind.api_version:
        problems.append("definition.apiVersion must be {0}, got {1!r}".format(kind.api_version,
                                                                              definition.get("apiVersion")))
    if definition.get("kind") != kind.kind:
        problems.append("definition.kind must be {0}, got {1!r}".format(kind.kind, definition.get("kind")))
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
    return body


def from_definition(kind, definition, name, namespace, replicas_of, name_problems):
    """A raw `definition` of `kind` checked, with name and namespace filled in. replicas_of(body, problems)
    checks its replica specs and says how many of each there are, as name_problems(name, replicas) takes them.
    Raises InvalidArgumentError."""
    problems = []
    body = _definition_body(kind, definition, name, namespace, problems)
    replicas = replicas_of(body, problems)
    problems.extend("definition.metadata." + problem for problem in name_problems(body["metadata"].get("name"), replicas))
    if problems:
        raise InvalidArgumentError(problems, kind.kind)
    return body


def options_given(params, options, defaults):
    """The `options` given in `params`, sorted. One at the value its module's argument spec fills in
    (`defaults`, e.g. privileged=false) counts as not given."""
    return sorted(option for option in options
                  if params.get(option) not in (None, "", [], {}) and params.get(option) is not defaults.get(option))


def job_functions(kind, options, defaults, build, check_definition, name_problems):
    """desired_job(params) and job_to_delete(params) of a Kubeflow kind, as module_flow.run_job_module takes them.

    desired_job builds the body from either `definition` (check_definition(definition, name, namespace)) or
    the high-level `options` (build(params)), never both; job_to_delete gives the (namespace, name) of the job
    from the options or the definition's metadata, name_problems(name) saying why a name cannot be the job's.
    Both raise InvalidArgumentError.
    """
    def desired_job(params):
        if params.get("definition") is not None:
            given = options_given(params, options, defaults)
            if given:
                raise InvalidArgumentError(["definition is mutually exclusive with {0}: give a raw {1} or the "
                                            "high-level options, not both".format(", ".join(given), kind.kind)],
                                           kind.kind)
            return check_definition(params["definition"], params.get("name"), params.get("namespace"))
        return build(params)

    def job_to_delete(params):
        definition_meta = (params.get("definition") or {}).get("metadata") or {}
        name = params.get("name") or definition_meta.get("name")
        namespace = params.get("namespace") or definition_meta.get("namespace") or "default"
        problems = name_problems(name)
        if problems:
            raise InvalidArgumentError(problems, kind.kind)
        return namespace, name

    return desired_job, job_to_delete


# --- The Training Operator's kinds (TFJob, PyTorchJob): replica specs ------------------------------------------

# A failed replica is never restarted: it stays, with its log, and the operator fails the job at once.
NEVER_RESTARTED = "Never"


class ReplicaSpecs(object):
    """How a Training Operator kind holds its replicas: the spec field (tfReplicaSpecs, pytorchReplicaSpecs), the
    container the operator looks for (and puts its environment in), the container port it names, and the spec field
    that lets the job outlive a failed worker (enableDynamicWorker, elasticPolicy)."""

    def __init__(self, field, container_name, port_name, tolerant_field):
        self.field, self.container_name = field, container_name
        self.port_name, self.tolerant_field = port_name, tolerant_field

    def of(self, job):
        return ((job or {}).get("spec") or {}).get(self.field) or {}


def replica_pod(params, options, volumes, container, port, placed):
    """The pod of one replica around `container`, listening on `port` (the port the operator names): the host's
    network when asked, the placement (node_selector, tolerations) when `placed`, the service account, the image pull
    secrets and `volumes` (a ConfigMap holding the program, datasets). `options` is pod_template.pod_options'."""
    container["ports"] = [{"name": port[0], "containerPort": port[1]}]
    pod = {"containers": [container]}
    if params.get("host_network"):
        # Each replica binds the port on its node; the cluster's DNS still resolves the Services the operator
        # names for the replicas.
        pod["hostNetwork"] = True
        pod["dnsPolicy"] = "ClusterFirstWithHostNet"
    if placed and options.node_selector:
        pod["nodeSelector"] = dict(options.node_selector)
    if placed and options.tolerations:
        pod["tolerations"] = copy.deepcopy(options.tolerations)
    if options.service_account:
        pod["serviceAccountName"] = options.service_account
    pod_template.pull_with(pod, options.image_pull_secrets)
    pod_template.mount(pod, volumes)
    return pod


def replica_spec(count, pod):
    return {"replicas": count, "restartPolicy": NEVER_RESTARTED, "template": {"spec": pod}}


def grant_training_devices(pod, params, options):
    """What the replicas that hold the GPUs get: /dev/shm, host paths and device access (privilege or capabilities)."""
    if options.shm:
        pod_template.mount(pod, [options.shm])
    pod_template.mount(pod, options.host_paths)
    pod_template.grant_device_access(pod, params.get("privileged"), options.capabilities)


def never_restarted(specs, job):
    """The replica types (lowercase, as the pods' label has them) whose failed pod fails the job: those with
    restartPolicy Never, the operator's default, except workers the job may lose (specs.tolerant_field set)."""
    spec = (job or {}).get("spec") or {}
    types = set()
    for replica_type, replica in specs.of(job).items():
        if (replica or {}).get("restartPolicy") not in (None, NEVER_RESTARTED):
            continue
        if replica_type.lower() == "worker" and spec.get(specs.tolerant_field):
            continue
        types.add(replica_type.lower())
    return types


def failed_replicas(kind, specs, observation):
    """Why the job cannot succeed once a replica that is never restarted has failed, or None."""
    failed = [pod for role in sorted(never_restarted(specs, observation.job))
              for pod in failed_pods(kind, observation, role)]
    if not failed:
        return None
    roles = sorted(set(kind.pod_role(pod) for pod in failed))
    return ("{0} pod(s) failed: {1}; their replicas have restartPolicy Never, so the Training Operator does not "
            "restart them and the {2} cannot succeed".format(" and ".join(roles), failed_pods_text(failed, kind.role_label),
                                                             kind.kind))


def _has_container(replica, name):
    template = replica.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    return isinstance(containers, list) and any(isinstance(container, dict) and container.get("name") == name
                                                for container in containers)


def definition_replicas(specs, kind_name, body, problems):
    """{replica type in lowercase: count} of a raw definition's replica specs, checking each has the container the
    operator needs."""
    spec = body.get("spec")
    replica_specs = spec.get(specs.field) if isinstance(spec, dict) else None
    if not isinstance(replica_specs, dict) or not replica_specs:
        problems.append("definition.spec.{0} is required".format(specs.field))
        return {}
    counts = {}
    for replica_type in sorted(replica_specs):
        replica, where = replica_specs[replica_type], "definition.spec.{0}.{1}".format(specs.field, replica_type)
        if not isinstance(replica, dict):
            problems.append("{0} must be a dict (a replica spec), got {1!r}".format(where, replica))
            continue
        count = replica.get("replicas", 1)
        if isinstance(count, int) and not isinstance(count, bool):
            counts[replica_type.lower()] = count
        if not _has_container(replica, specs.container_name):
            problems.append("{0} has no container named {1}: the Training Operator refuses the {2}".format(
                where, specs.container_name, kind_name))
    return counts
