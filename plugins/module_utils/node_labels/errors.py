# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The errors of node labelling; a failed API call is a k8s.errors.ApiError (ConflictError for HTTP 409)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import InvalidInputError, KubernetesError


class NodeLabelsError(KubernetesError):
    """Base of the errors the planner reports; the message is meant for a person."""


class InvalidSpecError(InvalidInputError):
    """Bad labels, taints or node entries; each problem names where it is in the input."""

    def __init__(self, problems):
        super(InvalidSpecError, self).__init__("node label/taint specification", problems)


class UnknownNodesError(NodeLabelsError):
    def __init__(self, names):
        self.names = sorted(names)
        super(UnknownNodesError, self).__init__(
            "{0} node(s) not found in the cluster, nothing was changed: {1}".format(
                len(self.names), ", ".join(self.names)), unknown_nodes=self.names)


class ApplyError(NodeLabelsError):
    def __init__(self, failures, applied):
        self.failures = dict(failures)
        self.applied = sorted(applied)
        details = "; ".join("{0}: {1}".format(name, self.failures[name]) for name in sorted(self.failures))
        super(ApplyError, self).__init__(
            "patching failed on {0} node(s) ({1} other node(s) were patched): {2}".format(
                len(self.failures), len(self.applied), details), failed_nodes=self.failures)
