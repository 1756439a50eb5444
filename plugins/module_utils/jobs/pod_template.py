# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Pod template pieces every job kind builds the same way: containers, resources, env, tolerations,
node selectors, volumes (/dev/shm, host paths), the service account, image pull secrets and integer options,
each checked with every problem collected (named by its argument) rather than stopping at the first."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
from collections import namedtuple

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import api_text
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import TAINT_EFFECTS, is_dns1123_subdomain
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.quantities import (
    is_counted,
    is_hugepages,
    quantity_text,
    resource_name_problem,
)

TOLERATION_OPERATORS = ("Exists", "Equal")
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TOLERATION_FIELDS = {"key", "operator", "value", "effect", "tolerationSeconds", "toleration_seconds"}
SHM_PATH = "/dev/shm"

# The pod options every job kind takes, checked: see pod_options.
PodOptions = namedtuple("PodOptions", ("env", "resources", "tolerations", "node_selector", "shm", "host_paths",
                                       "service_account", "image_pull_secrets", "capabilities"))
# A Linux capability as the container runtimes take it in securityContext.capabilities: without CAP_.
_CAPABILITY_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def int_option(params, argument, minimum, problems):
    """The integer option `argument` of `params` (None when not given), checked against `minimum`."""
    value = params.get(argument)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append("{0} must be an integer, got {1!r}".format(argument, value))
        return None
    if value < minimum:
        problems.append("{0} must be at least {1}, got {2}".format(argument, minimum, value))
    return value


def int_fields(params, fields, problems):
    """{field: value} for each (argument, field, minimum) of `fields` given in `params`, each checked by int_option:
    the integer settings of a job's spec (backoffLimit, activeDeadlineSeconds...)."""
    found = {}
    for argument, field, minimum in fields:
        value = int_option(params, argument, minimum, problems)
        if value is not None:
            found[field] = value
    return found


def port_option(params, argument, minimum, problems):
    """The TCP port option `argument` (None when not given): an integer from `minimum` to 65535."""
    port = int_option(params, argument, minimum, problems)
    if port is not None and port > 65535:
        problems.append("{0} must be a TCP port (at most 65535), got {1}".format(argument, port))
    return port


def choice_problems(params, choices):
    """Why the options of `choices`, pairs of (argument, allowed values), given in `params` cannot be used."""
    return ["{0} must be one of {1}, got {2!r}".format(argument, ", ".join(allowed), params[argument])
            for argument, allowed in choices if params.get(argument) is not None and params[argument] not in allowed]


