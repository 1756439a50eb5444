# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_between_nodes filter: the transports a run on one node could never show, named as the verdict counts them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.filter.nccl_between_nodes import transports_between_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import between_nodes


def test_only_network_transports_are_kept_in_order_and_named_as_the_verdict_names_them():
    assert transports_between_nodes(["p2p", "ib", "SHM", "net/socket", "NET/AWS Libfabric", "NVLink"]) == [
        "NET/IB", "NET/Socket", "NET/AWS Libfabric"]


def test_no_transports_give_none_between_nodes():
    assert transports_between_nodes(None) == []
    assert transports_between_nodes(["P2P", "SHM"]) == []


def test_a_name_that_means_no_transport_is_not_between_nodes():
    assert not between_nodes("NET/")
    assert not between_nodes("")
    assert between_nodes("Socket")
