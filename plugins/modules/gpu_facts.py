#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_facts
short_description: Gather NVIDIA GPU, hugepage and network interface facts from a node
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Runs C(nvidia-smi --query-gpu=... --format=csv,noheader,nounits), plain C(nvidia-smi) (for the
    CUDA version) and C(nvidia-smi topo -m) (NVLink, CPU and NUMA affinity, NICs near each GPU).
  - The query asks for C(mig.mode.current) (drivers 450 and later) and C(compute_cap) (510 and later); where
    the driver rejects one of them it is asked again without it, and what it would have told is reported
    as unknown (C(compute_capability=null), C(mig_mode=unsupported)).
  - Reads hugepage counts from C(/proc/meminfo) and C(/sys/kernel/mm/hugepages).
  - Lists network interfaces from C(/sys/class/net), with addresses from C(ip -j addr) where iproute2
    is installed.
  - A host without C(nvidia-smi), or whose C(nvidia-smi) finds no device or no driver, is not an error;
    O(gather) V(gpu) then gives C(gpuops_gpu.present=false) and the reason.
  - Output that cannot be understood fails the task, naming the command and the offending line.
options:
  gather:
    description:
      - Which groups of facts to gather.
    type: list
    elements: str
    choices: [gpu, hugepages, nics]
    default: [gpu, hugepages, nics]
  nvidia_smi_path:
    description:
      - Path of C(nvidia-smi). By default it is looked up on E(PATH) and in the usual system directories.
    type: path
  host_root:
    description:
      - Directory under which C(/proc) and C(/sys) are read, for a container that has the host's
        filesystems mounted elsewhere (for example C(/host)).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Only reads; runs the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to show.
  facts:
    support: full
    description: Returns C(gpuops_gpu), C(gpuops_hugepages) and C(gpuops_nics) as facts.
notes:
  - Facts are returned as C(gpuops_gpu), C(gpuops_hugepages) and C(gpuops_nics).
seealso:
  - module: gpuops.cluster.node_labels
"""

EXAMPLES = r"""
- name: Gather GPU facts
  gpuops.cluster.gpu_facts:

- name: Report the GPUs, or why there are none
  ansible.builtin.debug:
    msg: >-
      {{ (gpuops_gpu.count ~ ' x ' ~ gpuops_gpu.product ~ ', CUDA ' ~ gpuops_gpu.cuda_version)
         if gpuops_gpu.present else gpuops_gpu.reason }}

- name: Only hugepages, from a container with the host mounted at /host
  gpuops.cluster.gpu_facts:
    gather: [hugepages]
    host_root: /host
"""

RETURN = r"""
ansible_facts:
  description: The gathered facts.
  returned: always
  type: complex
  contains:
    gpuops_gpu:
      description:
        - GPUs on the host. Without GPUs only C(present), C(reason) and C(count) are set.
        - C(mig_mode) is V(Enabled), V(Disabled), V(N/A) (GPU without MIG), V(unsupported) (driver older
          than MIG) or V(mixed). C(mig_capable) is true when any GPU has a MIG mode.
        - C(compute_capability) is the first GPU's (the one C(product) names), V(9.0) for example; null where
          the driver is older than 510.
        - Each item of C(gpus) has C(index), C(name), C(uuid), C(memory_mib), C(driver_version),
          C(pci_bus_id), C(mig_mode), C(mig_capable), C(compute_capability), C(nvlink), C(nvlink_peers) (peer
          to link count), C(cpu_affinity),
          C(numa_affinity), C(nearest_nics) (NICs behind the same PCIe switch) and C(links) (the topology row).
      returned: when O(gather) contains V(gpu)
      type: dict
      sample:
        present: true
        count: 8
        product: NVIDIA A100-SXM4-40GB
        product_label: NVIDIA-A100-SXM4-40GB
        products: [NVIDIA A100-SXM4-40GB]
        memory_mib: 40960
        memory_total_mib: 327680
        driver_version: "535.129.03"
        cuda_version: "12.2"
        mig_mode: Disabled
        mig_capable: true
        compute_capability: "8.0"
        nvlink: true
        nvlink_max_links: 12
        topology_nics: [{name: mlx5_0, gpu_links: {GPU0: PXB, GPU1: PXB}}]
        gpus: []
    gpuops_hugepages:
      description:
        - C(total), C(free), C(reserved), C(surplus) and C(default_size_kb) from C(/proc/meminfo), and
          C(sizes), one item per page size with its own counts.
      returned: when O(gather) contains V(hugepages)
      type: dict
      sample:
        total: 1024
        free: 1024
        reserved: 0
        surplus: 0
        default_size_kb: 2048
        hugetlb_kb: 18874368
        sizes:
          - {size_kb: 2048, total: 1024, free: 1024, reserved: 0, surplus: 0}
          - {size_kb: 1048576, total: 16, free: 16, reserved: 0, surplus: 0}
    gpuops_nics:
      description:
        - One item per interface in C(/sys/class/net) with C(name), C(mtu), C(state), C(mac),
          C(speed_mbps), C(physical), C(bond_master), C(pci_bus_id), C(rdma_devices) and C(addresses).
      returned: when O(gather) contains V(nics)
      type: list
      elements: dict
      sample:
        - name: ens1f0
          mtu: 9000
          state: up
          mac: "b8:ce:f6:00:00:01"
          speed_mbps: 100000
          physical: true
          bond_master: false
          pci_bus_id: "0000:0c:00.0"
          rdma_devices: [mlx5_0]
          addresses: [{family: ipv4, address: 10.0.0.11, prefixlen: 24, scope: global}]
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_facts import (
    GpuFactsError,
    collect_gpu,
    collect_hugepages,
    collect_nics,
)

GATHER_CHOICES = ["gpu", "hugepages", "nics"]


def run_module(module):
    params = module.params

    def run(argv):
        return module.run_command(argv, check_rc=False, environ_update={"LC_ALL": "C"})

    if params["nvidia_smi_path"] and not os.access(params["nvidia_smi_path"], os.X_OK):
        module.fail_json(msg="nvidia_smi_path: {0} is not an executable file".format(params["nvidia_smi_path"]))

    facts = {}
    try:
        if "gpu" in params["gather"]:
            nvidia_smi = params["nvidia_smi_path"] or module.get_bin_path(
                "nvidia-smi", opt_dirs=["/usr/bin", "/usr/local/nvidia/bin", "/run/nvidia/driver/usr/bin"])
            facts["gpuops_gpu"] = collect_gpu(run, nvidia_smi)
        if "hugepages" in params["gather"]:
            facts["gpuops_hugepages"] = collect_hugepages(params["host_root"])
        if "nics" in params["gather"]:
            facts["gpuops_nics"] = collect_nics(run, module.get_bin_path("ip"), params["host_root"])
    except (GpuFactsError, OSError, IOError) as error:
        module.fail_json(msg=to_native(error))
    module.exit_json(changed=False, ansible_facts=facts)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gather=dict(type="list", elements="str", choices=GATHER_CHOICES, default=GATHER_CHOICES),
            nvidia_smi_path=dict(type="path"),
            host_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    run_module(module)


if __name__ == "__main__":
    main()
