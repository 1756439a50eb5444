# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry of launchers against what reads it or repeats it: the launcher roles, the input check's stages,
the playbooks that choose a launcher, and the user guide's table of launchers."""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.launcher_rules import launcher_rules
from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.stages import SITE_OPTIONS, parts_to_check
from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import (
    DEFAULT_LAUNCHER, KUBE_BODY, LAUNCHERS, ON_HOSTS, THROUGH_API,
)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
LOOKUP = "lookup('gpuops.cluster.launcher', gpuops_launcher | default(''))"


def _options(role):
    with open(os.path.join(REPO_ROOT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def _plays(playbook):
    with open(os.path.join(REPO_ROOT, "playbooks", playbook), encoding="utf-8") as handle:
        return [play for play in yaml.safe_load(handle) if "hosts" in play]


def test_every_launcher_role_has_a_row_and_every_row_a_role():
    roles = sorted(os.path.basename(path) for path in glob.glob(os.path.join(REPO_ROOT, "roles", "*_launcher")))
    assert roles == sorted(launcher.role for launcher in LAUNCHERS.values())


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_a_rows_variables_are_its_roles_options(name):
    launcher = LAUNCHERS[name]
    options = dict(_options(launcher.role), **(_options(KUBE_BODY) if launcher.runs_on == THROUGH_API else {}))
    declared = launcher.shape.inputs() + list(launcher.shape.names) + launcher.path_variables()
    assert [variable for variable in declared if variable not in options] == []
    for role in launcher.roles:
        assert os.path.isfile(os.path.join(REPO_ROOT, "roles", role, "meta", "argument_specs.yml")), role


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_the_input_check_takes_the_rows_roles_where_they_run(name):
    launcher = LAUNCHERS[name]
    taken = [(part.role, part.hosts_variable) for part in parts_to_check(("verify",), {"gpuops_launcher": name})]
    if launcher.runs_on == ON_HOSTS:
        assert taken == [(role, "gpuops_training_hosts") for role in launcher.roles]
    else:
        assert taken == [(role, None) for role in launcher.roles] + [("registry_credentials", None),
                                                                     ("job_namespace", None)]


def test_the_input_check_offers_the_registrys_launchers_and_its_default():
    assert SITE_OPTIONS["gpuops_launcher"]["choices"] == list(LAUNCHERS)
    assert SITE_OPTIONS["gpuops_launcher"]["default"] == DEFAULT_LAUNCHER
    assert parts_to_check(("verify",), {}) == parts_to_check(("verify",), {"gpuops_launcher": DEFAULT_LAUNCHER})


@pytest.mark.parametrize("playbook", ["verify_training.yml", "scaling_sweep.yml"])
def test_a_playbook_has_one_play_for_host_launchers_and_one_for_api_launchers_chosen_by_the_registry(playbook):
    plays = _plays(playbook)
    assert [play["hosts"] for play in plays] == ["{{ gpuops_training_hosts | default('gpu_nodes') }}", "localhost"]
    for play, runs_on in zip(plays, (ON_HOSTS, THROUGH_API)):
        chooser = list(play["vars"].values())
        assert chooser == ["{{ %s }}" % LOOKUP], play["name"]
        conditions = " ".join(str(task.get("when", "")) for task in play["tasks"])
        assert ".runs_on == '%s'" % runs_on in conditions, play["name"]


def test_verify_training_includes_the_chosen_launchers_roles_by_name():
    for play in _plays("verify_training.yml"):
        (task,) = play["tasks"]
        assert task["ansible.builtin.include_role"]["name"] == "gpuops.cluster.{{ verify_training_role }}"
        assert task["loop"] == "{{ verify_training_launcher.roles }}"


def test_the_default_launcher_is_written_only_in_the_registry():
    written = []
    for path in glob.glob(os.path.join(REPO_ROOT, "playbooks", "*.yml")) + glob.glob(
            os.path.join(REPO_ROOT, "roles", "*", "*", "*.yml")) + glob.glob(
            os.path.join(REPO_ROOT, "plugins", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if re.search(r"""default\(['"]%s['"]\)|get\(["']gpuops_launcher["'], ["']%s["']\)""" % (
                DEFAULT_LAUNCHER, DEFAULT_LAUNCHER), text):
            written.append(os.path.relpath(path, REPO_ROOT))
    assert written == []


def test_the_user_guide_table_lists_every_launcher():
    with open(os.path.join(REPO_ROOT, "docs", "user-guide.md"), encoding="utf-8") as handle:
        guide = handle.read()
    table = guide[guide.index("| Cluster | `gpuops_launcher` |"):]
    table = table[:table.index("\n\n")]
    listed = re.findall(r"^\|[^|]*\| `(\w+)`", table, re.M)[1:]
    assert listed == list(LAUNCHERS)
    assert "`%s` (default)" % DEFAULT_LAUNCHER in table


def _own_rules(role):
    with open(os.path.join(REPO_ROOT, "roles", role, "meta", "input_rules.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.mark.parametrize("name", list(LAUNCHERS))
def test_a_rule_the_row_gives_is_not_written_again_in_the_role(name):
    launcher = LAUNCHERS[name]
    given = [(str(rule["variable"]), str(rule["that"]).strip()) for rule in launcher_rules(launcher)]
    written = [(str(rule["variable"]), str(rule["that"]).strip()) for rule in _own_rules(launcher.role)]
    assert not set(given) & set(written)


@pytest.mark.parametrize("name", list(LAUNCHERS))
def test_the_rules_a_row_gives_name_only_variables_its_roles_declare(name):
    launcher = LAUNCHERS[name]
    declared = set(_options(launcher.role)) | set(SITE_OPTIONS)
    for role in launcher.roles:
        declared |= set(_options(role))
    if launcher.runs_on == THROUGH_API:
        declared |= set(_options(KUBE_BODY))
    declared |= set(_options("training_verdict"))
    for rule in launcher_rules(launcher):
        variables = rule["variable"] if isinstance(rule["variable"], list) else [rule["variable"]]
        assert set(variables) <= declared, rule
