# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_network runs, shared by test_gpu_network.py and test_gpu_network_bad_input.py: every case in
one ansible-playbook run, a second run for idempotence and the removed NICs, and one run in check mode."""

import pytest

from gpuops_testlib.gpu_network_cases import check_mode_case, first_run_cases, second_run_cases
from gpuops_testlib.gpu_network_validators import unpacked_validators
from gpuops_testlib.role_cases import render


@pytest.fixture(scope="session")
def validators_bin():
    return unpacked_validators()


@pytest.fixture(scope="session")
def gpu_network_work_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gpu_network")


@pytest.fixture(scope="session")
def gpu_network(gpu_network_work_dir, validators_bin):
    """{case label: its share of the first run}."""
    return render(gpu_network_work_dir, first_run_cases(validators_bin))


@pytest.fixture(scope="session")
def gpu_network_again(gpu_network, gpu_network_work_dir, validators_bin):
    """{case label: its share of the second run, on the roots the first one left}."""
    return render(gpu_network_work_dir, second_run_cases(validators_bin))


@pytest.fixture(scope="session")
def gpu_network_check_mode(tmp_path_factory, validators_bin):
    return render(tmp_path_factory.mktemp("gpu_network_check"), [check_mode_case(validators_bin)], check=True)["check_mode"]
