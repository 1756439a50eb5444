# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Which roles a run will take, on which hosts, under which tags: what the input check must cover.

This mirrors the plays of prepare_nodes.yml (stage ``nodes``), gpu_stack.yml (``gpu_stack``) and
verify_training.yml (``verify``): the host variable of each play, the tags of each role as site.yml
gives them, and the variables that choose between roles. A play that changes there changes here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import (
    DEFAULT_LAUNCHER, HOST_LAUNCHERS, LAUNCHERS, ON_HOSTS, chosen,
)

STAGES = ("nodes", "gpu_stack", "verify")

# The training thresholds (gpuops_training_*) every launcher's verdict reads: declared, documented and ruled once, in
# this role's meta/argument_specs.yml and meta/input_rules.yml, which the input check reads with SITE_OPTIONS and
# SITE_RULES.
THRESHOLDS_ROLE = "training_verdict"
THRESHOLD_PREFIX = "gpuops_training_"
# The role that addresses a host's Kubernetes node by name, and its option that names the node: the cluster check
# finds each such node in the cluster, Ready, before any change.
NODE_NAME_ROLE, NODE_NAME_OPTION = "gpu_node_labels", "gpu_node_labels_node_name"
# The option of the Kubernetes launchers' pods' resources: the cluster check finds a node offering each extended
# resource there (an RDMA device plugin's, say), but GPUs, which the run's own GPU stack may be about to offer.
POD_RESOURCES_OPTION = "kube_job_resources"


def extended_resources(resources):
    """The extended resources of a pod's resources (domain/name), but GPUs (<vendor>/gpu)."""
    return dict((name, amount) for name, amount in (resources or {}).items()
                if "/" in str(name) and not str(name).endswith("/gpu"))


# The variables the playbooks read themselves (not one role's), as an argument spec's options.
SITE_OPTIONS = {
    "gpuops_launcher": {"type": "str", "choices": list(LAUNCHERS), "default": DEFAULT_LAUNCHER},
    "gpuops_gpu_stack": {"type": "str", "choices": ["device_plugin", "gpu_operator"], "default": "device_plugin"},
    "gpuops_training_operator": {"type": "bool", "default": False},
    "gpuops_gpu_validation": {"type": "bool", "default": True},
    "gpuops_versions_report": {"type": "bool", "default": True},
    # playbooks/check_inputs.yml asks the API server once before any change, where the run's roles talk to it.
    "gpuops_cluster_check": {"type": "bool", "default": True},
    # The NCCL settings of the hosts' /etc/nccl.conf (gpu_network) and of every launcher's ranks: one source.
    "gpuops_nccl": {"type": "dict", "default": {}},
}


def _nccl_number(name, low, high, note=""):
    """The rule that holds a gpuops_nccl whole number within NCCL's range for it."""
    value = "gpuops_nccl['{0}']".format(name)
    return {"variable": "gpuops_nccl", "when": "gpuops_nccl is mapping and '{0}' in gpuops_nccl".format(name),
            "that": "{0} | string is match('^[0-9]+$') and {1} <= {0} | int <= {2}".format(value, low, high),
            "expected": "{0} from {1} to {2}{3}".format(name, low, high, note)}


# The numbers of gpuops_nccl that NCCL bounds: a value outside is refused here, not ignored by NCCL on the nodes.
NCCL_NUMBERS = (("NCCL_IB_GID_INDEX", 0, 255, " (3 is usual for RoCE v2)"), ("NCCL_SOCKET_NTHREADS", 1, 16),
                ("NCCL_NSOCKS_PERTHREAD", 1, 64))
_NCCL_SOCKETS_IN_RANGE = " and ".join(
    "({0[when]} and {0[that]})".format(_nccl_number(*number)) for number in NCCL_NUMBERS[1:])

SITE_RULES = [
    # gpuops_nccl is the one source of NCCL settings: each node's /etc/nccl.conf and every launcher's ranks.
    {"variable": "gpuops_nccl", "when": "gpuops_nccl is not none",
     "that": "gpuops_nccl.keys() | reject('match', '^NCCL_[A-Z0-9_]+$') | list | length == 0 and "
             "gpuops_nccl.values() | select('mapping') | list | length == 0 and "
             "gpuops_nccl.values() | reject('string') | select('iterable') | list | length == 0 and "
             "gpuops_nccl.values() | map('string') | select('search', '[\\r\\n]') | list | length == 0",
     "expected": "a mapping of NCCL variables to single-line values, such as {NCCL_IB_HCA: 'mlx5_0,mlx5_1', "
                 "NCCL_IB_GID_INDEX: 3}"},
] + [_nccl_number(*number) for number in NCCL_NUMBERS] + [
    # NCCL allows at most 64 sockets per connection in all; checked once both numbers are in their own ranges.
    {"variable": "gpuops_nccl", "when": _NCCL_SOCKETS_IN_RANGE,
     "that": "gpuops_nccl['NCCL_SOCKET_NTHREADS'] | int * gpuops_nccl['NCCL_NSOCKS_PERTHREAD'] | int <= 64",
     "expected": "NCCL_NSOCKS_PERTHREAD at most {{ 64 // gpuops_nccl['NCCL_SOCKET_NTHREADS'] | int }}, so that its "
                 "product with NCCL_SOCKET_NTHREADS is at most 64"},
    # A name under .invalid never resolves (RFC 6761): inventories/prod ships its hosts so, and a copy not filled in
    # stops here rather than after every node's connection timed out.
    {"variable": "ansible_host", "that": "not (ansible_host | string | lower).endswith('.invalid')",
     "expected": "the address Ansible reaches {{ inventory_hostname }} by (a name under .invalid is a placeholder that "
                 "never resolves, as in inventories/prod)",
     "when": "ansible_host is defined"},
]


