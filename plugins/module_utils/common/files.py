# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Files written whole: whether a write would change anything, and an atomic replace with a given mode.

A reader never sees half a file: the content goes to a temporary file in the same folder, which then takes the
file's place in one rename.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

# Readable by all: the reports and charts a person opens.
DEFAULT_MODE = 0o644


def file_state(path, content, mode=DEFAULT_MODE):
    """(changed, previous bytes or None) for writing content with mode at path."""
    try:
        with open(path, "rb") as handle:
            previous = handle.read()
    except (IOError, OSError):
        return True, None
    if previous != content:
        return True, previous
    return (os.stat(path).st_mode & 0o7777) != mode, previous


def write_file(path, content, mode=DEFAULT_MODE):
    """Replace path atomically with content (bytes), then set mode; the folder must exist."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.chmod(temporary, mode)
        os.rename(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
