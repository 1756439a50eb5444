# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What several concerns of this collection use, owned here once; it imports no other package of the collection:

* ``wait``: waiting with a deadline, the failure predicate asked before the success one (jobs, slurm);
* ``files``: files written whole, with a mode, when their content or mode changes (training, versions_report, slurm);
* ``values``: values converted as users give them, the one-line Problem naming what is wrong, and a YAML value
  as the API's text (the input check, the sweep plan, slurm's options, the pod and node specs).
"""
