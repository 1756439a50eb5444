# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one error type of the training package."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class TrainingReportError(Exception):
    """Bad input or a log that cannot be judged; the message says what was expected. library names
    a missing Python library, for the module to report with Ansible's usual wording."""

    def __init__(self, message, library=None):
        super(TrainingReportError, self).__init__(message)
        self.library = library


def quote_line(text, limit=160):
    """A log line as it can be shown in a message: repr-quoted, long ones cut."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)
