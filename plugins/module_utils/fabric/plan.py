# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which pairs of nodes a fabric check measures, in what rounds, and what the figures name.

Every node is measured against its two neighbours on a ring: as many pairs as nodes, never all pairs, so the check's
cost grows with the node count. Pairs that share no node run side by side, which puts a ring in two rounds (three when
the count is odd). A pair is slow under the floor, or far under its peers (a fraction of the median pair). Each slow
pair is then split: each of its nodes is measured against a node whose pairs were all fast. A node slow against a
good one is bad; a pair of nodes fast against good ones is a bad link between them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.training.stats import median as median_of

# Far under its peers: a pair under this fraction of the median pair is slow whatever the floor.
DEFAULT_PEER_FRACTION = 0.5


class FabricPlanError(ValueError):
    """Nodes that cannot be planned, named."""


def ring_pairs(nodes):
    """Each node with the next one and the last with the first: as many pairs as nodes (one for two nodes, none for
    one)."""
    names = list(nodes)
    seen = set()
    repeated = sorted(set(name for name in names if name in seen or seen.add(name)))
    if repeated:
        raise FabricPlanError("nodes named twice: %s" % ", ".join(repeated))
    if len(names) < 2:
        return []
    if len(names) == 2:
        return [(names[0], names[1])]
    return [(names[index], names[(index + 1) % len(names)]) for index in range(len(names))]


def in_rounds(pairs):
    """The pairs in rounds of pairs that share no node, each pair in the first round with room for it."""
    rounds, busy = [], []
    for pair in pairs:
        for index, nodes in enumerate(busy):
            if pair[0] not in nodes and pair[1] not in nodes:
                rounds[index].append(pair)
                nodes.update(pair)
                break
        else:
            rounds.append([pair])
            busy.append(set(pair))
    return rounds


def _why_slow(figure, floor, peer_fraction, median):
    if floor is not None and figure < floor:
        return "%.1f GB/s, under the floor %.1f" % (figure, floor)
    if median and figure < peer_fraction * median:
        return "%.1f GB/s, %.0f%% of the median pair (%.1f)" % (figure, 100.0 * figure / median, median)
    return None


def slow_pairs(measured, floor=None, peer_fraction=DEFAULT_PEER_FRACTION, median=None):
    """{pair: why} of the measured pairs ({pair: GB/s of bus bandwidth}) under the floor, or under peer_fraction of the
    median pair (their own median unless another is given: the follow-ups are held to the ring's)."""
    if not measured:
        return {}
    median = median_of(list(measured.values())) if median is None else median
    slow = {}
    for pair, figure in measured.items():
        why = _why_slow(figure, floor, peer_fraction, median)
        if why:
            slow[pair] = why
    return slow


def split_pairs(slow, nodes):
    """The follow-up pairs of the slow pairs, (suspect, good node): each node of a slow pair against a node in no slow
    pair, a different one each time while there are enough, so that the follow-ups run side by side. Raises
    FabricPlanError when every node is in a slow pair: nothing is known good to measure against."""
    suspects = set(node for pair in slow for node in pair)
    good = [node for node in nodes if node not in suspects]
    if slow and not good:
        raise FabricPlanError("every node is in a slow pair: no node is known good to measure the others against; "
                              "check the floor, or the fabric as a whole")
    follow_ups, turn = [], 0
    for pair in slow:
        for node in pair:
            follow_ups.append((node, good[turn % len(good)]))
            turn += 1
    return follow_ups


def findings(slow, follow_ups_measured, median, floor=None, peer_fraction=DEFAULT_PEER_FRACTION):
    """One finding per slow pair of the ring: {'pair', 'bad', 'how'}. bad: the nodes slow against a good node (the
    follow-ups, held to the ring's median), else the link between the two nodes. how: which pairs said so."""
    slow_follow_ups = slow_pairs(follow_ups_measured, floor, peer_fraction, median)
    results = []
    for pair, why in slow.items():
        bad = [node for node in pair if any(checked[0] == node for checked in slow_follow_ups)]
        split = ", ".join("%s - %s %.1f GB/s" % (checked[0], checked[1], figure)
                          for checked, figure in sorted(follow_ups_measured.items()) if checked[0] in pair)
        results.append({"pair": pair, "bad": bad or ["link %s - %s" % pair],
                        "how": "%s - %s %s; against good nodes: %s" % (pair[0], pair[1], why, split)})
    return results


def plan(nodes):
    """The ring and its rounds."""
    names = list(nodes)
    pairs = ring_pairs(names)
    return {"nodes": len(names), "pairs": pairs, "rounds": in_rounds(pairs)}


def estimated_seconds(rounds, seconds_per_pair, seconds_in_node):
    """A check's wall time: every node's own test at once, then each round of pairs."""
    return seconds_in_node + rounds * seconds_per_pair
