# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric check's plan: a ring of pairs in rounds, slow pairs, their split against good nodes, what that names."""

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.fabric.plan import (
    FabricPlanError, estimated_seconds, findings, in_rounds, plan, ring_pairs, slow_pairs, split_pairs,
)

NODES = ["dgx-%02d" % index for index in range(8)]


def test_a_ring_has_as_many_pairs_as_nodes_and_every_node_in_two():
    pairs = ring_pairs(NODES)
    assert len(pairs) == 8 and pairs[0] == ("dgx-00", "dgx-01") and pairs[-1] == ("dgx-07", "dgx-00")
    assert all(sum(node in pair for pair in pairs) == 2 for node in NODES)
    assert ring_pairs(["a", "b"]) == [("a", "b")] and ring_pairs(["a"]) == [] and ring_pairs([]) == []


@pytest.mark.parametrize("count, rounds", [(2, 1), (3, 3), (8, 2), (9, 3), (1000, 2), (10001, 3)])
def test_pairs_that_share_no_node_run_side_by_side(count, rounds):
    planned = plan("n%d" % index for index in range(count))
    assert len(planned["rounds"]) == rounds
    assert sum(len(group) for group in planned["rounds"]) == len(planned["pairs"])
    for group in planned["rounds"]:
        nodes = [node for pair in group for node in pair]
        assert len(nodes) == len(set(nodes))


def test_a_node_named_twice_is_refused():
    with pytest.raises(FabricPlanError) as raised:
        ring_pairs(["a", "b", "a", "c", "b"])
    assert str(raised.value) == "nodes named twice: a, b"


def ring_figures(slow_nodes=(), slow_link=None, good=45.0, bad=8.0):
    """The bus bandwidth of each ring pair: slow where a pair holds a slow node or is the slow link."""
    return dict((pair, bad if set(pair) & set(slow_nodes) or set(pair) == set(slow_link or ()) else good)
                for pair in ring_pairs(NODES))


def test_a_slow_node_makes_both_its_ring_pairs_slow_and_its_split_names_it():
    measured = ring_figures(slow_nodes=["dgx-03"])
    slow = slow_pairs(measured, floor=30.0)
    assert slow == {("dgx-02", "dgx-03"): "8.0 GB/s, under the floor 30.0",
                    ("dgx-03", "dgx-04"): "8.0 GB/s, under the floor 30.0"}
    follow_ups = split_pairs(slow, NODES)
    assert follow_ups == [("dgx-02", "dgx-00"), ("dgx-03", "dgx-01"), ("dgx-03", "dgx-05"), ("dgx-04", "dgx-06")]
    assert all(len(group) == len(set(node for pair in group for node in pair)) // 2 for group in in_rounds(follow_ups))
    split = dict((pair, 8.0 if "dgx-03" in pair else 45.0) for pair in follow_ups)
    found = findings(slow, split, median=45.0, floor=30.0)
    assert [item["bad"] for item in found] == [["dgx-03"], ["dgx-03"]]
    assert found[0]["how"] == ("dgx-02 - dgx-03 8.0 GB/s, under the floor 30.0; against good nodes: dgx-02 - dgx-00 "
                               "45.0 GB/s, dgx-03 - dgx-01 8.0 GB/s, dgx-03 - dgx-05 8.0 GB/s")


def test_a_slow_link_between_two_good_nodes_is_named_as_the_link():
    measured = ring_figures(slow_link=("dgx-05", "dgx-06"))
    # No floor: the pair is far under its peers.
    slow = slow_pairs(measured)
    assert slow == {("dgx-05", "dgx-06"): "8.0 GB/s, 18% of the median pair (45.0)"}
    split = dict((pair, 44.0) for pair in split_pairs(slow, NODES))
    assert findings(slow, split, median=45.0) == [{
        "pair": ("dgx-05", "dgx-06"), "bad": ["link dgx-05 - dgx-06"],
        "how": "dgx-05 - dgx-06 8.0 GB/s, 18% of the median pair (45.0); against good nodes: dgx-05 - dgx-00 44.0 GB/s, "
               "dgx-06 - dgx-01 44.0 GB/s"}]


def test_a_fabric_slow_everywhere_has_no_good_node_to_split_against():
    measured = ring_figures(slow_nodes=NODES)
    slow = slow_pairs(measured, floor=30.0)
    assert len(slow) == 8
    with pytest.raises(FabricPlanError) as raised:
        split_pairs(slow, NODES)
    assert "every node is in a slow pair" in str(raised.value)


def test_the_estimate_is_the_in_node_test_then_each_round():
    assert estimated_seconds(2, seconds_per_pair=60, seconds_in_node=120) == 240
