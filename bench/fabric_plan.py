#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric check's plan at scale: the ring's pairs and rounds against measuring all pairs, side by side.

    python bench/fabric_plan.py [--nodes 100 1000 10000] [--slow 3] [--seconds-per-pair 60] [--seconds-in-node 300]

For each node count: the pairs and rounds of the ring (gpuops.cluster's plan, module_utils/fabric/plan.py), the
time to plan them, then `--slow` nodes made slow in made-up figures: the slow pairs found, their follow-up pairs and
rounds, and the time to find and split them. Beside it, what measuring all pairs would take (n(n-1)/2 pairs in n-1
rounds, a round-robin tournament). The wall times are estimates from the seconds given (a two-node bandwidth sweep,
every node's own test), not measurements of a fabric. Node names only: no API server is asked for them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".build", "collections"))
from ansible_collections.gpuops.cluster.plugins.module_utils.fabric.plan import (  # noqa: E402  (the checkout's collection)
    estimated_seconds, findings, in_rounds, plan, slow_pairs, split_pairs,
)


def timed(function, *args, repeat=5):
    """(result, median seconds over `repeat` calls)."""
    times, result = [], None
    for _attempt in range(repeat):
        started = time.perf_counter()
        result = function(*args)
        times.append(time.perf_counter() - started)
    return result, statistics.median(times)


def localise(planned, nodes, slow_nodes):
    measured = dict((pair, 8.0 if set(pair) & slow_nodes else 45.0) for pair in planned["pairs"])
    slow = slow_pairs(measured, floor=30.0)
    follow_ups = split_pairs(slow, nodes)
    split = dict((pair, 8.0 if pair[0] in slow_nodes else 45.0) for pair in follow_ups)
    return slow, follow_ups, findings(slow, split, median=45.0, floor=30.0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--slow", type=int, default=3, help="nodes made slow in the made-up figures")
    parser.add_argument("--seconds-per-pair", type=float, default=60.0)
    parser.add_argument("--seconds-in-node", type=float, default=300.0)
    args = parser.parse_args(argv)
    print("assumed: %.0f s per round of pairs, %.0f s for every node's own test at once; %d slow nodes"
          % (args.seconds_per_pair, args.seconds_in_node, args.slow))
    header = ("nodes", "pairs", "rounds", "plan ms", "slow pairs", "follow-ups", "f-u rounds", "find ms",
              "ring est. min", "all pairs", "all rounds", "all est. min", "all/ring")
    print(" ".join("%12s" % word for word in header))
    for count in args.nodes:
        nodes = ["node-%05d" % index for index in range(count)]
        planned, plan_seconds = timed(plan, nodes)
        slow_nodes = set(nodes[index * count // (args.slow + 1)] for index in range(1, args.slow + 1))
        (slow, follow_ups, _found), find_seconds = timed(localise, planned, nodes, slow_nodes)
        follow_up_rounds = len(in_rounds(follow_ups))
        ring = estimated_seconds(len(planned["rounds"]) + follow_up_rounds, args.seconds_per_pair, args.seconds_in_node)
        all_pairs, all_rounds = count * (count - 1) // 2, count - 1 if count % 2 == 0 else count
        every = estimated_seconds(all_rounds, args.seconds_per_pair, args.seconds_in_node)
        row = (count, len(planned["pairs"]), len(planned["rounds"]), "%.2f" % (1000 * plan_seconds), len(slow),
               len(follow_ups), follow_up_rounds, "%.2f" % (1000 * find_seconds), "%.1f" % (ring / 60.0), all_pairs,
               all_rounds, "%.1f" % (every / 60.0), "%.1f" % (every / ring))
        print(" ".join("%12s" % value for value in row), flush=True)


if __name__ == "__main__":
    main()
