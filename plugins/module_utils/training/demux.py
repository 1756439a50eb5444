# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Launcher output into logical lines, one physical line at a time.

``mpirun --tag-output`` prefixes what a rank writes with ``[jobid,rank]<stream>:``; ``horovodrun --gloo``
with ``[rank]<stream>:``, optionally after a ``time.asctime()`` stamp. Open MPI forwards each write as it
comes: a line printed in three writes arrives under three tags, often with another rank's output between
them on the same physical line. The pieces of each rank's stream are joined here, keeping only the pieces
still waiting for their newline, so that a log of any length streams through.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import re

# The tag can start anywhere in a physical line: OpenMPI forwards a write that has no newline as it
# is, so the next tag is glued to it.
_TAG = re.compile(
    r"(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})?"
    r"\[(?:\d+,)?(\d+)\]<(stdout|stderr|stddiag)>:"
)


class LogLine(object):
    """One logical line of output and the rank (None when untagged) that printed it."""

    __slots__ = ("number", "rank", "stream", "text", "partial")

    def __init__(self, number, rank, stream, text, partial=False):
        self.number = number
        self.rank = rank
        self.stream = stream
        self.text = text
        self.partial = partial

    def __repr__(self):
        return "LogLine(%r, %r, %r)" % (self.rank, self.stream, self.text)


def logical_lines(physical_lines):
    """Yield (line number, rank, stream, text, partial) for every logical line of the physical lines
    given (an open file, or any iterable of strings that end in a newline but perhaps the last).

    Tuples rather than objects: a long run's log has millions of lines. The line number is that of the
    physical line where the logical one ended; a piece still waiting for its newline when the log ends is
    yielded last with partial True.
    """
    pending = {}
    number = 0
    for number, physical in enumerate(physical_lines, 1):
        ended = physical.endswith("\n")
        if ended:
            physical = physical[:-1]
        if "]<" not in physical:
            # After a newline, text up to the next tag was printed by the launcher (or a shell).
            if physical.strip():
                yield number, None, None, physical, False
            continue
        tags = list(_TAG.finditer(physical))
        if not tags:
            if physical.strip():
                yield number, None, None, physical, False
            continue
        head = physical[:tags[0].start()]
        if head.strip():
            yield number, None, None, head, False
        last = len(tags) - 1
        for index, tag in enumerate(tags):
            owner = (int(tag.group(1)), tag.group(2))
            end = tags[index + 1].start() if index < last else len(physical)
            piece = physical[tag.end():end]
            if index < last or not ended:
                pending[owner] = pending.pop(owner, "") + piece
            else:
                yield number, owner[0], owner[1], pending.pop(owner, "") + piece, False
    for owner, piece in pending.items():
        if piece.strip():
            yield number, owner[0], owner[1], piece, True


def demultiplex(text):
    """The logical lines of a whole text, as LogLine objects (for tests and small logs)."""
    return [LogLine(*line) for line in logical_lines(io.StringIO(text, newline=None))]
