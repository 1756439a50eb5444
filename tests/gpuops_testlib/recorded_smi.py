# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi as recorded on real systems (tests/unit/fixtures/nvidia_smi), for the gpu_facts and label tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "fixtures", "nvidia_smi")

# The query fields each recorded driver does not know, as it rejects them (the first unknown one it meets).
UNKNOWN_FIELDS = {
    "v100_dgx1": ("mig.mode.current", "compute_cap"),  # 418
    "a100_dgx": ("compute_cap",),  # 470
}
REJECTIONS = {"mig.mode.current": "query_mig_rejected.txt", "compute_cap": "query_compute_cap_rejected.txt"}


def fixture(system, name):
    with open(os.path.join(FIXTURES, system, name)) as handle:
        return handle.read()


class RecordedSmi(object):
    """Answers run(argv) from a system's recorded outputs, as its driver would, and remembers what was asked."""

    def __init__(self, system):
        self.system = system
        self.calls = []

    def __call__(self, argv):
        self.calls.append(list(argv))
        if argv[1:] == ["topo", "-m"]:
            return 0, fixture(self.system, "topo.txt"), ""
        if len(argv) == 1:
            return 0, fixture(self.system, "nvidia_smi.txt"), ""
        if argv[1].startswith("--query-gpu="):
            for field in argv[1][len("--query-gpu="):].split(","):
                if field in UNKNOWN_FIELDS.get(self.system, ()):
                    return 2, fixture(self.system, REJECTIONS[field]), ""
            return 0, fixture(self.system, "query.csv"), ""
        raise AssertionError("unexpected command {0}".format(argv))

    def queries(self):
        return [call[1] for call in self.calls if len(call) > 1 and call[1].startswith("--query-gpu=")]
