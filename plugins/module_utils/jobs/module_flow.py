# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a job module does with its options, whatever the kind: check them, then create and wait for the
job, or delete it, and exit with the result or fail with the error's details."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kubernetes_api import KubernetesJobApi
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import ensure_absent, ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.options import lifecycle_settings, wait_option_problems
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.client import api_client
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import KubernetesError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import request_timeout_problems


def job_api(module, kind):
    """The cluster connection, configured by kubernetes.core exactly as its own modules are."""
    return KubernetesJobApi(api_client(module), kind, request_timeout=module.params["request_timeout"])


def _without_diff(module, result):
    if not module._diff:
        result.pop("diff", None)
    return result


def run_job_module(module, kind, desired_job, job_to_delete, make_api=None):
    """desired_job(params) builds the body for state=present; job_to_delete(params) gives (namespace,
    name) for state=absent; both raise InvalidArgumentError, and both run before any API client is made.
    make_api(module) is for tests."""
    params = module.params
    make_api = make_api or (lambda given: job_api(given, kind))
    try:
        problems = wait_option_problems(params) + request_timeout_problems(params)
        if problems:
            raise InvalidArgumentError(problems, kind.kind)
        settings = lifecycle_settings(params, module.check_mode)
        if params["state"] == "absent":
            namespace, name = job_to_delete(params)
            result = ensure_absent(kind, make_api(module), namespace, name, settings)
        else:
            body = desired_job(params)
            result = ensure_present(kind, make_api(module), body, settings)
    except KubernetesError as error:
        module.fail_json(msg=to_native(error), **_without_diff(module, dict(error.details)))
    module.exit_json(**_without_diff(module, result))
