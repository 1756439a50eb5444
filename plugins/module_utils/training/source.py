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
    """A text stream of the log with universal newlines, decoded as strict UTF-8 (see decode_error)."""
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


def binary_error(name, number):
    """A NUL byte: a binary file, refused rather than judged as garbage."""
    return TrainingReportError("%s: line %d holds a NUL byte: this is a binary file, not a training log" % (name, number))


def decode_error(name, number, error):
    """Strict UTF-8 decoding failed somewhere after line number (the decoder reads ahead)."""
    return TrainingReportError("%s is not UTF-8 text (a binary or compressed file?): after line %d, %s" % (name, number, error))
