# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The versions report behind gpuops.cluster.versions_report, one concern per file:

* ``report``: the observed versions against the pins, as rows, a table and a JSON document (plain Python);
* ``kubernetes_api``: the reads over the API server (Nodes, DaemonSets, Deployments, Helm release records), and
  what they show of each component.
"""
