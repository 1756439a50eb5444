#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_check
short_description: Whether the Kubernetes API server answers, asked once before a run changes anything
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Reads the API server's version with the connection options a run's roles will use. Changes nothing, in check
    mode too.
  - Fails with one line that says what is wrong, in words and not as the client's trace - the client cannot be
    configured (a kubeconfig that is not there, a context it does not have), the server does not answer (refused, a
    name that does not resolve, a timeout) or refuses the credentials - with the server's address where known, and
    C(problem) naming the kind.
  - The playbook C(playbooks/check_inputs.yml) runs it on the controller after the input check, where the run's roles
    talk to the cluster, and names the variables (C(gpuops_kubeconfig), C(gpuops_kube_context)) in its message.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
options:
  request_timeout:
    description: Seconds to wait for the answer; a server that does not answer within them fails the task.
    type: int
    default: 15
"""

EXAMPLES = r"""
- name: Check that the cluster answers before any change
  gpuops.cluster.cluster_check:
    kubeconfig: /etc/gpuops/kubeconfig
    context: gpu-cluster
"""

RETURN = r"""
server:
  description: The API server's address, where the client or the error says it.
  returned: where known
  type: str
  sample: https://api.gpu-cluster.example.com:6443
version:
  description: The server's Kubernetes version.
  returned: success
  type: str
  sample: v1.33.2
problem:
  description: >-
    What is wrong, on failure - V(client) (the client cannot be configured),
    V(unreachable) (no answer), V(credentials) (HTTP 401 or 403) or V(answer) (another HTTP error).
  returned: failure
  type: str
  sample: unreachable
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.client import api_client
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import server_of
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import connection_argument_spec
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def no_answer(error):
    """The cause of a request that got no HTTP answer, in a few words: urllib3's innermost reason, without the
    connection object's address that its text carries."""
    reason = getattr(error, "reason", None)
    while getattr(reason, "reason", None) is not None and reason is not reason.reason:
        reason = reason.reason
    text = str(reason if reason is not None else error)
    # "<urllib3.connection.HTTPSConnection object at 0x...>: Failed to establish a new connection: [Errno 111] ..."
    return text.split(">: ", 1)[-1].strip()


def _causes(error):
    """error and the exceptions it was raised from or while handling, innermost last."""
    seen = []
    while error is not None and error not in seen:
        seen.append(error)
        error = error.__cause__ or error.__context__
    return seen


def failure(error, server):
    """(problem, message) for an error of the client's set-up or of the request: the kubernetes client's factory asks
    the server for its version itself, so a server that does not answer can fail either."""
    import urllib3  # the kubernetes client's own HTTP library

    for cause in _causes(error):
        pool = getattr(cause, "pool", None)
        if isinstance(cause, urllib3.exceptions.HTTPError):
            if pool is not None and server is None:
                server = "{0}://{1}:{2}".format(pool.scheme, pool.host, pool.port)
            return "unreachable", server, "the API server at {0} did not answer: {1}".format(server, no_answer(cause))
        status = getattr(cause, "status", None)
        if isinstance(status, int) and status >= 400:
            refused = status in (401, 403)
            return ("credentials" if refused else "answer"), server, "the API server at {0} answered HTTP {1} {2}{3}".format(
                server, status, getattr(cause, "reason", "") or "",
                " (the kubeconfig's credentials were refused)" if refused else "")
    return "client", server, str(error)


def check(module):
    server = None
    try:
        client = api_client(module)
        server = server_of(client)
        import kubernetes  # the client factory above has checked that it is there

        answer = kubernetes.client.VersionApi(client).get_code(_request_timeout=module.params["request_timeout"])
    except Exception as error:  # the factory's and the client's: refused, no such name, timeout, TLS, HTTP errors
        problem, server, message = failure(error, server)
        module.fail_json(msg=message, problem=problem, server=server)
    module.exit_json(changed=False, server=server, version=answer.git_version)


def main():
    spec = connection_argument_spec()
    spec["request_timeout"] = dict(type="int", default=15)
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=spec, supports_check_mode=True)
    check(module)


if __name__ == "__main__":
    main()
