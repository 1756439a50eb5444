# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""meta/runtime.yml: the cluster action group holds every module whose argument spec takes the Kubernetes
connection options, and no other, so that module_defaults for group/gpuops.cluster.cluster give all of them the
same kubeconfig, context and request timeout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import connection_argument_spec

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
MODULES = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if name.endswith(".py") and not name.startswith("_"))


class _Built(Exception):
    def __init__(self, argument_spec):
        super(_Built, self).__init__()
        self.argument_spec = argument_spec


def _options(monkeypatch, name):
    """The options of a module's argument spec, as its main() builds the AnsibleModule; a module without main()
    (an action's documentation) has those of its documentation."""
    module = importlib.import_module("ansible_collections.gpuops.cluster.plugins.modules." + name)
    if not hasattr(module, "main"):
        return set(yaml.safe_load(module.DOCUMENTATION).get("options") or {})

    def built(self, argument_spec, **dummy):
        raise _Built(argument_spec)

    monkeypatch.setattr(basic.AnsibleModule, "__init__", built)
    with pytest.raises(_Built) as caught:
        module.main()
    return set(caught.value.argument_spec)


def test_the_cluster_group_is_every_module_that_takes_the_connection_options(monkeypatch):
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        group = yaml.safe_load(handle)["action_groups"]["cluster"]
    connection = set(connection_argument_spec())
    takes_them = [name for name in MODULES if connection <= _options(monkeypatch, name)]
    assert sorted(group) == takes_them
    assert len(group) == len(set(group))
