# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The input rules a launcher's row in the registry (module_utils/launchers.py) gives its role, beside the role's own
meta/input_rules.yml: the counts of its shape and the ranks they start, what a run on one node cannot ask, an image
with a tag and a name Kubernetes takes, and what DistributedDataParallel refuses. Written once here, for every
launcher alike, in the form of meta/input_rules.yml's rules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import THROUGH_API

_EXPECT = "gpuops_training_expect_ranks"


def _shape_count_rules(shape):
    """The rules of the shape's own counts: groups and GPUs as numbers, ranks per group 1 or more or null for one per
    GPU, and a command of the user's own not empty."""
    group = shape.words[0]
    rules = []
    if shape.groups:
        rules.append({"variable": shape.groups, "that": "{0} >= 1".format(shape.groups),
                      "expected": "a number of {0}s, 1 or more".format(group)})
    if shape.gpus:
        rules.append({"variable": shape.gpus, "that": "{0} >= 0".format(shape.gpus),
                      "expected": "a number of GPUs per {0}, 0 (training on CPUs) or more".format(group)})
    if shape.per_group:
        rules.append({"variable": shape.per_group, "when": "{0} is not none".format(shape.per_group),
                      "that": "{0} >= 1".format(shape.per_group),
                      "expected": "a number of ranks per {0}, 1 or more, or null for one per GPU".format(group)})
    if shape.command:
        rules.append({"variable": shape.command, "when": "{0} is not none".format(shape.command),
                      "that": "{0} | length > 0".format(shape.command),
                      "expected": "a command of at least one word, or null for the launcher's own"})
    return rules


def _rank_count_rule(launcher):
    """The rule that asks gpuops_training_expect_ranks for the count the launcher starts (groups x ranks per group,
    one per GPU unless given): another count would fail the verdict after the whole run. Judged once the counts
    themselves are right, and not under a command of the user's own, whose ranks the role cannot count."""
    shape = launcher.shape
    group, rank = shape.words
    when = ["{0} is integer and {0} >= 1".format(_EXPECT)]
    if shape.command:
        when.append("{0} is none".format(shape.command))
    if shape.groups:
        when.append("{0} is integer and {0} >= 1".format(shape.groups))
    if shape.gpus:
        when.append("{0} is integer and {0} >= 0".format(shape.gpus))
    if shape.per_group:
        when.append("({0} is none or ({0} is integer and {0} >= 1))".format(shape.per_group))
    one_per_gpu = "[{0}, 1] | max".format(shape.gpus) if shape.gpus else "1"
    per_group = "({0} or {1})".format(shape.per_group, one_per_gpu) if shape.per_group else "({0})".format(one_per_gpu)
    groups = shape.groups or "1"
    total = "{0} * {1}".format(groups, per_group)
    groups_text = "{{{{ {0} }}}} {1}s".format(shape.groups, group) if shape.groups else "one " + group
    return {"variable": [_EXPECT] + shape.inputs(), "when": " and ".join(when), "that": "{0} == {1}".format(_EXPECT, total),
            "expected": "{{{{ {0} }}}}, the ranks the {1} launcher starts ({2} x {{{{ {3} }}}} {4}{{{{ '' if {3} == 1 else 's' }}}}),"
                        " or leave it unset to expect that count".format(total, launcher.name, groups_text, per_group, rank)}


# What NET/ names: NCCL's traffic between nodes. One node (one pod, one worker, one host) has no other node to reach.
_NET_REQUIRED = "gpuops_training_require_transport | gpuops.cluster.nccl_between_nodes"


def _on_one_node(rule, groups):
    """A rule that holds only of a run on one node: of any run where the launcher's shape has no group variable (one
    pod), else where its group variable counts one."""
    if groups:
        count = "({0} | length if {0} is sequence and {0} is not string else {0} | int)".format(groups)
        rule["when"] += " and {0} is defined and {0} is not none".format(groups)
        rule["that"] = "{0} > 1 or {1}".format(count, rule["that"])
    return rule


def _one_node_transport_rule(launcher):
    """The rule that refuses a NET/ transport required of a run the launcher keeps on one node: the verdict would fail
    it by construction, after the run. A launcher whose shape has no group variable (one pod) always is on one."""
    groups = launcher.shape.groups
    word = launcher.shape.words[0]
    return _on_one_node({"variable": ["gpuops_training_require_transport"] + ([groups] if groups else []),
                         "when": "gpuops_training_require_transport is not none",
                         "that": _NET_REQUIRED + " | length == 0",
                         "expected": "transports one {0} can use, such as P2P or SHM: NET/ transports carry NCCL's "
                                     "traffic between nodes, and this run has one {0} ({{{{ {1} | join(', ') }}}} cannot "
                                     "be seen)".format(word, _NET_REQUIRED)}, groups)


