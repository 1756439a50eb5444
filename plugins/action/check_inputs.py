# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Checks every input of the roles a run will take on this host, before anything changes.

For each role: its meta/argument_specs.yml converts the values as users give them (strings from -e
and INI inventories included) and names those of the wrong type or choice; then the rules of its
meta/input_rules.yml are evaluated with the converted values. All problems come at once, one line
each. The wording and conversion live in module_utils/inputs; this file gathers values and runs Jinja.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from collections import ChainMap

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import lookup_loader
from ansible.template import Templar, trust_as_template

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import NOT_SET, Problem, convert_all
from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.stages import (
    NODE_NAME_OPTION, NODE_NAME_ROLE, POD_RESOURCES_OPTION, SITE_OPTIONS, SITE_RULES, STAGES, THRESHOLD_PREFIX,
    THRESHOLDS_ROLE, extended_resources, parts_to_check,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.launcher_rules import launcher_rules
from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.unknown import unknown_variables
from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import KUBE_BODY, LAUNCHERS, THROUGH_API

_COLLECTION_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
_ROLE_PREFIX = "gpuops.cluster."
LAUNCHER_OF_ROLE = dict((launcher.role, launcher) for launcher in LAUNCHERS.values())


def _variables_of(rule):
    """The variables a rule names: its first is the one to fix, the others are shown with it."""
    return rule["variable"] if isinstance(rule["variable"], list) else [rule["variable"]]


def _short_name(name):
    return name[len(_ROLE_PREFIX):] if name.startswith(_ROLE_PREFIX) else name


def _with_dependencies(loader, names):
    """The roles of names, each followed by the roles it depends on (a shared body of options), each once."""
    roles, seen = [], set()

    def add(name):
        if name in seen:
            return
        seen.add(name)
        role = _Role(loader, name)
        roles.append(role)
        for dependency in role.dependencies:
            add(dependency)

    for name in names:
        add(_short_name(name))
    return roles


def _with_launcher_rules(roles):
    """roles, each launcher's rules joined by those its row in the registry gives (its shape says how many nodes its
    run takes, which the thresholds alone do not know)."""
    for role in roles:
        if role.name in LAUNCHER_OF_ROLE:
            role.rules = list(role.rules) + launcher_rules(LAUNCHER_OF_ROLE[role.name])
    return roles


def _renamed(roles, variables):
    """A Kubernetes launcher's option given under the launcher's own name, which its shared body (kube_job) now holds
    for all of them: named, with the name to use. Ansible would pass over it without a word."""
    problems = []
    for body in (role for role in roles if role.name == KUBE_BODY):
        for option in body.options:
            if not option.startswith(KUBE_BODY + "_"):
                continue
            for launcher in (launcher for launcher in LAUNCHERS.values() if launcher.runs_on == THROUGH_API):
                old = launcher.role + option[len(KUBE_BODY):]
                if old in variables:
                    problems.append(Problem([(old, variables[old])], "{0} instead: every Kubernetes launcher takes it "
                                                                     "from there (the kube_job role)".format(option)))
    return problems


def _unknown(loader, variables, reported):
    """Each variable given with a role's prefix that the role neither declares nor reads, with the nearest option it
    declares; a name reported already (a renamed option) is not named twice."""
    problems = []
    given = [name for name in variables if name not in reported]
    for name, role, nearest in unknown_variables(given, _COLLECTION_ROOT, loader.load_from_file):
        hint = " ({0} is the nearest it has)".format(nearest) if nearest else ""
        problems.append(Problem([(name, variables[name])], "an option the {0} role declares{1}: Ansible passes over "
                                "other names and the role runs with its default (ansible-doc -t role gpuops.cluster.{0} "
                                "lists them)".format(role, hint), secret=True))
    return problems


class _Role:
    """What one role's files say of its inputs: options, defaults and rules."""

    def __init__(self, loader, name):
        self.name = _short_name(name)
        root = os.path.join(_COLLECTION_ROOT, "roles", self.name)
        if not os.path.isdir(root):
            raise AnsibleError("gpuops.cluster.check_inputs: no role {0} in this collection".format(name))
        specs = self._load(loader, os.path.join(root, "meta", "argument_specs.yml")) or {}
        self.options = ((specs.get("argument_specs") or {}).get("main") or {}).get("options") or {}
        self.defaults = self._load(loader, os.path.join(root, "defaults", "main.yml")) or {}
        self.rules = self._load(loader, os.path.join(root, "meta", "input_rules.yml")) or []
        meta = self._load(loader, os.path.join(root, "meta", "main.yml")) or {}
        # The collection's roles this one depends on: Ansible runs them first, with their options.
        self.dependencies = [_short_name(entry["role"] if isinstance(entry, dict) else entry)
                             for entry in meta.get("dependencies") or []]

    def named(self, prefix):
        """(options, rules) of the variables whose names start with prefix: a rule is taken when it names no other."""
        options = dict((name, option) for name, option in self.options.items() if name.startswith(prefix))
        rules = [rule for rule in self.rules if all(name.startswith(prefix) for name in _variables_of(rule))]
        return options, rules

    @staticmethod
    def _load(loader, path):
        # The collection's own files: templates there are as trusted as a role's defaults.
        return loader.load_from_file(path, trusted_as_template=True) if os.path.exists(path) else None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("stages", "roles"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(
            argument_spec={
                "stages": {"type": "list", "elements": "str", "choices": list(STAGES)},
                "roles": {"type": "list", "elements": "str"},
            },
            mutually_exclusive=[("stages", "roles")],
            required_one_of=[("stages", "roles")],
        )
        task_vars = task_vars or {}
        self._cluster_roles, self._cluster_node, self._cluster_resources = [], None, {}
        problems, checked = self._check(args, task_vars)
        # The roles here that talk to the API server (those with a kubeconfig option), the node this host is where a
        # role addresses it by name, and the extended resources its pods ask for: the cluster check after this one
        # asks the API server once, before any of them runs.
        result.update(changed=False, checked=checked, problems=[problem.line() for problem in problems],
                      cluster_roles=self._cluster_roles, cluster_node=self._cluster_node,
                      cluster_resources=self._cluster_resources)
        if problems:
            result["failed"] = True
            result["msg"] = "{0} input{1} to fix before anything changes on {2}:\n{3}".format(
                len(problems), "" if len(problems) == 1 else "s", task_vars.get("inventory_hostname", "this host"),
                "\n".join(result["problems"]))
        else:
            result["msg"] = "every input of {0} is as expected".format(", ".join(checked) or "nothing (no stage runs here)")
        return result

    def _check(self, args, task_vars):
        thresholds, threshold_rules = _Role(self._loader, THRESHOLDS_ROLE).named(THRESHOLD_PREFIX)
        if args["roles"]:
            roles = _with_dependencies(self._loader, args["roles"])
            # A launcher judges its log with the thresholds: its own check covers them, as the stages' does.
            for role in roles:
                if role.name in LAUNCHER_OF_ROLE:
                    role.options = dict(thresholds, **role.options)
                    role.rules = list(role.rules) + threshold_rules
            return self._check_roles(_with_launcher_rules(roles), [], {}, task_vars)
        site_options = dict(SITE_OPTIONS, **thresholds)
        defaults = dict((name, option.get("default")) for name, option in site_options.items())
        site, problems = self._converted(site_options, ChainMap(task_vars, defaults))
        if problems:
            # Which roles run depends on these; the rest is checked once they are right.
            return problems, ["the playbooks' own variables"]
        parts = parts_to_check(args["stages"], site, task_vars.get("ansible_run_tags") or ["all"],
                               task_vars.get("ansible_skip_tags") or [])
        here = task_vars.get("inventory_hostname")
        # Most parts share a pattern (localhost, or the GPU nodes' group): each is resolved once.
        patterns = set(part.hosts_pattern(task_vars) for part in parts)
        targeted = dict((pattern, here in self._hosts_of(pattern, task_vars)) for pattern in patterns)
        roles = _with_dependencies(self._loader, [part.role for part in parts if targeted[part.hosts_pattern(task_vars)]])
        return self._check_roles(_with_launcher_rules(roles), SITE_RULES + threshold_rules, site, task_vars,
                                 site_checked=True, site_names=list(site_options))

    def _hosts_of(self, pattern, task_vars):
        pattern = self._templar.template(pattern)
        lookup = lookup_loader.get("ansible.builtin.inventory_hostnames", loader=self._loader, templar=self._templar)
        return lookup.run([pattern], variables=task_vars)

    def _converted(self, options, variables):
        templar = Templar(loader=self._loader, variables=variables)
        values, problems = {}, []
        for name in options:
            if name in variables:
                try:
                    values[name] = templar.template(variables[name])
                except AnsibleError as error:
                    # default(omit) in a role's defaults: the role passes nothing, so nothing is set.
                    if "Omit" not in str(error):
                        problems.append(Problem([(name, variables[name])], "a value that can be worked out ({0})".format(
                            str(error).splitlines()[0])))
        converted, wrong = convert_all(options, values)
        return converted, problems + wrong

    def _check_roles(self, roles, extra_rules, site, task_vars, site_checked=False, site_names=None):
        variables = ChainMap(site, task_vars, *[role.defaults for role in roles])
        problems, converted = [], dict(site)
        for role in roles:
            role_values, role_problems = self._converted(role.options, variables)
            converted.update(role_values)
            problems.extend(role_problems)
        problems.extend(_renamed(roles, task_vars))
        wrong_types = bool(problems)
        wrong_names = set(name for problem in problems for name, _value in problem.values)
        # In the rules, an option nobody set and no default gives is null, as an argument spec leaves it.
        unset = dict.fromkeys(list(site_names or SITE_OPTIONS) + [name for role in roles for name in role.options])
        templar = Templar(loader=self._loader, variables=ChainMap(converted, variables, unset))
        # A role switched off (<role>_enabled false) does nothing, so its rules do not hold the run up; its types do.
        switched_off = set(role.name for role in roles if converted.get(role.name + "_enabled") is False)
        for rule in list(extra_rules) + [rule for role in roles if role.name not in switched_off for rule in role.rules]:
            named = _variables_of(rule)
            if wrong_names.intersection(named):
                # Its value is reported already, as of the wrong type: a rule over it would repeat that.
                continue
            try:
                problem = self._broken(rule, templar)
            except AnsibleError:
                # A rule over a value of the wrong type cannot be worked out; that value is reported already.
                if wrong_types:
                    continue
                raise
            if problem is not None:
                problems.append(problem)
        reported = set(name for problem in problems for name, _value in problem.values)
        problems.extend(_unknown(self._loader, task_vars, reported))
        checked = (["the playbooks' own variables"] if site_checked else []) + [role.name for role in roles]
        self._cluster_roles = [role.name for role in roles if role.name + "_kubeconfig" in role.options]
        if NODE_NAME_ROLE in self._cluster_roles and NODE_NAME_ROLE not in switched_off and not problems:
            self._cluster_node = converted.get(NODE_NAME_OPTION)
        if not problems:
            self._cluster_resources = extended_resources(converted.get(POD_RESOURCES_OPTION))
        return problems, checked

    @staticmethod
    def _broken(rule, templar):
        """The Problem a rule finds, or None: ``when`` gates it, ``that`` must hold."""
        names = _variables_of(rule)
        # The rules are the collection's own (its roles' files and module_utils), as trusted as its tasks.
        if "when" in rule and not templar.evaluate_conditional(trust_as_template(rule["when"])):
            return None
        if templar.evaluate_conditional(trust_as_template(rule["that"])):
            return None
        values = [(name, templar.available_variables.get(name, NOT_SET)) for name in names]
        values = [(name, templar.template(value) if value is not NOT_SET else value) for name, value in values]
        return Problem(values, templar.template(trust_as_template(rule["expected"])), secret=bool(rule.get("secret")))
