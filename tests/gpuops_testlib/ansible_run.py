# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run ansible-playbook (or ansible) with this checkout as gpuops.cluster, and read what it reports.

With the ansible.posix.json callback the run's document holds every task's result per host, which the
tests assert on; without it (json_output=False) the text output is kept as it is, for the runs a person
would read (tools/lab.sh, the lab playbook).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE_ROOT = os.environ.get("GPUOPS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpuops")
JSON_CALLBACK = "ansible.posix.json"


class AnsibleRunError(RuntimeError):
    """ansible-playbook is missing, or its run cannot be read."""


def program(name="ansible-playbook"):
    """The Ansible program of the virtualenv running this Python, else the one on PATH."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which(name)
    if not found:
        raise AnsibleRunError("%s is not installed next to %s nor on PATH: run tools/bootstrap.sh (it installs "
                              "requirements.txt into .venv) and run from .venv" % (name, sys.executable))
    return found


def link_collection(collections_dir):
    """collections_dir/ansible_collections/gpuops/cluster pointing at this checkout; returns collections_dir."""
    parent = os.path.join(str(collections_dir), "ansible_collections", "gpuops")
    os.makedirs(parent, exist_ok=True)
    link = os.path.join(parent, "cluster")
    if not os.path.islink(link):
        os.symlink(REPO_ROOT, link)
    return str(collections_dir)


def ansible_env(collections_dir=None, json_output=True, path_prefix=None, **settings):
    """The environment of one run: the repository's ansible.cfg, no caller's kubeconfig or K8S_AUTH_*.

    collections_dir: link this checkout there as gpuops.cluster and use only that collection path (else the
    link tools/bootstrap.sh made, named by ansible.cfg). path_prefix: a folder put first on PATH (fake tools).
    settings: more variables, such as ANSIBLE_CACHE_PLUGIN or TMPDIR.
    """
    env = dict(os.environ)
    for name in list(env):
        if name == "KUBECONFIG" or name.startswith("K8S_AUTH_"):
            del env[name]
    env.update(ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_RETRY_FILES_ENABLED="0")
    if collections_dir is not None:
        env["ANSIBLE_COLLECTIONS_PATH"] = link_collection(collections_dir)
    if json_output:
        env["ANSIBLE_STDOUT_CALLBACK"] = JSON_CALLBACK
    if path_prefix:
        env["PATH"] = str(path_prefix) + os.pathsep + env["PATH"]
    env.update((name, str(value)) for name, value in settings.items())
    return env


def playbook_command(playbook, inventory="localhost,", extra_vars=None, options=()):
    """argv of one ansible-playbook run. extra_vars: a dict (passed as JSON), or a list of -e arguments."""
    argv = [program(), "-i", str(inventory), str(playbook)]
    if isinstance(extra_vars, dict):
        argv += ["-e", json.dumps(extra_vars)]
    else:
        for value in extra_vars or ():
            argv += ["-e", str(value)]
    return argv + [str(option) for option in options]


def mode_options(check=False, diff=False, tags=None):
    """The ansible-playbook options for check mode, diffs and tags."""
    return (["--check"] if check else []) + (["--diff"] if diff else []) + (["--tags", tags] if tags else [])


def short_name(task_name):
    """A task's own name, without the "role : " prefix Ansible adds to a role's tasks."""
    return task_name.split(" : ", 1)[-1]


class AnsibleRun:
    """One finished run: return code, output, seconds, and with the JSON callback every task's result."""

    def __init__(self, argv, returncode, stdout, stderr="", seconds=0.0):
        self.argv = argv
        self.rc = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
        self._document = None

    @property
    def output(self):
        return self.stdout + self.stderr

    @property
    def document(self):
        """The JSON callback's document (anything printed before it, such as a warning, is passed over)."""
        if self._document is None:
            start = self.stdout.find("{")
            try:
                self._document = json.loads(self.stdout[start:]) if start >= 0 else None
            except ValueError:
                self._document = None
            if self._document is None:
                raise AnsibleRunError("%s printed no JSON (rc=%s):\n%s\n%s" % (
                    " ".join(self.argv[:4]), self.rc, self.stdout[-3000:], self.stderr[-3000:]))
        return self._document

    def host_stats(self, host="localhost"):
        return self.document.get("stats", {}).get(host, {})

    def tasks(self, host=None):
        """(task name, host, result) of every task result in play order, of one host when given."""
        for play in self.document.get("plays", []):
            for task in play.get("tasks", []):
                for name, result in task.get("hosts", {}).items():
                    if host is None or name == host:
                        yield task["task"]["name"], name, result

    def results(self, name_part, host=None):
        """Results of the tasks whose own name contains name_part, in play order."""
        return [result for name, _host, result in self.tasks(host) if name_part in short_name(name)]

    def result(self, name, host=None):
        """The last result of the task with this own name; fails naming the tasks there were."""
        found = [result for task, _host, result in self.tasks(host) if short_name(task) == name]
        if not found:
            raise AssertionError("no task named %r in %s" % (name, [short_name(task) for task, _h, _r in self.tasks(host)]))
        return found[-1]

    def failed(self, host=None):
        """(own task name, result) of every failed task."""
        return [(short_name(name), result) for name, _host, result in self.tasks(host) if result.get("failed")]

    def changed_tasks(self, host=None):
        return [short_name(name) for name, _host, result in self.tasks(host) if result.get("changed")]

    def messages(self, host=None):
        return [result["msg"] for _name, _host, result in self.tasks(host) if isinstance(result.get("msg"), str)]

    def explain(self, host=None):
        """Return code, the failed tasks' messages and the stderr's tail, for assertion messages."""
        try:
            failed = [(name, result.get("msg")) + _log_tails(result) for name, result in self.failed(host)]
        except AnsibleRunError:
            failed = self.stdout[-4000:]
        return "rc=%s after %.0f s: %s\nfailed: %s\nstderr: %s" % (
            self.rc, self.seconds, " ".join(self.argv[2:])[:600], failed, self.stderr[-2000:])


