# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The pod options that every job module (gpuops.cluster.mpijob, gpuops.cluster.tfjob, gpuops.cluster.pytorchjob,
    # gpuops.cluster.batch_job) applies to every pod of the job alike (plugins/module_utils/jobs/options.py and jobs/pod_template.py).
    DOCUMENTATION = r"""
options:
  image_pull_secrets:
    description:
      - Names of C(kubernetes.io/dockerconfigjson) Secrets in the job's namespace that the kubelet pulls the
        images with (C(imagePullSecrets) of every pod of the job), for a private registry or a mirror that
        needs credentials. The Secrets must exist; the C(gpuops.cluster.registry_credentials) role makes one.
      - A name that is not a DNS-1123 subdomain, or one given twice, is refused. None by default.
    type: list
    elements: str
"""
