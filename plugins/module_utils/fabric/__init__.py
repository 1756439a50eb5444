# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric check: which pairs of nodes to measure, in what rounds, and which node or link a set of measurements
names."""