def one_per_node(match_labels):
    """A topology spread constraint: at most one more of the pods `match_labels` selects on any node than on
    another, and none placed against that. With as many workers as nodes that is one worker on each node, so
    that every allreduce crosses the network, whatever the workers request."""
    return {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": dict(match_labels)}}


def tcp_readiness_probe(port):
    """A container is ready once it accepts connections on `port` (an sshd that mpirun will reach), tried
    every second so that whatever waits for readiness starts soon after."""
    return {"tcpSocket": {"port": port}, "periodSeconds": 1}


def gpu_resource_problems(gpu_resource):
    if resource_name_problem(gpu_resource) or "/" not in gpu_resource:
        return ["gpu_resource_name {0!r} must be a domain-qualified extended resource such as "
                "nvidia.com/gpu".format(gpu_resource)]
    return []


def job_metadata(params, name):
    """A job object's metadata: its name, its namespace (default unless given), labels and annotations as text."""
    metadata = {"name": name, "namespace": params.get("namespace") or "default"}
    if params.get("labels"):
        metadata["labels"] = text_dict(params["labels"])
    if params.get("annotations"):
        metadata["annotations"] = text_dict(params["annotations"])
    return metadata


def _quantities(entries, where, problems):
    clean = {}
    for name, quantity in entries.items():
        problem = resource_name_problem(name)
        if problem:
            problems.append("{0}: {1}".format(where, problem))
            continue
        text = quantity_text(quantity)
        if text is None:
            problems.append("{0}: {1!r} is not a valid quantity for {2} (expected a non-negative number with "
                            "an optional suffix such as m, Mi, Gi or G, e.g. 500m, 16Gi, 2)".format(where, quantity, name))
            continue
        clean[name] = text
    return clean


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
        where = "{0}.{1}".format(argument, section) if structured else argument
        clean = _quantities(entries, where, problems)
        if clean:
            result[section] = clean
    if not structured and "limits" in result:
        result["requests"] = dict(result["limits"])
    limits, requests = result.get("limits", {}), result.get("requests", {})
    names = set(limits) | set(requests)
    for name in sorted(names):
        if is_counted(name) and name in limits and name in requests and limits[name] != requests[name]:
            problems.append("{0}: {1} cannot be overcommitted: requests ({2}) must equal limits ({3})".format(
                argument, name, requests[name], limits[name]))
    if any(is_hugepages(name) for name in names) and not names & {"cpu", "memory"}:
        problems.append("{0}: hugepages need a cpu or memory request as well (the API server "
                        "rejects a container with hugepages alone)".format(argument))
    return result


def normalize_env(env, problems):
    """`env` as a dict of NAME: value turned into the container's env list, sorted by name."""
    if env is None:
        return []
    if not isinstance(env, dict):
        problems.append("env must be a dict of NAME: value, got {0!r}".format(env))
        return []
    result = []
    for name in sorted(env):
        value = api_text(env[name])
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


def _toleration(toleration, where, problems):
    unknown = sorted(set(toleration) - _TOLERATION_FIELDS)
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
    value = api_text(toleration.get("value"))
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
    return clean


def normalize_tolerations(tolerations, problems):
    result = []
    for index, toleration in enumerate(tolerations or []):
        where = "tolerations[{0}]".format(index)
        if not isinstance(toleration, dict):
            problems.append("{0} must be a dict with key, operator, value, effect, got {1!r}".format(where, toleration))
            continue
        result.append(_toleration(toleration, where, problems))
    return result


def normalize_node_selector(node_selector, problems):
    node_selector = node_selector or {}
    if not isinstance(node_selector, dict):
        problems.append("node_selector must be a dict of label: value, got {0!r}".format(node_selector))
        return {}
    return dict((key, api_text(value)) for key, value in node_selector.items())


def text_dict(values):
    """Labels or annotations with every value as text."""
    return dict((key, api_text(value)) for key, value in (values or {}).items())


def container(name, image, command=None, env=None, resources=None, image_pull_policy=None):
    """One container of a pod template; the lists and dicts given are copied, not shared."""
    spec = {"name": name, "image": image}
    if command:
        spec["command"] = list(command)
    if env:
        spec["env"] = copy.deepcopy(env)
    if resources:
        spec["resources"] = copy.deepcopy(resources)
    if image_pull_policy:
        spec["imagePullPolicy"] = image_pull_policy
    return spec


def set_extended_resource(resources, resource_name, count, argument, problems):
    """Put `count` of an extended resource (GPUs) in both limits and any requests of `resources`,
    refusing a different count given there as well (the count must come from one place)."""
    limits = resources.setdefault("limits", {})
    given = limits.get(resource_name)
    if given is not None and given != str(count):
        problems.append("resources sets {0}: {1} but {2} is {3}; give the GPU count in one place".format(
            resource_name, given, argument, count))
    limits[resource_name] = str(count)
    if "requests" in resources:
        resources["requests"][resource_name] = str(count)


def shm_volume(size, problems):
    """The memory-backed emptyDir of `size` (the `shm_size` option) mounted at /dev/shm, as (volume, mount),
    or None when no size is given. The container runtime's own /dev/shm is 64Mi, too small for NCCL's
    shared-memory transport between the ranks of one pod."""
    if size in (None, ""):
        return None
    text = quantity_text(size)
    if text is None:
        problems.append("shm_size: {0!r} is not a valid quantity (expected a memory size such as 512Mi or 1Gi)".format(size))
        return None
    volume = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": text}}
    return volume, {"name": "dshm", "mountPath": SHM_PATH}


def host_path_volumes(paths, problems):
    """Each absolute path of `host_paths` as a hostPath volume mounted at the same path, as (volume, mount)
    pairs; a relative path or one given twice is refused, naming it."""
    if paths is None:
        return []
    if not isinstance(paths, list):
        problems.append("host_paths must be a list of absolute paths, got {0!r}".format(paths))
        return []
    result, seen = [], set()
    for index, path in enumerate(paths):
        if not isinstance(path, str) or not path.startswith("/"):
            problems.append("host_paths[{0}]: {1!r} must be an absolute path such as /dev/hugepages".format(index, path))
            continue
        if path in seen:
            problems.append("host_paths[{0}]: {1} is given twice".format(index, path))
            continue
        seen.add(path)
        name = "host-path-{0}".format(len(result))
        result.append(({"name": name, "hostPath": {"path": path}}, {"name": name, "mountPath": path}))
    return result


def extra_volumes(volumes, problems):
    """The `volumes` option: each a dict with `name`, `mount_path` and the volume's source as Kubernetes
    writes it (persistentVolumeClaim, hostPath, nfs...), as (volume, mount) pairs."""
    pairs = []
    for index, entry in enumerate(volumes or []):
        where = "volumes[{0}]".format(index)
        if not isinstance(entry, dict) or not entry.get("name") or not str(entry.get("mount_path", "")).startswith("/"):
            problems.append("{0} must be a dict with name, an absolute mount_path and a volume source such as "
                            "persistentVolumeClaim: {{claimName: data}}, got {1!r}".format(where, entry))
            continue
        source = dict((key, value) for key, value in entry.items() if key not in ("name", "mount_path", "read_only"))
        if len(source) != 1:
            problems.append("{0} ({1}) must have exactly one volume source, got {2}".format(
                where, entry["name"], sorted(source) or "none"))
            continue
        volume = dict(source, name=entry["name"])
        mount = {"name": entry["name"], "mountPath": entry["mount_path"]}
        if entry.get("read_only"):
            mount["readOnly"] = True
        pairs.append((volume, mount))
    return pairs


def mount(pod_spec, volumes_and_mounts):
    """Add (volume, mount) pairs to a pod spec and to each of its containers."""
    for volume, volume_mount in volumes_and_mounts:
        pod_spec.setdefault("volumes", []).append(copy.deepcopy(volume))
        for spec in pod_spec["containers"]:
            spec.setdefault("volumeMounts", []).append(copy.deepcopy(volume_mount))


def capability_names(names, problems):
    """The `capabilities` option, Linux capabilities such as IPC_LOCK, as a sorted list without repeats; a
    name with the CAP_ prefix or not in capital letters is refused, naming it."""
    if names is None:
        return []
    if not isinstance(names, list):
        problems.append("capabilities must be a list of Linux capabilities such as [IPC_LOCK], got {0!r}".format(names))
        return []
    clean = set()
    for index, name in enumerate(names):
        if isinstance(name, str) and name.startswith("CAP_"):
            problems.append("capabilities[{0}]: write {1!r} without its CAP_ prefix, as Kubernetes takes "
                            "it".format(index, name[len("CAP_"):]))
        elif not isinstance(name, str) or not _CAPABILITY_RE.match(name):
            problems.append("capabilities[{0}]: {1!r} must be a Linux capability in capitals such as IPC_LOCK or "
                            "SYS_RESOURCE".format(index, name))
        else:
            clean.add(name)
    return sorted(clean)


def grant_device_access(pod_spec, run_privileged, capabilities):
    """Let every container of the pod reach the host's devices (RDMA, hugepages, sysfs): privileged, or with only
    the added `capabilities` (IPC_LOCK lets RDMA pin the memory it registers, which no device plugin grants)."""
    for spec in pod_spec["containers"]:
        if run_privileged:
            spec.setdefault("securityContext", {})["privileged"] = True
        if capabilities:
            spec.setdefault("securityContext", {}).setdefault("capabilities", {})["add"] = list(capabilities)


def service_account_name(name, problems):
    """The `service_account` option, checked as a DNS-1123 subdomain; None when not given."""
    if name in (None, ""):
        return None
    if not isinstance(name, str) or not is_dns1123_subdomain(name):
        problems.append("service_account {0!r} must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', "
                        "starting and ending with a letter or digit".format(name))
        return None
    return name


def image_pull_secret_refs(names, problems):
    """The `image_pull_secrets` option (names of Secrets in the job's namespace) as a pod's imagePullSecrets,
    [{"name": ...}] in the order given; [] when none. A name that is not a DNS-1123 subdomain, or one given
    twice, is refused naming it."""
    if names is None:
        return []
    if not isinstance(names, list):
        problems.append("image_pull_secrets must be a list of Secret names, got {0!r}".format(names))
        return []
    refs, seen = [], set()
    for index, name in enumerate(names):
        if not isinstance(name, str) or not is_dns1123_subdomain(name):
            problems.append("image_pull_secrets[{0}]: {1!r} must be a Secret's name, a DNS-1123 subdomain such as "
                            "gpuops-registry".format(index, name))
            continue
        if name in seen:
            problems.append("image_pull_secrets[{0}]: {1} is given twice".format(index, name))
            continue
        seen.add(name)
        refs.append({"name": name})
    return refs


def pull_with(pod_spec, refs):
    """Let the pod's kubelet pull its images with the registry credentials of `refs` (image_pull_secret_refs);
    a pod without any is left as it is."""
    if refs:
        pod_spec["imagePullSecrets"] = copy.deepcopy(refs)


def pod_options(params, problems):
    """The pod options every job kind takes, each checked into `problems`, as a PodOptions: env (the env list),
    resources (of the containers that hold the GPUs), tolerations, node_selector, shm (see shm_volume),
    host_paths (see host_path_volumes), service_account (see service_account_name), image_pull_secrets
    (see image_pull_secret_refs) and capabilities (see capability_names)."""
    return PodOptions(env=normalize_env(params.get("env"), problems),
                      resources=normalize_resources(params.get("resources"), "resources", problems),
                      tolerations=normalize_tolerations(params.get("tolerations"), problems),
                      node_selector=normalize_node_selector(params.get("node_selector"), problems),
                      shm=shm_volume(params.get("shm_size"), problems),
                      host_paths=host_path_volumes(params.get("host_paths"), problems),
                      service_account=service_account_name(params.get("service_account"), problems),
                      image_pull_secrets=image_pull_secret_refs(params.get("image_pull_secrets"), problems),
                      capabilities=capability_names(params.get("capabilities"), problems))
