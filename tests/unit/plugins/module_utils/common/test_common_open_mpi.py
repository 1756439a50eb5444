# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Open MPI's launch settings under Open MPI 4's names and Open MPI 5's."""

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common.open_mpi import mca_environment


def test_each_setting_is_given_under_both_names():
    assert mca_environment({"plm_rsh_args": "-p 22122", "orte_keep_fqdn_hostnames": True}) == {
        "OMPI_MCA_plm_rsh_args": "-p 22122", "PRTE_MCA_plm_ssh_args": "-p 22122",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true", "PRTE_MCA_prte_keep_fqdn_hostnames": "true"}


def test_open_mpi_5_names_alone_where_open_mpi_4_is_given_them_elsewhere():
    assert mca_environment({"orte_default_hostfile": "/etc/mpi/hostfile"}, open_mpi_4=False) == {
        "PRTE_MCA_prte_default_hostfile": "/etc/mpi/hostfile"}


def test_a_setting_without_a_known_open_mpi_5_name_is_refused():
    with pytest.raises(ValueError) as raised:
        mca_environment({"btl_tcp_if_include": "eth0"})
    assert str(raised.value) == ("no Open MPI 5 name known for btl_tcp_if_include; known: orte_default_hostfile, "
                                 "orte_keep_fqdn_hostnames, plm_rsh_args")
