# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role cases' module server runs a script as Python does: the same output, exit status and surroundings."""

import os
import subprocess
import sys
import textwrap

import pytest

from gpuops_testlib import module_server

SCRIPT = textwrap.dedent("""\
    import atexit, os, sys
    atexit.register(lambda: print("atexit ran"))
    print("argv", sys.argv[1:], "path0", sys.path[0] == os.path.dirname(os.path.realpath(sys.argv[0])) or sys.path[0])
    print("cwd", os.getcwd(), "umask", oct(os.umask(0o22)), "variable", os.environ.get("CASE_VARIABLE"))
    print("to stderr", file=sys.stderr)
    how = os.environ["CASE_END"]
    if how == "exit":
        sys.exit(3)
    if how == "message":
        sys.exit("stopped with a message")
    if how == "raise":
        raise ValueError("no good")
    print("fell off the end")
""")


@pytest.fixture(scope="module")
def client():
    with module_server.serving(dict(os.environ)) as path:
        yield path


def run(python, tmp_path, end, stdin_script=False):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, CASE_VARIABLE="set for this run", CASE_END=end)
    argv = [python] if stdin_script else [python, str(script)]
    done = subprocess.run(argv, input=SCRIPT if stdin_script else "", cwd=str(tmp_path), env=env, text=True,
                          capture_output=True, timeout=60, preexec_fn=lambda: os.umask(0o027), check=False)
    return done.returncode, done.stdout, done.stderr.replace(str(script), "SCRIPT")


@pytest.mark.parametrize("stdin_script", [False, True], ids=["file", "stdin"])
@pytest.mark.parametrize("end", ["exit", "message", "raise", "end"])
def test_a_script_runs_on_the_server_as_under_python(client, tmp_path, end, stdin_script):
    on_server = run(client, tmp_path, end, stdin_script)
    under_python = run(sys.executable, tmp_path, end, stdin_script)
    assert on_server == under_python
    assert "atexit ran" in on_server[1] and "to stderr" in on_server[2]


def test_other_command_lines_run_python_itself(client):
    done = subprocess.run([client, "-c", "import sys; print(sys.argv)", "word"], capture_output=True, text=True,
                          check=False)
    assert (done.returncode, done.stdout) == (0, "['-c', 'word']\n")


def test_the_runs_fork_from_the_server_that_has_imported_basic(client):
    check = "import sys; print('ansible.module_utils.basic' in sys.modules)"
    on_server = subprocess.run([client], input=check, capture_output=True, text=True, check=True)
    under_python = subprocess.run([sys.executable], input=check, capture_output=True, text=True, check=True)
    assert (on_server.stdout, under_python.stdout) == ("True\n", "False\n")
