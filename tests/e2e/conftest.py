# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the end-to-end tests: the main job run twice for the whole session, the tests of every file on
that lab, the teardown test last, and the lab taken down at the end whatever happens. The session starts from
no lab: one that an earlier make lab left up is taken down first, and the tier says so. A failed test's logs are
copied out (gpuops_testlib.kept_logs) before anything else runs, and listed at the session's end."""

from __future__ import annotations

import pytest

from gpuops_testlib.kept_logs import keep_what_explains
from main_job import kubectl, lab_sh, take_down_a_lab_left_up

# {failure text: the folder its logs were kept in}: a session fixture that failed fails every test that uses it
# with the same text, and its logs are copied once, not once per test.
KEPT = {}


def pytest_collection_modifyitems(items):
    """The teardown test runs last, after the tests of every file that use the lab."""
    items.sort(key=lambda item: item.name.startswith("test_teardown"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # pylint: disable=unused-argument
    """A failed test's logs are copied out while its pods and files are still there."""
    report = (yield).get_result()
    if report.failed:
        if report.longreprtext not in KEPT:
            KEPT[report.longreprtext] = keep_what_explains(item.nodeid, scratch=item.funcargs.get("tmp_path"),
                                                           kubectl=kubectl)
        report.sections.append(("kept", "the logs that explain this failure: " + KEPT[report.longreprtext]))


def pytest_terminal_summary(terminalreporter):
    for kept in KEPT.values():
        terminalreporter.write_line("kept for a failed test: " + kept)


def _terminal(config):
    """Writes a line where the person running the tier reads it, past pytest's capture of fixture output."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")

    def say(text):
        with capture.global_and_fixture_disabled():
            reporter.write_line(text.rstrip("\n"))
    return say


@pytest.fixture(scope="session", autouse=True)
def lab_taken_down_at_the_end(pytestconfig):
    yield
    take_down_a_lab_left_up("a failed test left the lab up", say=_terminal(pytestconfig))


@pytest.fixture(scope="session")
def first_run(pytestconfig):
    take_down_a_lab_left_up("an earlier make lab left the lab up; the first-run tests need a first run",
                            say=_terminal(pytestconfig))
    return lab_sh()


@pytest.fixture(scope="session")
def second_run(first_run):  # pylint: disable=redefined-outer-name
    if first_run.rc != 0:
        pytest.fail("the first tools/lab.sh failed, so there is no lab to run again:\n" + first_run.explain(),
                    pytrace=False)
    return lab_sh()
