# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compiled module code kept between Ansible module runs of the tests, and ansible-playbook's workers run
without the garbage collector (Python loads this file at start-up in every process of a role-case run).

Every Ansible module run unpacks its AnsiballZ payload into a fresh temporary zip and imports
ansible.module_utils from there; zipimport never caches compiled code, so each run compiles the same
sources again (about half of a module's start-up). role_cases puts this folder on PYTHONPATH, and
zipimport's compile step then reads the code from GPUOPS_MODULE_CODE_CACHE, keyed by the Python version
and a digest of the source, so an unchanged source is compiled once. Anything else Python imports is
untouched; if zipimport lacks the hook (another Python), nothing changes.

ansible-playbook forks a worker for every task of every host; the worker runs that one task and exits.
A collection in a worker walks the objects it shares with the controller and so copies their memory
pages, which cost more than the cycles it could free: the workers run with the collector off. The
controller and every other process keep theirs.
"""

import gc
import hashlib
import marshal
import os
import sys
import zipimport


def _install(cache_dir):
    # zipimport's own compile step (CPython 3.8 to 3.13); the only way in without replacing zipimport.
    compile_source = getattr(zipimport, "_compile_source", None)
    if compile_source is None or not cache_dir:
        return
    cache_dir = os.path.join(cache_dir, sys.implementation.cache_tag)

    def cached_compile(pathname, source):
        path = os.path.join(cache_dir, hashlib.sha256(source).hexdigest())
        try:
            with open(path, "rb") as handle:
                return marshal.load(handle)
        except (OSError, EOFError, ValueError, TypeError):
            pass
        code = compile_source(pathname, source)
        try:
            os.makedirs(cache_dir, exist_ok=True)
            partial = "%s.%d" % (path, os.getpid())
            with open(partial, "wb") as handle:
                marshal.dump(code, handle)
            os.replace(partial, path)
        except OSError:
            pass
        return code

    zipimport._compile_source = cached_compile  # pylint: disable=protected-access


_install(os.environ.get("GPUOPS_MODULE_CODE_CACHE"))
if os.path.basename(sys.argv[0] if sys.argv else "") == "ansible-playbook":
    os.register_at_fork(after_in_child=gc.disable)
