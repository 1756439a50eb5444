# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The install path a user takes, apart from this checkout and the development virtualenv: the collection built
with ansible-galaxy, installed beside the collections of requirements.yml, run from a new virtualenv of
requirements-controller.txt alone (gpuops_testlib.installed). Its documentation, its pinned versions, the
production skeleton refused before any change, then site.yml in check mode against the lab make lab made.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tarfile
import time

import pytest
import yaml

from gpuops_testlib.ansible_run import ansible_env, program, run
from gpuops_testlib.installed import Installed, collection_requirements
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from gpuops_testlib.versions import pinned
from main_job import LAB_DIR, REPO_ROOT

CHECK_TASK = "Check the variables of every role this run takes here"
MODULES = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(REPO_ROOT, "plugins", "modules", "*.py")))
ROLES = sorted(os.path.basename(os.path.dirname(os.path.dirname(path)))
               for path in glob.glob(os.path.join(REPO_ROOT, "roles", "*", "meta", "argument_specs.yml")))


@pytest.fixture(scope="module", name="installed")
def installed_collection(tmp_path_factory):
    started = time.monotonic()
    install = Installed(tmp_path_factory.mktemp("installed")).install()
    steps = ["%s %.0f s" % (" ".join(os.path.basename(arg) for arg in step.argv[:3]), step.seconds) for step in install.steps]
    sys.stderr.write("built and installed with the controller's requirements in %.0f s: %s\n" % (
        time.monotonic() - started, ", ".join(steps)))
    return install


def _fqcn(names):
    return ["gpuops.cluster." + name for name in names]


def test_the_tarball_holds_the_roles_plugins_playbooks_and_docs_and_leaves_the_lab_and_development_out(installed):
    with tarfile.open(installed.tarball) as archive:
        names = set(member.name for member in archive.getmembers())
    assert set(name.split("/")[0] for name in names) == {
        "MANIFEST.json", "FILES.json", "README.md", "versions.yml", "requirements-controller.txt", "requirements.yml",
        "meta", "playbooks", "plugins", "roles", "docs", "inventories", "changelogs", "tests"}
    assert set(name.split("/")[1] for name in names if name.count("/") and name.startswith(("inventories/", "tests/"))) == {
        "examples", "prod", "sanity"}
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc") or name.startswith("playbooks/lab")]
    # Nothing the published content needs is left out.
    needed = [os.path.relpath(os.path.join(folder, name), installed.source)
              for part in ("roles", "plugins", "playbooks", "meta", "inventories/prod")
              for folder, _dirs, files in os.walk(os.path.join(installed.source, part)) for name in files]
    assert needed and [name for name in needed if name not in names and not os.path.basename(name).startswith("lab")] == []


