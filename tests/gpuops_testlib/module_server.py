# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module runs of the role cases forked from one Python that has already imported ansible.module_utils.basic.

A module run of a case host (connection local) starts Python, which imports ansible.module_utils.basic and
what it needs before the module's own code runs: about 170 ms of CPU for an ansible.builtin.stat, nearly
all of it start-up, paid again by every run. serving() starts this file as a server for the length of
one ansible-playbook run and gives the path of a client script, the hosts' ansible_python_interpreter.
The server imports ansible.module_utils.basic once, then forks a child for each run (about 35 ms with the
client): the child takes the client's standard streams, arguments, environment, working directory and
umask, runs the AnsiballZ file (or, pipelined, the script on stdin) as Python runs a script, ends as
Python does (threads, atexit, flushing) and sends back its exit status, with which the client exits.
The module and every module_utils it imports beyond basic come from its AnsiballZ payload as in any
run; basic comes from the installed ansible-core, the one the controller packs from. The client runs
Python itself for any other command line, or when the server cannot be reached.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import gc
import marshal
import os
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback

CLIENT = """\
#!{python} -IS
# The case hosts' Python: hands an AnsiballZ run to {server} (see there), or runs Python itself.
import _socket, marshal, os, sys

PYTHON = {python!r}


def run_on_server():
    try:
        server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        server.connect({socket_path!r})
        umask = os.umask(0)
        os.umask(umask)
        request = marshal.dumps((sys.argv[1:], dict(os.environb), os.getcwd(), umask))
    except OSError:
        return None
    streams = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    server.sendmsg([len(request).to_bytes(4, "big")], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, streams)])
    server.sendall(request)
    reply = b""
    while True:
        chunk = server.recv(16)
        if not chunk:
            break
        reply += chunk
    if not reply:
        os.write(2, b"module server: the run ended without an exit status\\n")
        return 1
    return int(reply)


if len(sys.argv) <= 2 and not sys.argv[-1].startswith("-"):
    status = run_on_server()
    if status is not None:
        os._exit(status)
os.execv(PYTHON, [PYTHON] + sys.argv[1:])
"""


@contextlib.contextmanager
def serving(env):
    """Run the server with this environment; yields the client's path (an ansible_python_interpreter)."""
    folder = tempfile.mkdtemp(prefix="gpuops-modules-")
    socket_path = os.path.join(folder, "server.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server = None
    try:
        # Listening before the server starts: a run that comes while it imports waits in the backlog.
        listener.bind(socket_path)
        listener.listen(256)
        client = os.path.join(folder, "python")
        with open(client, "w", encoding="utf-8") as handle:
            handle.write(CLIENT.format(python=sys.executable, server=os.path.abspath(__file__),
                                       socket_path=socket_path))
        os.chmod(client, 0o755)
        with open(os.path.join(folder, "server.log"), "wb") as log:
            server = subprocess.Popen([sys.executable, os.path.abspath(__file__), str(listener.fileno())],
                                      env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                      pass_fds=[listener.fileno()])
        listener.close()
        yield client
    finally:
        listener.close()
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _receive(connection, size):
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError("the client left")
        data += chunk
    return data


def _run_script(argv):
    """Run argv[0] as `python argv...` would (no argv: the script on stdin), to its exit status."""
    status = 0
    try:
        if argv:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.realpath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
        else:
            sys.argv = [""]
            sys.path[0] = ""
            main = sys.modules["__main__"] = type(sys)("__main__")
            main.__builtins__ = builtins
            code = compile(sys.stdin.buffer.read(), "<stdin>", "exec", dont_inherit=True)
            exec(code, main.__dict__)  # pylint: disable=exec-used
    except SystemExit as exit_request:
        if exit_request.code is None:
            status = 0
        elif isinstance(exit_request.code, int):
            status = exit_request.code
        else:
            print(exit_request.code, file=sys.stderr)
            status = 1
    except BaseException as error:  # pylint: disable=broad-except
        # The traceback from the script's own frame on, as Python prints it.
        frames = error.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename != (argv[0] if argv else "<stdin>"):
            frames = frames.tb_next
        error = error.with_traceback(frames or error.__traceback__)
        sys.excepthook(type(error), error, error.__traceback__)
        status = 1
    # Python's own ending: wait for threads, run atexit functions, flush the streams.
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()  # pylint: disable=protected-access
    atexit._run_exitfuncs()  # pylint: disable=protected-access
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        status = 120
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    return status & 0xFF


def _child(connection):
    """One run, in a child of the server: never returns."""
    status = 1
    try:
        header, streams, _flags, _address = socket.recv_fds(connection, 4, 3)
        header += _receive(connection, 4 - len(header))
        argv, environment, cwd, umask = marshal.loads(_receive(connection, int.from_bytes(header, "big")))
        for target, stream in enumerate(streams):
            os.dup2(stream, target)
            if stream > 2:
                os.close(stream)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.environb.clear()
        os.environb.update(environment)
        import locale  # pylint: disable=import-outside-toplevel
        with contextlib.suppress(locale.Error):
            locale.setlocale(locale.LC_CTYPE, "")
        os.chdir(cwd)
        os.umask(umask)
        status = _run_script(argv)
    except BaseException:  # pylint: disable=broad-except
        # To the run's stderr once it is in place, else to the server's log.
        traceback.print_exc()
    finally:
        with contextlib.suppress(OSError):
            connection.sendall(b"%d" % status)
        os._exit(status)  # pylint: disable=protected-access


def _reap(_signum=None, _frame=None):
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _stop(_signum, _frame):
    # Waiting for the children keeps their CPU time in this process's (and so the test run's) accounts.
    with contextlib.suppress(ChildProcessError):
        while True:
            os.waitpid(-1, 0)
    os._exit(0)  # pylint: disable=protected-access


def serve(listener_fd):
    """Import what every module run imports, then fork a child for each connection."""
    # What the AnsiballZ wrapper imports. pylint: disable=import-outside-toplevel,unused-import
    import base64
    import datetime
    import zipfile
    import ansible.module_utils.basic
    import ansible.module_utils._internal._ansiballz._loader
    # pylint: enable=import-outside-toplevel,unused-import
    listener = socket.socket(fileno=listener_fd)
    signal.signal(signal.SIGCHLD, _reap)
    signal.signal(signal.SIGTERM, _stop)
    # Objects from here on are shared with every child: keep the collector from touching (copying) them.
    gc.collect()
    gc.freeze()
    while True:
        connection, _address = listener.accept()
        if os.fork() == 0:
            listener.close()
            _child(connection)
        connection.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
