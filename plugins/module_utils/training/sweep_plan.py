# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A scaling sweep's sizes and efficiency floors, checked before any run, and each size turned into the size
variables of the launcher that runs it. Pure: the gpuops.cluster.sweep_plan lookup gathers the values, the
training_sweep module checks its own arguments with the same words."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import NOT_SET, Problem, convert
from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import EXPECTED, LAUNCHERS
from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import between_nodes

RANKS_VARIABLE = "gpuops_sweep_ranks"
FLOORS_VARIABLE = "gpuops_sweep_min_efficiency"
NAME_VARIABLE = "gpuops_sweep_name"
# A Kubernetes object name takes the run's name: a DNS label, with room for the size's suffix.
NAME_PATTERN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")
EXPECT_RANKS = "gpuops_training_expect_ranks"
# NET/ transports carry NCCL's traffic between nodes: a size on one node requires the others only, and no GPUDirect
# RDMA, which is counted on the RDMA connections between nodes.
REQUIRE_TRANSPORT = "gpuops_training_require_transport"
REQUIRE_GPUDIRECT = "gpuops_training_require_gpudirect_rdma"


class SweepError(Exception):
    """Every problem of a sweep's inputs, one line each."""

    def __init__(self, problems):
        super(SweepError, self).__init__("\n".join(problems))
        self.problems = problems


# How each launcher places ranks (launchers.registry.Shape).
SHAPES = dict((name, launcher.shape) for name, launcher in LAUNCHERS.items())


def _positive(name, value, what):
    converted, problem = convert(name, value, {"type": "int"})
    if problem is None and (converted is NOT_SET or converted is None or converted < 1):
        problem = Problem([(name, value)], what)
    return converted, problem


def check_ranks(value, name=RANKS_VARIABLE):
    """(sizes in ascending order, [problem line])."""
    converted, problem = convert(name, value, {"type": "list", "elements": "int", "required": True})
    expected = "a list of sizes in ranks, each a whole number 1 or more and given once, such as [1, 2, 4]"
    if problem is None and not converted:
        problem = Problem([(name, value)], expected)
    elif problem is None and (min(converted) < 1 or len(set(converted)) != len(converted)):
        problem = Problem([(name, value)], expected)
    if problem is not None:
        return [], [problem.line()]
    return sorted(converted), []


def check_floors(value, sizes, name=FLOORS_VARIABLE):
    """({size: floor}, [problem line]): one floor for every size, a mapping of size to floor, or none."""
    expected = ("a share above 0 and at most 1 (1.0 is linear scaling) for every size, a mapping of a size of the "
                "sweep to such a share, such as {2: 0.9, 4: 0.8}, or null for no floor")
    if value is None or value == "":
        return {}, []
    if isinstance(value, dict):
        floors, problems = {}, []
        for key, floor in value.items():
            size, wrong = convert(name, key, {"type": "int"})
            share, wrong_share = convert(name, floor, {"type": "float"})
            if wrong or wrong_share or share is None or not 0 < share <= 1 or (sizes and size not in sizes):
                problems.append(Problem([(name, value)], expected + "; the sweep's sizes are %s" % sizes).line())
                break
            floors[size] = share
        return floors, problems
    share, wrong = convert(name, value, {"type": "float"})
    if wrong or isinstance(value, (list, bool)) or not 0 < share <= 1:
        return {}, [Problem([(name, value)], expected).line()]
    return dict((size, share) for size in sizes), []


def check_name(value, name=NAME_VARIABLE):
    if isinstance(value, str) and NAME_PATTERN.match(value):
        return []
    return [Problem([(name, value)], "a name of lowercase letters, digits and '-', at most 40 characters, starting and "
                                     "ending with a letter or digit (Kubernetes objects and Slurm jobs take it)").line()]


def run_name(name, ranks):
    return "%s-%d%s" % (name, ranks, "rank" if ranks == 1 else "ranks")


def _capacity(shape, settings):
    """(most groups, most ranks per group, GPUs per group, [problem line]) from the launcher's own settings."""
    problems = []
    if shape.groups is None:
        groups = 1
    elif isinstance(settings.get(shape.groups), list):
        groups = len(settings[shape.groups])
        if not groups:
            problems.append(Problem([(shape.groups, [])], "hosts for the sweep's largest size").line())
    else:
        groups, problem = _positive(shape.groups, settings.get(shape.groups, NOT_SET),
                                    "a whole number, 1 or more: the most %ss a size of the sweep takes" % shape.words[0])
        problems += [problem.line()] if problem else []
    gpus = 0
    if shape.gpus:
        gpus, problem = convert(shape.gpus, settings.get(shape.gpus, 0), {"type": "int"})
        if problem or gpus is None or gpus < 0:
            problems.append((problem or Problem([(shape.gpus, gpus)], "a number of GPUs, 0 or more")).line())
            gpus = 0
    per_group = 1
    if shape.per_group and settings.get(shape.per_group) is not None:
        per_group, problem = _positive(shape.per_group, settings[shape.per_group],
                                       "a whole number, 1 or more: the most %ss on one %s" % shape.words[::-1])
        problems += [problem.line()] if problem else []
    elif shape.per_group:
        per_group = max(gpus, 1)
    return groups, per_group, gpus, problems


