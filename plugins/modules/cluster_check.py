#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_check
short_description: Whether the Kubernetes API server answers, and the GPU nodes are Ready nodes of it, before any change
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Reads the API server's version with the connection options a run's roles will use, and the nodes of O(nodes).
    Changes nothing, in check mode too.
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
  nodes:
    description:
      - Kubernetes node names that must be nodes of the cluster, each with its C(Ready) condition true. One not there,
        or not Ready (the condition's reason and message, or no condition at all where no kubelet has reported), fails
        the task with V(nodes) as C(problem), every such node named.
      - The playbook passes each GPU host's C(gpu_node_labels_node_name), whose labels the run sets through the API.
    type: list
    elements: str
    default: []
  resources:
    description:
      - Extended resources a pod of the run asks for (V(rdma/rdma_shared_device_a), for example), each with the amount
        one pod asks. One that no node offers that much of (its allocatable) fails the task with V(resources) as
        C(problem), since the pods would wait unschedulable after the node stage. Only the nodes of O(nodes) count where
        it names any.
      - The playbook passes the extended resources of C(kube_job_resources), but for GPUs, which the run's own device
        plugin or GPU Operator may be about to offer.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Check that the cluster answers before any change
  gpuops.cluster.cluster_check:
    kubeconfig: /etc/gpuops/kubeconfig
    context: gpu-cluster

- name: Check that the GPU nodes are Ready nodes of the cluster
  gpuops.cluster.cluster_check:
    nodes: [dgx-01, dgx-02]
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
nodes:
  description: Each node of O(nodes) as the cluster has it, C(found) and C(ready), with the reason where not Ready.
  returned: when O(nodes) names any
  type: list
  elements: dict
  sample: [{"name": "dgx-01", "found": true, "ready": false, "reason": "KubeletNotReady: container runtime is down"}]
node_problem:
  description: The nodes of O(nodes) that are not there or not Ready, in words.
  returned: failure, where any
  type: str
resource_problem:
  description: The resources of O(resources) that no node offers, in words.
  returned: failure, where any
  type: str
problem:
  description: >-
    What is wrong, on failure - V(client) (the client cannot be configured),
    V(unreachable) (no answer), V(credentials) (HTTP 401 or 403), V(answer) (another HTTP error) or
    V(nodes) (a node of O(nodes) is not in the cluster or not Ready) or V(resources) (no node offers one of
    O(resources)).
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


def ready_condition(node):
    """(ready, reason) of a Node object as the API gives it: its Ready condition, or none where no kubelet reported."""
    for condition in (node.status.conditions if node.status else None) or []:
        if condition.type == "Ready":
            why = ": ".join(part for part in (condition.reason, condition.message) if part)
            return condition.status == "True", why or "Ready is " + str(condition.status)
    return False, "no Ready condition: no kubelet has reported for it"


def node_states(wanted, listed):
    """Each wanted node name as the listed Node objects have it."""
    by_name = dict((node.metadata.name, node) for node in listed)
    states = []
    for name in wanted:
        node = by_name.get(name)
        ready, reason = ready_condition(node) if node is not None else (False, "")
        state = {"name": name, "found": node is not None, "ready": ready}
        if node is not None and not ready:
            state["reason"] = reason
        states.append(state)
    return states


def node_message(states, known):
    """One line naming every node that is not there or not Ready, with the nodes the cluster has."""
    missing = [state["name"] for state in states if not state["found"]]
    parts = []
    if missing:
        parts.append("not a node of the cluster: {0} (its nodes: {1})".format(
            ", ".join(missing), ", ".join(sorted(known)) or "none"))
    parts.extend("node {0} is not Ready ({1})".format(state["name"], state["reason"])
                 for state in states if state["found"] and not state["ready"])
    return "; ".join(parts)


def _whole(amount):
    """An extended resource's amount as a whole number (they are counted, never fractional); 0 where it is none."""
    try:
        return int(str(amount).strip())
    except ValueError:
        return 0


def resource_message(asked, listed, among):
    """One line naming each resource asked for that no node (of `among`, where it names any) offers enough of."""
    nodes = [node for node in listed if node.metadata.name in among] if among else listed
    lacking = []
    for name, amount in sorted(asked.items()):
        offering = [node for node in nodes
                    if _whole(((node.status.allocatable if node.status else None) or {}).get(name)) >= max(_whole(amount), 1)]
        if not offering:
            lacking.append("{0} ({1} a pod)".format(name, amount))
    if not lacking:
        return ""
    return "no {0}node offers {1}".format("GPU host's " if among else "", ", ".join(lacking))


def check(module):
    server = None
    timeout = module.params["request_timeout"]
    wanted, asked = module.params["nodes"], module.params["resources"]
    try:
        client = api_client(module)
        server = server_of(client)
        import kubernetes  # the client factory above has checked that it is there

        answer = kubernetes.client.VersionApi(client).get_code(_request_timeout=timeout)
        listed = kubernetes.client.CoreV1Api(client).list_node(_request_timeout=timeout).items if wanted or asked else []
    except Exception as error:  # the factory's and the client's: refused, no such name, timeout, TLS, HTTP errors
        problem, server, message = failure(error, server)
        module.fail_json(msg=message, problem=problem, server=server)
    found = {"changed": False, "server": server, "version": answer.git_version}
    if wanted:
        found["nodes"] = node_states(wanted, listed)
    lacking = {"node_problem": node_message(found.get("nodes", []), [node.metadata.name for node in listed]),
               "resource_problem": resource_message(asked, listed, wanted)}
    if any(lacking.values()):
        module.fail_json(msg="; ".join(text for text in lacking.values() if text),
                         problem="nodes" if lacking["node_problem"] else "resources",
                         **dict(found, **dict((key, text) for key, text in lacking.items() if text)))
    module.exit_json(**found)


def main():
    spec = connection_argument_spec()
    spec["request_timeout"] = dict(type="int", default=15)
    spec["nodes"] = dict(type="list", elements="str", default=[])
    spec["resources"] = dict(type="dict", default={})
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=spec, supports_check_mode=True)
    check(module)


if __name__ == "__main__":
    main()