class Part:
    """One role a stage runs: on the hosts of a variable (or localhost), under tags, when chosen."""

    def __init__(self, role, stage, tags, hosts_variable=None, chosen=None):
        self.role = role
        self.stage = stage
        self.tags = frozenset(tags)
        self.hosts_variable = hosts_variable
        self.chosen = chosen or (lambda site: True)

    def hosts_pattern(self, variables):
        """The host pattern of the part's play, as the play works it out."""
        if self.hosts_variable is None:
            return "localhost"
        return variables.get(self.hosts_variable) or "gpu_nodes"

    def runs_under(self, run_tags, skip_tags):
        """Whether Ansible runs a task with the part's tags under --tags and --skip-tags."""
        if self.tags & set(skip_tags) or ("tagged" in skip_tags):
            return False
        return "all" in run_tags or "tagged" in run_tags or bool(self.tags & set(run_tags))


def _launcher(name):
    return lambda site: chosen(site) == name


def _through_api(site):
    return chosen(site) not in HOST_LAUNCHERS


def _verify_parts():
    """Each launcher's roles, on the hosts of gpuops_training_hosts or on the controller, as the registry says;
    then what every launcher through the API includes: the registry credentials and the pods' namespace."""
    parts = []
    for name, launcher in LAUNCHERS.items():
        hosts_variable = "gpuops_training_hosts" if launcher.runs_on == ON_HOSTS else None
        parts += [Part(role, "verify", ("verify",), hosts_variable, _launcher(name)) for role in launcher.roles]
    return tuple(parts) + (Part("registry_credentials", "verify", ("verify",), chosen=_through_api),
                           Part("job_namespace", "verify", ("verify",), chosen=_through_api))


PARTS = (
    Part("nvidia_driver", "nodes", ("nodes", "nvidia_driver"), "prepare_nodes_hosts"),
    Part("nvidia_container_toolkit", "nodes", ("nodes", "nvidia_container_toolkit"), "prepare_nodes_hosts"),
    Part("hugepages", "nodes", ("nodes", "hugepages"), "prepare_nodes_hosts"),
    Part("gpu_network", "nodes", ("nodes", "gpu_network"), "prepare_nodes_hosts"),
    Part("gpu_selinux_contexts", "nodes", ("nodes", "gpu_selinux_contexts"), "prepare_nodes_hosts"),
    Part("gpu_node_labels", "gpu_stack", ("gpu_stack", "gpu_node_labels"), "gpuops_gpu_hosts"),
    # Both stacks are checked whichever is chosen: the other one is removed with its own variables.
    Part("nvidia_device_plugin", "gpu_stack", ("gpu_stack", "nvidia_device_plugin")),
    Part("gpu_operator", "gpu_stack", ("gpu_stack", "gpu_operator")),
    Part("gpu_validation", "gpu_stack", ("gpu_stack", "gpu_validation"),
         chosen=lambda site: site.get("gpuops_gpu_validation", True)),
    Part("mpi_operator", "gpu_stack", ("mpi_operator",)),
    Part("training_operator", "gpu_stack", ("training_operator",),
         chosen=lambda site: site.get("gpuops_training_operator", False)),
    Part("versions_report", "gpu_stack", ("gpu_stack", "versions_report"),
         chosen=lambda site: site.get("gpuops_versions_report", True)),
    # The registry credentials (gpuops_registry_*) go where the roles that make pods include them: the device
    # plugin, the GPU Operator, GPU validation's smoke pods and the Kubernetes launchers. Checked once a run.
    Part("registry_credentials", "gpu_stack", ("gpu_stack", "nvidia_device_plugin")),
    Part("registry_credentials", "gpu_stack", ("gpu_stack", "gpu_operator")),
    Part("registry_credentials", "gpu_stack", ("gpu_stack", "gpu_validation"),
         chosen=lambda site: site.get("gpuops_gpu_validation", True)),
    # The namespace of the pods, with their pod security labels: GPU validation's smoke pods and the launchers'.
    Part("job_namespace", "gpu_stack", ("gpu_stack", "gpu_validation"),
         chosen=lambda site: site.get("gpuops_gpu_validation", True)),
) + _verify_parts()


def parts_to_check(stages, site, run_tags=("all",), skip_tags=()):
    """The parts of ``stages`` that this run takes, given the converted site variables and the tags; a role that
    two stages run on the same hosts is checked once."""
    taken, seen = [], set()
    for part in PARTS:
        if part.stage in stages and part.runs_under(run_tags, skip_tags) and part.chosen(site):
            key = (part.role, part.hosts_variable)
            if key not in seen:
                seen.add(key)
                taken.append(part)
    return taken
