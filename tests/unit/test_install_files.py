# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a user installs and starts from: requirements.yml against galaxy.yml and the collections the roles and
plugins use, and the production inventory skeleton inventories/prod, which every command of the docs names.
tests/e2e/test_install.py installs the built collection and runs it."""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
import yaml

from ansible.module_utils.compat.version import LooseVersion

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, program, run, run_playbook
from gpuops_testlib.installed import bundled_version, collection_requirements

PROD = os.path.join(REPO_ROOT, "inventories", "prod")
CHECK_TASK = "Check the variables of every role this run takes here"
DOCUMENTS = ["README.md"] + sorted(os.path.relpath(path, REPO_ROOT) for path in
                                   glob.glob(os.path.join(REPO_ROOT, "docs", "*.md")) +
                                   glob.glob(os.path.join(REPO_ROOT, "playbooks", "*.yml")))
# Another collection's content, as YAML names it: a task's module, a filter, a lookup.
YAML_USES = re.compile(r"""^\s*(?:-\s+)?([a-z_]+\.[a-z_]+)\.[a-z_0-9]+:(?:\s|$)|\|\s*([a-z_]+\.[a-z_]+)\.[a-z_0-9]+"""
                       r"""|(?:lookup|query)\(\s*['"]([a-z_]+\.[a-z_]+)\.""", re.M)
# As Python names it: an import, a documentation fragment.
PYTHON_USES = re.compile(r"ansible_collections\.([a-z_]+\.[a-z_]+)\.|^\s+-\s+([a-z_]+\.[a-z_]+)\.[a-z_0-9]+\s*$", re.M)


def _galaxy():
    with open(os.path.join(REPO_ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _published(pattern):
    """Files of the published content matching a glob pattern under the repository; the lab's are not."""
    return [path for path in glob.glob(os.path.join(REPO_ROOT, pattern), recursive=True)
            if os.path.isfile(path) and not os.path.basename(path).startswith("lab")]


def _uses(paths, expression):
    used = set()
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            used.update(name for match in expression.findall(handle.read()) for name in match if name)
    return used


def test_galaxy_yml_depends_on_exactly_the_collections_the_roles_and_plugins_use():
    used = _uses(_published("roles/**/*.yml") + _published("playbooks/*.yml"), YAML_USES) | \
        _uses(_published("plugins/**/*.py"), PYTHON_USES)
    assert sorted(used - {"ansible.builtin", "gpuops.cluster"}) == sorted(_galaxy()["dependencies"])


def test_requirements_yml_pins_the_bundled_version_of_each_dependency_within_galaxy_yml():
    ranges = _galaxy()["dependencies"]
    pins = collection_requirements()
    assert sorted(pins) == sorted(ranges)
    for name, version in pins.items():
        assert bundled_version(name) == version, (name, "the ansible package of requirements.txt bundles another")
        for bound in ranges[name].split(","):
            operator, limit = re.match(r"([<>=!]+)(.+)", bound.strip()).groups()
            assert {">=": LooseVersion(version) >= LooseVersion(limit), "<": LooseVersion(version) < LooseVersion(limit)}[
                operator], (name, version, ranges[name])


def test_development_requirements_include_the_controllers_and_pin_none_of_them_again():
    with open(os.path.join(REPO_ROOT, "requirements-controller.txt"), encoding="utf-8") as handle:
        controller = set(re.findall(r"^([A-Za-z0-9_.\[\]-]+)==", handle.read(), re.M))
    with open(os.path.join(REPO_ROOT, "requirements.txt"), encoding="utf-8") as handle:
        development = handle.read()
    assert "-r requirements-controller.txt" in development.splitlines()
    assert controller and not controller & set(re.findall(r"^([A-Za-z0-9_.\[\]-]+)==", development, re.M))


def test_the_prod_skeleton_lists_gpu_nodes_and_grants_no_reboot_and_no_restart():
    done = run([program("ansible-inventory"), "-i", PROD, "--list"], env=ansible_env(json_output=False))
    assert done.rc == 0 and "WARNING" not in done.stderr, done.stderr
    inventory = json.loads(done.stdout)
    assert inventory["gpu_nodes"]["hosts"] == ["gpu-node-01", "gpu-node-02"]
    hostvars = inventory["_meta"]["hostvars"]
    assert [(host, name) for host, variables in hostvars.items() for name, value in variables.items()
            if name.endswith(("_reboot_allowed", "_restart_allowed")) and value not in (None, False)] == []
    assert not [name for variables in hostvars.values() for name in variables
                if re.search("password|token|secret", name)]


def _documented_playbooks():
    """{playbooks of one documented command}: every `ansible-playbook -i inventories/prod ...` of the docs, README and
    playbooks' comments."""
    commands = set()
    for name in DOCUMENTS:
        with open(os.path.join(REPO_ROOT, name), encoding="utf-8") as handle:
            commands.update(tuple(found.split()) for found in re.findall(
                r"ansible-playbook -i inventories/prod ((?:playbooks/\S+\.yml\s+)+)", handle.read() + "\n"))
    return sorted(commands)


def test_every_documented_command_on_inventories_prod_names_playbooks_that_pass_the_syntax_check():
    commands = _documented_playbooks()
    assert ("playbooks/site.yml",) in commands and len(commands) >= 3, commands
    playbooks = sorted(set(path for command in commands for path in command))
    done = run([program(), "-i", PROD, "--syntax-check"] + playbooks, env=ansible_env(json_output=False))
    assert done.rc == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("options", [["--check", "--diff"], []], ids=["check", "real"])
def test_site_on_the_unfilled_skeleton_stops_at_the_input_check_naming_each_placeholder(options):
    done = run_playbook(os.path.join(REPO_ROOT, "playbooks", "site.yml"), PROD, options=options)
    assert done.rc != 0
    problems = dict((host, result["problems"]) for task, host, result in done.tasks() if result.get("failed"))
    # The image is the one value the skeleton leaves to the site (its line is the mpijob_launcher role's).
    assert [line.split(":")[0] for line in problems.pop("localhost", [])] == ["mpijob_launcher_image"], done.explain()
    assert problems == dict(
        (host, ["ansible_host: got '%s.example.invalid'; expected the address Ansible reaches %s by (a name under "
                ".invalid is a placeholder that never resolves, as in inventories/prod)" % (host, host)])
        for host in ("gpu-node-01", "gpu-node-02")), done.explain()
    assert set(task for task, _host, _result in done.tasks()) == {CHECK_TASK}
