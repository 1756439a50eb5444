# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The options every job module accepts: the wait options (documented by the doc fragment
gpuops.cluster.job_wait) with their checks and the lifecycle Settings they make, and the options of the
job and its pods that every kind shares (job_argument_spec, to which a module adds its kind's own).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import Settings
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import connection_argument_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.retry import RETRIES_DEFAULT

_WAIT_ARG_SPEC = dict(
    wait=dict(type="bool", default=False),
    wait_for=dict(type="str", choices=["Succeeded", "Running"], default="Succeeded"),
    wait_timeout=dict(type="int", default=600),
    wait_sleep=dict(type="float", default=1.0),
    fail_on_unschedulable=dict(type="bool", default=True),
    api_retries=dict(type="int", default=RETRIES_DEFAULT),
)


# The options every job module has besides its kind's own: the job's state, its pods' image, command,
# environment, resources, placement, volumes and image pull secrets, and the job object's metadata.
_JOB_ARG_SPEC = dict(
    state=dict(type="str", choices=["present", "absent"], default="present"),
    image=dict(type="str"),
    command=dict(type="list", elements="str"),
    gpu_resource_name=dict(type="str", default="nvidia.com/gpu"),
    env=dict(type="dict"),
    resources=dict(type="dict"),
    host_network=dict(type="bool"),
    shm_size=dict(type="str"),
    privileged=dict(type="bool", default=False),
    capabilities=dict(type="list", elements="str"),
    host_paths=dict(type="list", elements="str"),
    service_account=dict(type="str"),
    # Names of Secrets, not their content.
    image_pull_secrets=dict(type="list", elements="str", no_log=False),
    node_selector=dict(type="dict"),
    tolerations=dict(type="list", elements="dict"),
    image_pull_policy=dict(type="str", choices=["Always", "IfNotPresent", "Never"]),
    backoff_limit=dict(type="int"),
    active_deadline_seconds=dict(type="int"),
    ttl_seconds_after_finished=dict(type="int"),
    labels=dict(type="dict"),
    annotations=dict(type="dict"),
    force=dict(type="bool", default=False),
    log_lines=dict(type="int", default=1000),
)


def job_argument_spec(**kind_options):
    """A job module's whole argument spec: the connection and wait options, the shared job options, and the
    kind's own (which may replace a shared one)."""
    spec = connection_argument_spec()
    spec.update(wait_argument_spec())
    spec.update(copy.deepcopy(_JOB_ARG_SPEC))
    spec.update(kind_options)
    return spec


def kubeflow_job_argument_spec(**kind_options):
    """The argument spec of a module for a Kubeflow operator's job kind (MPIJob, TFJob, PyTorchJob): job_argument_spec's,
    the options of a job given by workers or as a raw definition, and the kind's own."""
    options = dict(name=dict(type="str"), namespace=dict(type="str"), definition=dict(type="dict"))
    options.update(workers=dict(type="int"), gpus_per_worker=dict(type="int"), spread_workers=dict(type="bool", default=False))
    options.update(clean_pod_policy=dict(type="str", choices=["None", "Running", "All"]))
    options.update(kind_options)
    return job_argument_spec(**options)


def wait_argument_spec():
    """A fresh copy of the wait options, for a module to extend with its own."""
    return copy.deepcopy(_WAIT_ARG_SPEC)


def wait_option_problems(params):
    """Why the wait options given to a module cannot be used; [] when they can."""
    problems = []
    if params["wait_timeout"] < 1:
        problems.append("wait_timeout must be at least 1 second, got {0}".format(params["wait_timeout"]))
    if params["wait_sleep"] <= 0:
        problems.append("wait_sleep must be above 0 seconds, got {0}".format(params["wait_sleep"]))
    if params["log_lines"] < 0:
        problems.append("log_lines must be 0 (the whole log) or more, got {0}".format(params["log_lines"]))
    if params["api_retries"] < 0:
        problems.append("api_retries must be 0 (no retry) or more, got {0}".format(params["api_retries"]))
    return problems


def lifecycle_settings(params, check_mode):
    """The lifecycle Settings for a job module's options."""
    return Settings(check_mode=check_mode, force=params["force"], wait=params["wait"], wait_for=params["wait_for"],
                    wait_timeout=params["wait_timeout"], wait_sleep=params["wait_sleep"],
                    log_lines=params["log_lines"], fail_on_unschedulable=params["fail_on_unschedulable"],
                    api_retries=params["api_retries"])
