# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection as a user installs it, apart from the development virtualenv and this checkout: the tarball
`ansible-galaxy collection build` makes of the checkout's files, installed beside the collections of
requirements.yml, run from a new virtualenv holding requirements-controller.txt alone.

Galaxy is out of reach from the test machines, so each collection requirements.yml names is installed from the
copy the development virtualenv's ansible package bundles, of the version it pins. The controller's wheels are
built once per version of requirements-controller.txt, under the cache.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig

import yaml

from gpuops_testlib.ansible_run import CACHE_ROOT, JSON_CALLBACK, REPO_ROOT, AnsibleRun, run

CONTROLLER_REQUIREMENTS = os.path.join(REPO_ROOT, "requirements-controller.txt")
COLLECTION_REQUIREMENTS = os.path.join(REPO_ROOT, "requirements.yml")
# The ansible package's collections, in the virtualenv running the tests.
BUNDLED_COLLECTIONS = os.path.join(sysconfig.get_paths()["purelib"], "ansible_collections")


def collection_requirements():
    """{name: version} of requirements.yml."""
    with open(COLLECTION_REQUIREMENTS, encoding="utf-8") as handle:
        return dict((entry["name"], str(entry["version"])) for entry in yaml.safe_load(handle)["collections"])


def bundled_version(name):
    """The version of the collection the ansible package bundles, or None."""
    manifest = os.path.join(BUNDLED_COLLECTIONS, *name.split(".") + ["MANIFEST.json"])
    if not os.path.exists(manifest):
        return None
    with open(manifest, encoding="utf-8") as handle:
        return json.load(handle)["collection_info"]["version"]


def controller_wheels():
    """A folder of wheels of requirements-controller.txt, made once per version of that file."""
    with open(CONTROLLER_REQUIREMENTS, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()[:16]
    folder = os.path.join(CACHE_ROOT, "controller-wheels", digest)
    if not os.path.exists(os.path.join(folder, ".complete")):
        staging = "%s.%d" % (folder, os.getpid())
        shutil.rmtree(staging, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", staging, "-r",
                        CONTROLLER_REQUIREMENTS], check=True)
        with open(os.path.join(staging, ".complete"), "w", encoding="utf-8"):
            pass
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(staging, folder)
    return folder


class Installed:
    """One install under root: the controller's virtualenv (root/venv), the collections (root/collections) and an
    ansible.cfg naming only those (root/ansible.cfg); the files built (root/source) and what each step printed."""

    def __init__(self, root):
        self.root = str(root)
        self.venv = os.path.join(self.root, "venv")
        self.collections = os.path.join(self.root, "collections")
        self.source = os.path.join(self.root, "source")
        self.tarball = None
        self.steps = []

    @property
    def collection_dir(self):
        return os.path.join(self.collections, "ansible_collections", "gpuops", "cluster")

    def program(self, name):
        return os.path.join(self.venv, "bin", name)

    def env(self, json_output=False, **settings):
        """An environment that knows nothing of this checkout: no ANSIBLE_* or PYTHONPATH of the caller, this
        install's ansible.cfg, and its virtualenv first on PATH."""
        env = dict((name, value) for name, value in os.environ.items()
                   if not name.startswith(("ANSIBLE_", "K8S_AUTH_")) and name not in ("PYTHONPATH", "KUBECONFIG",
                                                                                      "VIRTUAL_ENV"))
        env.update(ANSIBLE_CONFIG=os.path.join(self.root, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   PATH=os.path.join(self.venv, "bin") + os.pathsep + env["PATH"])
        if json_output:
            env.update(ANSIBLE_STDOUT_CALLBACK=JSON_CALLBACK, ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
        env.update((name, str(value)) for name, value in settings.items())
        return env

    def run(self, name, *args, **kwargs):
        """One of the install's programs to its end (an AnsibleRun), from the repository root."""
        json_output = kwargs.pop("json_output", False)
        return run([self.program(name)] + [str(arg) for arg in args], env=self.env(json_output, **kwargs),
                   timeout=900, result_class=AnsibleRun)

    def _step(self, name, *args):
        done = self.run(name, *args)
        self.steps.append(done)
        if done.rc != 0:
            raise AssertionError("%s failed (rc=%s):\n%s\n%s" % (
                " ".join(done.argv), done.rc, done.stdout[-3000:], done.stderr[-3000:]))
        return done

    def install(self):
        """Every step a user takes, in order; returns self."""
        subprocess.run([sys.executable, "-m", "venv", self.venv], check=True)
        # Compiled are only the packages every run imports (Ansible, and the kubernetes client in each module run on
        # the controller): the rest takes longer to compile than its few imports do.
        self._step("pip", "install", "--quiet", "--no-compile", "--no-index", "--find-links", controller_wheels(),
                   "-r", CONTROLLER_REQUIREMENTS)
        site = sysconfig.get_paths(vars={"base": self.venv, "platbase": self.venv})["purelib"]
        self._step("python", "-m", "compileall", "-q", "-j", "0", os.path.join(site, "ansible"),
                   os.path.join(site, "kubernetes"))
        with open(os.path.join(self.root, "ansible.cfg"), "w", encoding="utf-8") as handle:
            handle.write("[defaults]\ncollections_path = %s\ncollections_scan_sys_path = False\n" % self.collections)
        self._step("ansible-galaxy", "collection", "install", "-r", self._dependency_requirements())
        built = os.path.join(self.root, "built")
        self._step("ansible-galaxy", "collection", "build", self._snapshot(), "--output-path", built)
        self.tarball = glob.glob(os.path.join(built, "gpuops-cluster-*.tar.gz"))[0]
        # Its dependencies, from galaxy.yml, are found installed; --offline, as the README's route without Galaxy
        # gives it, makes sure that nothing is fetched.
        self._step("ansible-galaxy", "collection", "install", "--offline", self.tarball)
        return self

    def _snapshot(self):
        """The files git knows about (tracked, or untracked and not ignored), copied as a fresh clone would have them:
        the build reads a tree that nothing edits meanwhile."""
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                               capture_output=True, check=True).stdout
        subprocess.run(["rsync", "-a", "--ignore-missing-args", "--from0", "--files-from=-", "./", self.source + "/"],
                       cwd=REPO_ROOT, input=files, check=True)
        return self.source

    def _dependency_requirements(self):
        """requirements.yml as a file of local folders: the bundled copies (tests/unit/test_install_files.py holds
        them to the versions it pins)."""
        path = os.path.join(self.root, "dependencies.yml")
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump({"collections": [{"name": os.path.join(BUNDLED_COLLECTIONS, *name.split(".")), "type": "dir"}
                                            for name in sorted(collection_requirements())]}, handle)
        return path
