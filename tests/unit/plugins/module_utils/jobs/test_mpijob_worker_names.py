# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The launcher's wait for its workers' names, run in sh. getent is a stand-in that answers from a file, so
that a name can be made to resolve late or never; sh, date and sleep are the machine's own."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess
import time

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import wait_for_workers_script

# Writes each lookup to $LOOKUPS. Resolves a name listed in $RESOLVABLE; a name listed in $LATE resolves from its second lookup on.
GETENT = """#!/bin/sh
echo "$2" >> "$LOOKUPS"
grep -qx "$2" "$RESOLVABLE" && exit 0
if grep -qx "$2" "$LATE"; then
  [ -e "$LATE.$2" ] && exit 0
  touch "$LATE.$2"
fi
exit 2
"""


def run_wait(tmp_path, resolvable=(), late=(), with_getent=True, seconds=2):
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("sh", "date", "sleep", "grep", "touch"):
        os.symlink(shutil.which(tool), str(tools / tool))
    if with_getent:
        (tools / "getent").write_text(GETENT)
        (tools / "getent").chmod(0o755)
    (tmp_path / "resolvable").write_text("".join(name + "\n" for name in resolvable))
    (tmp_path / "late").write_text("".join(name + "\n" for name in late))
    env = {"PATH": str(tools), "JOB": "bench", "WORKERS": "2",
           "RESOLVABLE": str(tmp_path / "resolvable"), "LATE": str(tmp_path / "late"),
           "LOOKUPS": str(tmp_path / "lookups")}
    started = time.monotonic()
    done = subprocess.run([str(tools / "sh"), "-c", wait_for_workers_script(seconds)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False, timeout=30)
    took = time.monotonic() - started
    lookups = (tmp_path / "lookups").read_text().split() if with_getent else []
    return done.returncode, done.stdout.decode(), lookups, took


W0, W1 = "bench-worker-0.bench", "bench-worker-1.bench"


def test_names_that_resolve_let_mpirun_start_at_once(tmp_path):
    code, output, lookups, _took = run_wait(tmp_path, resolvable=[W0, W1])
    assert (code, output, lookups) == (0, "", [W0, W1])


def test_a_name_that_resolves_late_is_asked_for_again_a_second_later(tmp_path):
    code, output, lookups, took = run_wait(tmp_path, resolvable=[W0], late=[W1])
    assert (code, output, lookups) == (0, "", [W0, W1, W1])
    assert took >= 1


def test_a_name_that_never_resolves_is_named_at_the_deadline_and_mpirun_reports_the_rest(tmp_path):
    code, output, lookups, took = run_wait(tmp_path, resolvable=[W1], seconds=2)
    assert (code, output) == (0, W0 + " does not resolve after 2 s\n")
    assert set(lookups) == {W0} and len(lookups) >= 2
    assert 1 <= took < 10


def test_an_image_without_getent_is_not_held_up(tmp_path):
    code, output, _lookups, took = run_wait(tmp_path, with_getent=False, seconds=30)
    assert (code, output) == (0, "")
    assert took < 5
