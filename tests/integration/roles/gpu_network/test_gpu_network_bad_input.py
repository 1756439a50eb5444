# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input to the gpu_network role fails before any change, naming the variable and what was expected.

Each case is a host of the gpu_network first run (conftest.py), failing on its own.
"""

import pytest

from gpuops_testlib.gpu_network_cases import ALL_BAD, host_label


@pytest.mark.parametrize("case", sorted(ALL_BAD))
def test_bad_input_fails_before_any_change(gpu_network, case):
    expected_fragments = ALL_BAD[case][2]
    play = gpu_network[host_label(case)]
    assert play.stats.get("failures", 0) == 1, f"{case}: the role accepted it: {play.stats}"
    messages = "\n".join(play.failure_messages())
    for fragment in expected_fragments:
        assert fragment in messages, f"{case}: {fragment!r} missing from the failure:\n{messages}"
    assert play.changed() == []
    assert play.written() == [], f"{case}: files were written before the failure"