def test_the_install_holds_the_dependency_collections_at_the_versions_requirements_yml_pins(installed):
    listed = installed.run("ansible-galaxy", "collection", "list", "--format", "json").document
    versions = dict((name, info["version"])
                    for name, info in listed[os.path.join(installed.collections, "ansible_collections")].items())
    with open(os.path.join(REPO_ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        version = yaml.safe_load(handle)["version"]
    assert versions == dict(collection_requirements(), **{"gpuops.cluster": version})


def test_ansible_doc_documents_every_module_and_role_from_the_install(installed):
    listed = installed.run("ansible-doc", "-t", "module", "-l", "gpuops.cluster", "--json").document
    assert sorted(listed) == _fqcn(MODULES)
    docs = installed.run("ansible-doc", "--json", *_fqcn(MODULES)).document
    assert sorted(name for name, doc in docs.items() if doc["doc"]["short_description"] and doc["examples"]) == _fqcn(MODULES)
    roles = installed.run("ansible-doc", "-t", "role", "-l", "gpuops.cluster", "--json").document
    assert sorted(roles) == _fqcn(ROLES)
    role = installed.run("ansible-doc", "-t", "role", "--json", "gpuops.cluster.gpu_network").document["gpuops.cluster.gpu_network"]
    assert role["path"].startswith(installed.collections) and role["entry_points"]["main"]["options"]
    for kind, name in (("lookup", "pinned"), ("filter", "gpu_node_labels")):
        assert installed.run("ansible-doc", "-t", kind, "--json", "gpuops.cluster." + name).document


def test_the_pinned_lookup_reads_the_installed_versions_file(installed):
    done = installed.run("ansible", "localhost", "-m", "ansible.builtin.debug", "-a",
                         "msg={{ lookup('gpuops.cluster.pinned', 'mpi_operator') }}", json_output=True)
    assert done.rc == 0, done.explain()
    assert done.result("ansible.builtin.debug")["msg"] == pinned("mpi_operator")


def test_the_production_skeleton_copied_from_the_install_is_refused_before_anything_changes(installed, tmp_path):
    inventory = str(tmp_path / "prod")
    shutil.copytree(os.path.join(installed.collection_dir, "inventories", "prod"), inventory)
    syntax = installed.run("ansible-playbook", "-i", inventory, "gpuops.cluster.site", "--syntax-check")
    assert syntax.rc == 0, syntax.explain()
    done = installed.run("ansible-playbook", "-i", inventory, "gpuops.cluster.site", "--check", json_output=True)
    assert done.rc != 0
    # The installed action plugin refuses it (tests/unit/test_install_files.py holds the lines to their words).
    failed = dict((host, [line.split(":")[0] for line in result["problems"]]) for task, host, result in done.tasks()
                  if result.get("failed") and task == CHECK_TASK)
    assert failed == {"gpu-node-01": ["ansible_host"], "gpu-node-02": ["ansible_host"],
                      "localhost": ["mpijob_launcher_image"]}, done.explain()
    assert set(task for task, _host, _result in done.tasks()) == {CHECK_TASK}


def _lab_values_from_the_checkout():
    """The lab inventory's values that the checkout's tools work out, from paths relative to its playbooks (an
    installed playbook's folder has no tools beside it), worked out once by the checkout's Ansible."""
    names = []
    for path in glob.glob(os.path.join(LAB_INVENTORY, "group_vars", "**", "*.yml"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            names += [name for name, value in (yaml.safe_load(handle) or {}).items() if "playbook_dir" in str(value)]
    template = "{{ {%s} }}" % ", ".join("'%s': %s" % (name, name) for name in names)
    done = run([program("ansible"), "localhost", "-i", LAB_INVENTORY, "--playbook-dir", os.path.join(REPO_ROOT, "playbooks"),
                "-m", "ansible.builtin.debug", "-a", "msg=" + template], env=ansible_env(ANSIBLE_LOAD_CALLBACK_PLUGINS=1))
    assert done.rc == 0, done.explain()
    return done.result("ansible.builtin.debug")["msg"]


def test_site_in_check_mode_from_the_install_against_the_lab_fails_nowhere(installed, second_run):
    """The cluster stages and the verification: the nodes stage, over SSH, would double the time for what molecule
    runs from the checkout, and every file of the node roles is in the tarball (the first test)."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    values = _lab_values_from_the_checkout()
    done = installed.run("ansible-playbook", "-i", LAB_INVENTORY, "gpuops.cluster.site", "--check", "--skip-tags", "nodes",
                         "-e", json.dumps(values), json_output=True, TMPDIR=os.path.join(LAB_DIR, "tmp"))
    stats = done.document["stats"]
    assert done.rc == 0, done.explain()
    assert sorted(stats) == ["localhost", "node1", "node2"], stats
    assert not [host for host, counts in stats.items() if counts["unreachable"] or counts["failures"]], stats
    # Every play and role came from the install, none from this checkout.
    paths = set(task["task"]["path"].rsplit(":", 1)[0] for play in done.document["plays"] for task in play["tasks"]
                if task["task"].get("path"))
    assert paths and not [path for path in paths if not path.startswith(installed.collections + os.sep)], paths
    sys.stderr.write("site.yml --check from the install: %.0f s, %s\n" % (done.seconds, stats))
