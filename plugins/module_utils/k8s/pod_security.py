# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Pod Security Admission labels of the namespace the collection's pods run in.

Plain Python, no Ansible: the job_namespace role reaches it through the gpuops.cluster.namespace_pod_security
filter. The level the pods need follows from what they ask of the node: host networking, privileged containers,
hostPath volumes and capabilities beyond baseline's few (IPC_LOCK, which RDMA needs, among them) are allowed at
`privileged` only; the benchmark's other pods run as root without a seccomp profile, which `baseline` allows and
`restricted` does not.

A namespace the role creates gets the level its pods need (enforce, audit and warn), so that their admission
does not hang on the cluster's default. An existing namespace's labels are never changed behind the user's
back: a missing enforce label is added only where the pods need `privileged` (added, nothing replaced), and an
enforce label that would reject the pods is changed only when the user allows it; otherwise the plan says which
label rejects them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PREFIX = "pod-security.kubernetes.io/"
MODES = ("enforce", "audit", "warn")
ENFORCE = PREFIX + "enforce"
# From the least to the most restrictive.
LEVELS = ("privileged", "baseline", "restricted")
# The capabilities the baseline level lets a container add (Kubernetes' Pod Security Standards); any other
# needs privileged.
BASELINE_CAPABILITIES = frozenset(("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"))


def _strictness(level):
    """An unknown level counts as the strictest: the admission controller does not run pods under one."""
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def needed_level(host_network=False, privileged=False, host_paths=None, volumes=None, capabilities=None):
    """(level, reasons): the level pods with these settings need, and what makes them need it."""
    reasons = []
    if host_network:
        reasons.append("host networking")
    if privileged:
        reasons.append("privileged containers")
    paths = list(host_paths or []) + [(volume.get("hostPath") or {}).get("path", volume.get("name"))
                                      for volume in volumes or [] if isinstance(volume, dict) and "hostPath" in volume]
    if paths:
        reasons.append("hostPath volumes ({0})".format(", ".join(str(path) for path in paths)))
    beyond_baseline = sorted(set(capabilities or []) - BASELINE_CAPABILITIES)
    if beyond_baseline:
        reasons.append("added capabilities ({0})".format(", ".join(beyond_baseline)))
    return ("privileged" if reasons else "baseline"), reasons


def plan(namespace, host_network=False, privileged=False, host_paths=None, volumes=None, capabilities=None,
         relabel=False):
    """What to do with the namespace pods with these settings (see needed_level) go to.

    namespace: the Namespace object as the API returns it, or None where it does not exist yet. relabel: whether
    an enforce label that would reject the pods may be changed. Returns a dict: exists, level (the level the pods
    need), reasons (what makes them need it), labels (the labels to apply, {} for none), and rejected_by (the
    enforce label's value where it rejects the pods and may not be changed, else None).
    """
    level, reasons = needed_level(host_network, privileged, host_paths, volumes, capabilities)
    wanted = dict((PREFIX + mode, level) for mode in MODES)
    result = {"exists": namespace is not None, "level": level, "reasons": reasons, "labels": {}, "rejected_by": None}
    if namespace is None:
        result["labels"] = wanted
        return result
    current = ((namespace.get("metadata") or {}).get("labels") or {})
    enforced = current.get(ENFORCE)
    if enforced is None:
        # Only adds: an unlabelled namespace runs its pods at the cluster's default level, which the pods'
        # privileges must not depend on; baseline would tighten it for the namespace's other pods.
        if level == "privileged":
            result["labels"] = dict((key, value) for key, value in wanted.items() if key not in current)
    elif _strictness(enforced) > _strictness(level):
        if relabel:
            result["labels"] = dict((key, value) for key, value in wanted.items() if current.get(key) != value)
        else:
            result["rejected_by"] = enforced
    return result
