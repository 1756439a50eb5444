# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training thresholds (gpuops_training_*) are declared, documented and ruled in the training_verdict role
alone; the input check reads them from there."""

from __future__ import annotations

import glob
import os

import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.stages import (
    SITE_OPTIONS, SITE_RULES, THRESHOLD_PREFIX, THRESHOLDS_ROLE,
)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
# The hosts a host launcher runs on (a play's host pattern) and the switch of the Training Operator: not thresholds.
NOT_A_THRESHOLD = {"gpuops_training_hosts", "gpuops_training_operator"}


def _named(variable):
    return variable if isinstance(variable, list) else [variable]


def test_only_the_verdict_role_declares_or_rules_a_threshold():
    declaring = {}
    for spec in glob.glob(os.path.join(REPO_ROOT, "roles", "*", "meta", "argument_specs.yml")):
        role = spec.split(os.sep)[-3]
        with open(spec, encoding="utf-8") as handle:
            options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
        thresholds = sorted(set(name for name in options if name.startswith(THRESHOLD_PREFIX)) - NOT_A_THRESHOLD)
        if thresholds:
            declaring[role] = thresholds
    assert list(declaring) == [THRESHOLDS_ROLE]
    assert [name for name in SITE_OPTIONS if name.startswith(THRESHOLD_PREFIX) and name not in NOT_A_THRESHOLD] == []
    ruled = [rule for rule in SITE_RULES if any(name.startswith(THRESHOLD_PREFIX) for name in _named(rule["variable"]))]
    assert ruled == []
