# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What explains a failed lab test, copied out before the lab is taken down: the lab's stage logs and training
logs, the test's own training logs (under its tmp_path), and every pod's log, the pods' list and the events
from the lab's API. The copy lands under .build/kept/<test> in the checkout, which the test command names at
its end; the lab itself is torn down at the session's end as before, so nothing but these files survives."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT

KEPT_ROOT = os.path.join(REPO_ROOT, ".build", "kept")
LAB_DIR = os.path.join(CACHE_ROOT, "lab")
# The lab's own logs: one per stage of make lab, and the training logs and reports of its launchers.
LAB_LOG_DIRS = ("logs", "training")
# A test's scratch folder holds caches and images too; only what a person reads is copied from it.
READABLE = (".log", ".json", ".txt", ".yml", ".yaml", ".out", ".err", ".csv")
LARGEST_COPIED = 20 * 1024 * 1024
KUBECTL_SECONDS = 30


def kept_dir(test_id):
    """The folder a failed test's files are copied to: its id with the characters a path cannot hold replaced."""
    return os.path.join(KEPT_ROOT, re.sub(r"[^\w.=-]+", "_", test_id).strip("_")[:150])


def keep_what_explains(test_id, scratch=None, kubectl=None):
    """Copy the lab's logs, scratch's readable files and (with kubectl, the lab's) every pod's log, the pods and
    the events into kept_dir(test_id); returns that folder. A part that cannot be read is noted in
    not-kept.txt there instead of stopping the rest."""
    target = kept_dir(test_id)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    missed = []
    for name in LAB_LOG_DIRS:
        source = os.path.join(LAB_DIR, name)
        if os.path.isdir(source):
            _copy_readable(source, os.path.join(target, "lab", name))
    if scratch is not None and os.path.isdir(str(scratch)):
        _copy_readable(str(scratch), os.path.join(target, "tmp_path"))
    if kubectl is not None:
        missed.extend(_keep_from_api(kubectl, os.path.join(target, "api")))
    if missed:
        _write(os.path.join(target, "not-kept.txt"), "\n".join(missed) + "\n")
    return target


def _copy_readable(source, target):
    for folder, _dirs, files in os.walk(source):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(READABLE) or os.path.islink(path) or os.path.getsize(path) > LARGEST_COPIED:
                continue
            copy = os.path.join(target, os.path.relpath(path, source))
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            shutil.copyfile(path, copy)


def _keep_from_api(kubectl, target):
    """Pods, events and each pod's log of every container; returns what could not be read."""
    os.makedirs(target, exist_ok=True)
    missed = []
    for name, args in (("pods.txt", ("get", "pods", "-A", "-o", "wide")),
                       ("events.txt", ("get", "events", "-A", "--sort-by=.lastTimestamp"))):
        done = _ask(kubectl, args)
        _write(os.path.join(target, name), done.stdout + done.stderr)
    listed = _ask(kubectl, ("get", "pods", "-A", "-o", "json"))
    if listed.returncode != 0:
        return ["the pods' logs: kubectl get pods failed: " + listed.stderr.strip()[-500:]]
    for pod in json.loads(listed.stdout)["items"]:
        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        done = _ask(kubectl, ("logs", "-n", namespace, name, "--all-containers", "--prefix", "--timestamps"))
        if done.returncode != 0:
            missed.append("%s/%s: %s" % (namespace, name, done.stderr.strip()[-300:]))
        _write(os.path.join(target, "logs", namespace, name + ".log"), done.stdout)
    return missed


def _ask(kubectl, args):
    try:
        return kubectl(*args, "--request-timeout=%ds" % KUBECTL_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return subprocess.CompletedProcess(args, 1, "", str(error))


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
