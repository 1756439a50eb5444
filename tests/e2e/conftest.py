# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the end-to-end tests: the main job run twice for the whole session, the tests of every file on
that lab, the teardown test last, and the lab taken down at the end whatever happens."""

from __future__ import annotations

import sys

import pytest

from gpuops_testlib.lab_leftovers import what_is_left
from main_job import LAB_DOWN, RUN_DIR, Run, lab_containers, lab_network_exists, lab_sh


def pytest_collection_modifyitems(items):
    """The teardown test runs last, after the tests of every file that use the lab."""
    items.sort(key=lambda item: item.name.startswith("test_teardown"))


@pytest.fixture(scope="session", autouse=True)
def lab_taken_down_at_the_end():
    yield
    if lab_containers() or lab_network_exists() or what_is_left(RUN_DIR):
        down = Run(["bash", LAB_DOWN], timeout=900)
        sys.stderr.write("lab left up by a failed test, taken down: rc=%s\n%s\n" % (down.rc, down.output[-2000:]))


@pytest.fixture(scope="session")
def first_run():
    return lab_sh()


@pytest.fixture(scope="session")
def second_run(first_run):  # pylint: disable=redefined-outer-name
    if first_run.rc != 0:
        pytest.fail("the first tools/lab.sh failed, so there is no lab to run again:\n" + first_run.explain(),
                    pytrace=False)
    return lab_sh()
