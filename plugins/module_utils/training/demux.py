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


class Demultiplexer(object):
    """Feed physical lines in order; get back the logical lines each one completes, as tuples
    (line number, rank, stream, text, partial): a long run's log has millions of lines. The line number
    is that of the physical line where the logical one ended."""

    def __init__(self):
        # Pieces still waiting for their newline, by (rank, stream), in the order they started.
        self.pending = {}
        self.last_number = 0

    def feed(self, number, physical):
        self.last_number = number
        ended = physical.endswith("\n")
        if ended:
            physical = physical[:-1]
        tags = list(_TAG.finditer(physical)) if "]<" in physical else None
        if not tags:
            # After a newline, text up to the next tag was printed by the launcher (or a shell).
            return [(number, None, None, physical, False)] if physical.strip() else []
        lines = []
        head = physical[:tags[0].start()]
        if head.strip():
            lines.append((number, None, None, head, False))
        last = len(tags) - 1
        pending = self.pending
        for index, tag in enumerate(tags):
            owner = (int(tag.group(1)), tag.group(2))
            end = tags[index + 1].start() if index < last else len(physical)
            piece = physical[tag.end():end]
            if index < last or not ended:
                pending[owner] = pending.pop(owner, "") + piece
            else:
                lines.append((number, owner[0], owner[1], pending.pop(owner, "") + piece, False))
        return lines

    def finish(self):
        """The pieces still waiting for their newline when the log ends, as partial lines."""
        lines = [(self.last_number, owner[0], owner[1], piece, True) for owner, piece in self.pending.items()
                 if piece.strip()]
        self.pending = {}
        return lines


def logical_lines(physical_lines):
    """Every logical line of the physical lines given (an iterable of strings that end in a newline
    but perhaps the last), as Demultiplexer tuples."""
    demultiplexer = Demultiplexer()
    for number, physical in enumerate(physical_lines, 1):
        yield from demultiplexer.feed(number, physical)
    yield from demultiplexer.finish()


def demultiplex(text):
    """The logical lines of a whole text, as LogLine objects (for tests and small logs)."""
    return [LogLine(*line) for line in logical_lines(io.StringIO(text, newline=None))]
