# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The end of a job's output file, read on the login host.

Slurm writes the file on the job's first node: the login host sees it through the filesystem they share, and
only once the job has started there.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os

_BLOCK = 65536
# Lines of the output a failure's message quotes; the task result carries the whole tail.
MESSAGE_LINES = 15


def tail(path, lines):
    """(the last `lines` lines of the file, or all of it for 0; None and why when it cannot be read)."""
    try:
        with io.open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            start = size
            data = b""
            # Read backwards only as far as the lines asked for: an NCCL_DEBUG=INFO output runs to megabytes.
            while start > 0 and (lines == 0 or data.count(b"\n") <= lines):
                start = max(0, start - _BLOCK)
                handle.seek(start)
                data = handle.read(size - start)
    except (IOError, OSError) as error:
        return None, "cannot read {0}: {1}".format(path, getattr(error, "strerror", None) or error)
    text = data.decode("utf-8", "replace")
    kept = text.splitlines()
    if lines:
        kept = kept[-lines:]
    return "\n".join(kept), None


def quoted_end(text, lines=MESSAGE_LINES):
    """The last lines of an output's tail, joined on one line for a message."""
    return " | ".join((text or "").splitlines()[-lines:])
