# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Open MPI's launch settings under both of its names. Open MPI 4's mpirun (ORTE) reads OMPI_MCA_<name>; Open MPI 5's
(PRRTE) reads PRTE_MCA_<new name> and passes over the old one without a word, so that a host file or an SSH port given
the old way is lost and every rank can start on the launcher's node. Each setting is given both ways: an image of
either version reads its own."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Open MPI 4's parameter -> Open MPI 5's: PRRTE renamed the rsh launcher ssh, and ORTE's own parameters prte_.
OPEN_MPI_5_NAMES = {
    "plm_rsh_args": "plm_ssh_args",
    "orte_keep_fqdn_hostnames": "prte_keep_fqdn_hostnames",
    "orte_default_hostfile": "prte_default_hostfile",
}


def mca_environment(settings, open_mpi_4=True):
    """The environment that gives mpirun `settings` ({Open MPI 4 parameter: value}) in Open MPI 5's names, and in Open
    MPI 4's unless open_mpi_4 is false (where something else, the MPI Operator, already gives those)."""
    unknown = sorted(set(settings) - set(OPEN_MPI_5_NAMES))
    if unknown:
        raise ValueError("no Open MPI 5 name known for %s; known: %s"
                         % (", ".join(unknown), ", ".join(sorted(OPEN_MPI_5_NAMES))))
    environment = {}
    for name, value in settings.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if open_mpi_4:
            environment["OMPI_MCA_" + name] = text
        environment["PRTE_MCA_" + OPEN_MPI_5_NAMES[name]] = text
    return environment