def placement(ranks, groups, per_group):
    """(groups, ranks per group) holding `ranks` in equal shares on the fewest groups, or None."""
    for count in range(1, groups + 1):
        if ranks % count == 0 and ranks // count <= per_group:
            return count, ranks // count
    return None


def _size_vars(launcher, shape, settings, ranks, count, share, gpus, per_group, name, directory):
    values = {EXPECT_RANKS: ranks}
    if shape.groups:
        hosts = settings.get(shape.groups)
        values[shape.groups] = hosts[:count] if isinstance(hosts, list) else count
    if shape.per_group:
        values[shape.per_group] = share
    if shape.gpus:
        # Each rank keeps the GPUs it has at full size; GPUs that ranks cannot share out evenly stay as they are.
        values[shape.gpus] = gpus * share // per_group if gpus and gpus % per_group == 0 else gpus
    for variable in shape.names:
        values[variable] = run_name(name, ranks)
    for variable in LAUNCHERS[launcher].path_variables():
        values[variable] = "%s/%s.%s" % (directory, run_name(name, ranks), "json" if variable.endswith("report_path") else "log")
    required = settings.get(REQUIRE_TRANSPORT)
    if _network_required(required):
        values[REQUIRE_TRANSPORT] = list(required) if count > 1 else [
            wanted for wanted in required if not between_nodes(wanted)]
    if _gpudirect_required(settings.get(REQUIRE_GPUDIRECT)):
        values[REQUIRE_GPUDIRECT] = count > 1
    return values


def _gpudirect_required(value):
    """Whether GPUDirect RDMA is required, a boolean as Ansible converts one (true, 'yes', 'true')."""
    converted, problem = convert(REQUIRE_GPUDIRECT, value, {"type": "bool"})
    return problem is None and converted is True


def _network_required(required):
    """Whether a list of required transports names one between nodes (NET/...)."""
    return isinstance(required, list) and any(between_nodes(wanted) for wanted in required)


def written_variables(launcher, required_transports=None, gpudirect=False):
    """Every variable a size sets for this launcher, in the order the plan gives them: the required transports too
    where they name one between nodes, which the sizes on one node leave out, and GPUDirect RDMA where required."""
    shape = SHAPES[launcher]
    return sorted([EXPECT_RANKS] + shape.inputs() + list(shape.names) + LAUNCHERS[launcher].path_variables()
                  + ([REQUIRE_TRANSPORT] if _network_required(required_transports) else [])
                  + ([REQUIRE_GPUDIRECT] if _gpudirect_required(gpudirect) else []))


def plan_sweep(launcher, ranks, floors, settings, name, directory):
    """The sweep as it will run: {launcher, role, sizes: [{ranks, name, placement, vars}], baseline, floors}.
    settings: the launcher's size variables as the inventory (or the role's defaults) give them, and the required
    transports (gpuops_training_require_transport) where given.
    Raises SweepError naming every problem, the variable first."""
    problems = []
    if launcher not in SHAPES:
        problems.append(Problem([("gpuops_launcher", launcher)], EXPECTED).line())
    sizes, wrong = check_ranks(ranks)
    problems += wrong + check_floors(floors, sizes)[1] + check_name(name)
    if problems:
        raise SweepError(problems)
    shape = SHAPES[launcher]
    groups, per_group, gpus, problems = _capacity(shape, settings)
    if problems:
        raise SweepError(problems)
    planned = []
    for size in sizes:
        placed = placement(size, groups, per_group)
        if placed is None:
            shown = [(RANKS_VARIABLE, ranks)] + [(item, settings.get(item)) for item in shape.inputs()]
            problems.append(Problem(shown, "sizes that at most %d %s(s) of at most %d %s(s) hold in equal shares: %d "
                                           "rank(s) do not" % (groups, shape.words[0], per_group, shape.words[1], size)).line())
            continue
        count, share = placed
        planned.append({"ranks": size, "name": run_name(name, size),
                        "placement": "%d %s(s) x %d %s(s)" % (count, shape.words[0], share, shape.words[1]),
                        "vars": _size_vars(launcher, shape, settings, size, count, share, gpus, per_group, name, directory)})
    if problems:
        raise SweepError(problems)
    baseline = 1 if 1 in sizes else sizes[0]
    floors = check_floors(floors, sizes)[0]
    return {"launcher": launcher, "role": LAUNCHERS[launcher].role, "sizes": planned, "baseline": baseline,
            "floors": floors,
            "lines": [plan_line(size, floors.get(size["ranks"]), baseline) for size in planned]}


def plan_line(size, floor, baseline):
    """What one size will run, in words."""
    shape_vars = ", ".join("%s=%s" % (name, size["vars"][name]) for name in sorted(size["vars"])
                           if not name.endswith(("_dir", "_path", "_name")))
    return "%d rank(s): %s, run %s%s (%s)" % (
        size["ranks"], size["placement"], size["name"],
        ", the baseline" if size["ranks"] == baseline else ", efficiency floor %g" % floor if floor else "", shape_vars)