def _log_tails(result):
    """The last lines of every job log a failed result carries (e.g. launcher_log), which say why."""
    return tuple("{0}: ...{1}".format(key, value[-1500:]) for key, value in sorted(result.items())
                 if key.endswith("_log") and isinstance(value, str) and value)


def run(argv, env=None, timeout=900, merge_output=False, result_class=AnsibleRun):
    """Run an Ansible command (or any command) from the repository root to its end."""
    started = time.monotonic()
    process = subprocess.run(argv, cwd=REPO_ROOT, env=env if env is not None else ansible_env(), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_output else subprocess.PIPE,
                             check=False, timeout=timeout)
    return result_class(argv, process.returncode, process.stdout, process.stderr or "", time.monotonic() - started)


def run_playbook(playbook, inventory="localhost,", extra_vars=None, options=(), env=None, timeout=900,
                 result_class=AnsibleRun):
    """ansible-playbook to its end; with the default environment, its JSON document is in the result
    (an AnsibleRun, or the subclass a test gives as result_class)."""
    return run(playbook_command(playbook, inventory, extra_vars, options), env=env, timeout=timeout,
               result_class=result_class)


def checked(done):
    """done, when ansible-playbook succeeded; else AnsibleRunError saying which tasks failed and why."""
    if done.rc != 0:
        raise AnsibleRunError(done.explain())
    return done


def start_playbook(playbook, inventory="localhost,", extra_vars=None, options=(), env=None):
    """ansible-playbook started and left running (for a test that acts while it waits); see finish()."""
    argv = playbook_command(playbook, inventory, extra_vars, options)
    process = subprocess.Popen(argv, cwd=REPO_ROOT, env=env if env is not None else ansible_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return argv, process


def finish(started, timeout, result_class=AnsibleRun):
    """Wait for a run from start_playbook and read it."""
    argv, process = started
    stdout, stderr = process.communicate(timeout=timeout)
    return result_class(argv, process.returncode, stdout, stderr)


def write_play(path, play):
    """Write a playbook of one play (a dict) or several (a list) as YAML; returns the path."""
    with open(str(path), "w", encoding="utf-8") as handle:
        yaml.safe_dump(play if isinstance(play, list) else [play], handle, sort_keys=False)
    return str(path)
