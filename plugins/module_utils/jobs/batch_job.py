# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Kubernetes batch Job as a job kind: pods that run the benchmark without any operator.

It carries the launchers that clusters without a training operator use: one pod running `horovodrun`
on an 8-GPU server; or parallel worker pods running sshd (an Indexed Job, each ready once sshd answers)
and one pod that runs `mpirun` over them. The pod is never
restarted in place (restartPolicy Never), and the Job makes no second pod unless `backoff_limit` asks:
a benchmark that failed once has failed, and its pod and log stay for the report.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs import pod_template
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import containers_cannot_start, gone_or_failed
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kind import JobKind
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import is_dns1035_label, is_dns1123_subdomain

KIND = "Job"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
# The Job controller labels its pods with the Job's name; the role label is this collection's own.
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
ROLE_LABEL = "gpuops.io/role"
ROLE = "launcher"
# A Job's name is also a label value on its pods: at most 63 characters.
MAX_NAME_LENGTH = 63


def batch_job_failure(observation):
    """Why the Job cannot succeed any more: it failed or was deleted, or its pod's container cannot start."""
    reason = gone_or_failed(KIND, observation)
    if reason or observation.status["phase"] == "Succeeded":
        return reason
    return containers_cannot_start(observation)


BATCH_JOB = JobKind(KIND, "batch", "v1", "jobs", failure=batch_job_failure, log_role=ROLE,
                    name_label=JOB_NAME_LABEL, role_label=ROLE_LABEL)


def invalid(problems):
    return InvalidArgumentError(problems, KIND)


def name_problems(name):
    if not isinstance(name, str) or not name:
        return ["name is required (the Job's metadata.name)"]
    if not is_dns1123_subdomain(name) or len(name) > MAX_NAME_LENGTH:
        return ["name {0!r} must be a DNS-1123 label of at most {1} characters: lowercase letters, digits and "
                "'-', starting and ending with a letter or digit".format(name, MAX_NAME_LENGTH)]
    return []


def _option_problems(params, gpu_resource):
    problems = []
    image, command = params.get("image"), params.get("command")
    if not isinstance(image, str) or not image.strip():
        problems.append("image is required (the benchmark's container image)")
    # No command runs the image's own (its entrypoint), as a CUDA sample image is made to be run.
    if command is not None and (not isinstance(command, list) or not command
                                or not all(isinstance(part, str) for part in command)):
        problems.append("command must be a non-empty list of strings, got {0!r}".format(command))
    problems.extend(pod_template.gpu_resource_problems(gpu_resource))
    problems.extend(pod_template.choice_problems(params, (("image_pull_policy", pod_template.IMAGE_PULL_POLICIES),)))
    return problems


def _job_spec(params, problems):
    spec = {"backoffLimit": 0}
    parallelism = pod_template.int_option(params, "parallelism", 1, problems)
    if parallelism and parallelism > 1:
        # Every pod runs until the end (an SSH server for mpirun), each with an index of its own, which
        # names it: <name>-<index>, and <name>-<index>.<subdomain> in the cluster's DNS.
        spec.update(parallelism=parallelism, completions=parallelism, completionMode="Indexed")
    spec.update(pod_template.int_fields(params, (("backoff_limit", "backoffLimit", 0),
                                                 ("active_deadline_seconds", "activeDeadlineSeconds", 1),
                                                 ("ttl_seconds_after_finished", "ttlSecondsAfterFinished", 0)), problems))
    return spec


def build_batch_job(params):
    """The Job body for the module's options. Raises InvalidArgumentError listing every problem."""
    problems = list(name_problems(params.get("name")))
    gpu_resource = params.get("gpu_resource_name") or DEFAULT_GPU_RESOURCE
    problems.extend(_option_problems(params, gpu_resource))
    job_spec = _job_spec(params, problems)
    gpus = max(pod_template.int_option(params, "gpus", 0, problems) or 0, 0)
    (env, resources, tolerations, node_selector, shm, host_paths, service_account,
     pull_secrets, capabilities) = pod_template.pod_options(params, problems)
    volumes = pod_template.extra_volumes(params.get("volumes"), problems)
    readiness_port = pod_template.port_option(params, "readiness_port", 1, problems)
    subdomain = params.get("subdomain")
    if subdomain is not None and not (isinstance(subdomain, str) and is_dns1035_label(subdomain)):
        problems.append("subdomain {0!r} must be a DNS-1035 label (a headless Service's name)".format(subdomain))
    if gpus:
        pod_template.set_extended_resource(resources, gpu_resource, gpus, "gpus", problems)
    if problems:
        raise invalid(problems)

    pod = {"restartPolicy": "Never",
           "containers": [pod_template.container(ROLE, params["image"], params.get("command"), env, resources,
                                                 params.get("image_pull_policy"))]}
    if readiness_port:
        pod["containers"][0]["readinessProbe"] = pod_template.tcp_readiness_probe(readiness_port)
    if params.get("subdomain"):
        pod["subdomain"] = params["subdomain"]
    if params.get("one_pod_per_node"):
        pod["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname",
             "labelSelector": {"matchLabels": {JOB_NAME_LABEL: params["name"]}}}]}}
    if params.get("host_network"):
        pod["hostNetwork"] = True
        # The cluster's DNS still resolves Service names (the workers') from the host's network.
        pod["dnsPolicy"] = "ClusterFirstWithHostNet"
    if node_selector:
        pod["nodeSelector"] = node_selector
    if tolerations:
        pod["tolerations"] = tolerations
    pod_template.mount(pod, ([shm] if shm else []) + host_paths + volumes)
    pod_template.grant_device_access(pod, params.get("privileged"), capabilities)
    if service_account:
        pod["serviceAccountName"] = service_account
    pod_template.pull_with(pod, pull_secrets)
    job_spec["template"] = {"metadata": {"labels": {ROLE_LABEL: ROLE}}, "spec": pod}

    return {"apiVersion": BATCH_JOB.api_version, "kind": KIND, "metadata": pod_template.job_metadata(params, params["name"]),
            "spec": job_spec}


def job_to_delete(params):
    """(namespace, name) of the Job state=absent removes."""
    problems = name_problems(params.get("name"))
    if problems:
        raise invalid(problems)
    return params.get("namespace") or "default", params["name"]