def _one_node_gpudirect_rule(launcher):
    """The rule that refuses GPUDirect RDMA required of a run on one node, which makes no RDMA connection."""
    groups = launcher.shape.groups
    return _on_one_node({"variable": ["gpuops_training_require_gpudirect_rdma"] + ([groups] if groups else []),
                         "when": "gpuops_training_require_gpudirect_rdma is sameas true",
                         "that": "false",
                         "expected": "false for a run on one {0}: GPUDirect RDMA is counted on the RDMA connections "
                                     "between nodes, and this run makes none".format(launcher.shape.words[0])}, groups)


def _image_tag_rule(launcher):
    """The rule that asks a launcher's image for a tag or a digest: without one, each node pulls :latest once, and
    keeps whatever that was while the registry moves on."""
    image = launcher.role + "_image"
    return {"variable": image, "when": "{0} is defined and {0} is not none and {0} | length > 0".format(image),
            "that": "({0} | gpuops.cluster.image_pin) is not none".format(image),
            "expected": "an image name with its tag or digest, such as "
                        "registry.example.com/ml/gpuops-benchmark:horovod-0.28.1 (without one, a node runs whatever "
                        ":latest was when it first pulled it)"}


def _object_name_rule(launcher):
    """The rule that asks a Kubernetes launcher's name to be one Kubernetes takes for what it names (the job, its pods,
    their Services): otherwise the job module refuses it, after the node stage, naming its own argument."""
    name, groups = launcher.shape.names[0], launcher.shape.groups
    count = "({0} if {0} is integer and {0} >= 1 else 1)".format(groups) if groups else "1"
    problems = "({0} | gpuops.cluster.launcher_name_problems('{1}', {2}))".format(name, launcher.name, count)
    return {"variable": name, "when": "{0} is string".format(name), "that": problems + " | length == 0",
            "expected": "a name Kubernetes takes for the {0} launcher's objects ({{{{ {1} | join('; ') }}}})".format(
                launcher.name, problems)}


def _ddp_rules(ddp):
    """The rules of a launcher that trains with PyTorch's DistributedDataParallel: the distribution is the launcher's
    option alone (it gives the program --framework pytorch --distribution ddp), and Horovod's options and variables,
    which DDP does not read, are refused under it."""
    parsed = "({0} | gpuops.cluster.benchmark_args)".format(ddp.args)
    choice = ddp.distribution
    under_ddp = {"when": "{0} == 'ddp'".format(choice)} if choice else {}
    rules = []
    if choice:
        rules.append(dict(under_ddp, variable=ddp.args,
                          that="{0}.distribution is none and {0}.framework is none".format(parsed),
                          expected="no --distribution or --framework: with {0} ddp the role gives --framework pytorch "
                                   "--distribution ddp".format(choice)))
        rules.append({"variable": ddp.args, "when": "{0} == 'horovod'".format(choice),
                      "that": "{0}.distribution in [none, 'horovod']".format(parsed),
                      "expected": "no --distribution other than horovod; set {0} to ddp for PyTorch's "
                                  "DistributedDataParallel".format(choice)})
    also = [choice] if choice else []
    rules.append(dict(under_ddp, variable=[ddp.args] + also, that="{0}.horovod_knobs | length == 0".format(parsed),
                      expected="none of Horovod's options ({{{{ {0}.horovod_knobs | join(', ') }}}}), which "
                               "DistributedDataParallel does not use".format(parsed)))
    rules.append(dict(under_ddp, variable=[ddp.env] + also,
                      that="{0}.keys() | map('string') | select('match', '^HOROVOD_') | list | length == 0".format(ddp.env),
                      expected="no HOROVOD_* variables, which DistributedDataParallel does not read"))
    return rules


def launcher_rules(launcher):
    """The rules the registry's row of a launcher gives its role, beside the role's own meta/input_rules.yml."""
    rules = _ddp_rules(launcher.ddp) if launcher.ddp else []
    if launcher.runs_on == THROUGH_API:
        rules.extend(_shape_count_rules(launcher.shape) + [_rank_count_rule(launcher)])
    rules.extend([_one_node_transport_rule(launcher), _one_node_gpudirect_rule(launcher)])
    if launcher.runs_on == THROUGH_API:
        rules.extend([_image_tag_rule(launcher), _object_name_rule(launcher)])
    return rules
