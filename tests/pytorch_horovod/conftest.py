# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pytorch-horovod tier's lab: the main job (tools/lab.sh) run once, which makes the lab or finds it up, and the
lab taken down at the end whatever happens (its nodes hold root's 5 GB PyTorch environment and the image)."""

from __future__ import annotations

import os
import sys

import pytest

# The main job's runner is the e2e tier's.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "e2e"))
from main_job import LAB_DOWN, Run, lab_sh  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture(scope="session")
def lab():
    made = lab_sh()
    if made.rc != 0:
        pytest.fail("tools/lab.sh failed, so there is no lab to run PyTorch on:\n" + made.explain(), pytrace=False)
    yield made
    down = Run(["bash", LAB_DOWN], timeout=900)
    sys.stderr.write("lab taken down: rc=%s\n%s\n" % (down.rc, down.output[-2000:]))
