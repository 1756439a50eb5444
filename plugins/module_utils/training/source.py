# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The log's physical lines, from the file at src or from the content string, one at a time."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError


def log_name(options):
    """How messages name the log: its path, or 'content'."""
    return "content" if options.get("content") is not None else options.get("src")


def open_log(options):
    """A text stream of the log with universal newlines, decoded as strict UTF-8 (see checked_lines)."""
    if options.get("content") is not None:
        return io.StringIO(options["content"], newline=None)
    path = options.get("src")
    if not path:
        raise TrainingReportError("one of src (a log file) or content (the log itself) is required")
    if not os.path.exists(path):
        raise TrainingReportError("src: %s does not exist; expected the benchmark's log file" % path)
    if os.path.isdir(path):
        raise TrainingReportError("src: %s is a directory; expected the benchmark's log file" % path)
    try:
        return io.open(path, "r", encoding="utf-8", errors="strict", newline=None)
    except (IOError, OSError) as error:
        raise TrainingReportError("src: cannot read %s: %s" % (path, error))


def checked_lines(stream, name):
    """The stream's lines, refusing a binary file (a NUL byte) or one that is not UTF-8 with an error
    that names the file and the line, rather than judging garbage."""
    number = 0
    try:
        for number, line in enumerate(stream, 1):
            if "\x00" in line:
                raise TrainingReportError("%s: line %d holds a NUL byte: this is a binary file, not a training log"
                                          % (name, number))
            yield line
    except UnicodeDecodeError as error:
        raise TrainingReportError("%s is not UTF-8 text (a binary or compressed file?): after line %d, %s"
                                  % (name, number, error))
    except (IOError, OSError) as error:
        raise TrainingReportError("%s: cannot read after line %d: %s" % (name, number, error))
