# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Parsers and collectors behind gpuops.cluster.gpu_facts: nvidia-smi, hugepages, network interfaces.

Plain Python, no Ansible. Parsers take text and return dicts; collectors take a ``run(argv)``
callable returning (rc, stdout, stderr) and a filesystem root, so tests feed recorded outputs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

# The per-GPU fields asked of nvidia-smi, in this order: those every driver knows, then those that older
# drivers do not, oldest first: mig.mode.current since 450 (MIG came with Ampere), compute_cap since 510.
# A driver rejects the whole query for one field it does not know, naming that field; it is dropped and
# the query asked again.
REQUIRED_FIELDS = ("index", "name", "uuid", "memory.total", "driver_version", "pci.bus_id")
OPTIONAL_FIELDS = ("mig.mode.current", "compute_cap")
QUERY_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS

# What nvidia-smi prints when there is nothing to report on: a clear "no GPU", not a failure.
_NO_GPU_MARKERS = (
    "No devices were found",
    "couldn't communicate with the NVIDIA driver",
    "NVIDIA driver is not loaded",
    "Driver Not Loaded",
)
_UNKNOWN_FIELD_RE = re.compile(r'Field "([^"]+)" is not a valid field to query')

_NOT_AVAILABLE = ("[N/A]", "N/A", "[Not Supported]", "Not Supported", "")
_CUDA_VERSION_RE = re.compile(r"CUDA Version:\s*([0-9][0-9.]*)")
_DRIVER_VERSION_RE = re.compile(r"Driver Version:\s*([0-9][0-9.]*)")
_NVLINK_RE = re.compile(r"^NV(\d+)$")
_COMPUTE_CAP_RE = re.compile(r"^\d+\.\d+$")
# MIG modes of a GPU that has MIG; one without reports N/A, a driver older than MIG nothing.
_MIG_MODES = ("Enabled", "Disabled")
# Columns of `nvidia-smi topo -m` that are not devices; their titles contain spaces.
_TOPO_TRAILING_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
# Connections that keep GPU-NIC traffic below the CPU's host bridge (GPUDirect RDMA friendly).
_NEAR_LINKS = ("PIX", "PXB")


class GpuFactsError(Exception):
    """Output that cannot be understood; the message says which command and what was wrong."""


def _value(text):
    text = text.strip()
    return None if text in _NOT_AVAILABLE else text


def _int_or_none(text):
    text = _value(text)
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


def product_label_value(name):
    """The product as a Kubernetes label value, as NVIDIA's GPU feature discovery writes it:
    spaces become dashes ("NVIDIA A100-SXM4-40GB" -> "NVIDIA-A100-SXM4-40GB")."""
    if not name:
        return ""
    value = re.sub(r"[^A-Za-z0-9_.-]+", "-", name.strip())
    value = value[:63]
    return value.strip("-_.")


# ---------------------------------------------------------------------------------------------
# nvidia-smi


def parse_query_gpu(text, fields=QUERY_FIELDS):
    """Parse `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` into a list of dicts."""
    gpus = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(fields):
            raise GpuFactsError(
                "nvidia-smi --query-gpu: line {0} has {1} field(s), expected {2} ({3}): {4!r}".format(
                    number, len(cells), len(fields), ",".join(fields), line))
        row = dict(zip(fields, cells))
        index = _int_or_none(row["index"])
        memory = _int_or_none(row["memory.total"])
        if index is None or memory is None:
            raise GpuFactsError(
                "nvidia-smi --query-gpu: line {0} has a non-numeric index or memory.total: {1!r}".format(number, line))
        compute_capability = _value(row.get("compute_cap", ""))
        if compute_capability is not None and not _COMPUTE_CAP_RE.match(compute_capability):
            raise GpuFactsError(
                "nvidia-smi --query-gpu: line {0} has a compute_cap that is not major.minor: {1!r}".format(number, line))
        # Drivers too old to know MIG: "unsupported"; GPUs without MIG: "N/A".
        mig_mode = (_value(row["mig.mode.current"]) or "N/A") if "mig.mode.current" in row else "unsupported"
        gpus.append({
            "index": index,
            "name": row["name"],
            "uuid": _value(row["uuid"]),
            "memory_mib": memory,
            "driver_version": _value(row["driver_version"]),
            "pci_bus_id": _value(row["pci.bus_id"]),
            "mig_mode": mig_mode,
            # A driver older than MIG cannot partition any GPU, as NVIDIA's GPU feature discovery also judges.
            "mig_capable": mig_mode in _MIG_MODES,
            # None where the driver is older than compute_cap (510): unknown, not guessed from the name.
            "compute_capability": compute_capability,
        })
    return sorted(gpus, key=lambda gpu: gpu["index"])


def parse_smi_header(text):
    """Driver and CUDA versions from the banner of plain `nvidia-smi`."""
    cuda = _CUDA_VERSION_RE.search(text)
    driver = _DRIVER_VERSION_RE.search(text)
    return {
        "cuda_version": cuda.group(1) if cuda else None,
        "driver_version": driver.group(1) if driver else None,
    }


def _topo_header(line):
    """Split the header row, keeping the titles that contain spaces whole."""
    whole = dict((title.replace(" ", "_"), title) for title in _TOPO_TRAILING_COLUMNS)
    for joined, title in whole.items():
        line = line.replace(title, joined)
    return [whole.get(cell, cell) for cell in line.split()]


def parse_topo_matrix(text):
    """Parse `nvidia-smi topo -m`.

    Returns {"devices": [column names], "links": {row: {column: link}}, "affinity": {gpu: {...}},
    "nic_names": {"NIC0": "mlx5_0", ...}}. Older drivers name NIC columns by device (mlx5_0)
    and have no NIC legend; newer ones use NIC0.. and a "NIC Legend" block.
    """
    lines = [line.rstrip() for line in text.splitlines()]
    header_index = None
    for number, line in enumerate(lines):
        if line.split() and line.split()[0] == "GPU0":
            header_index = number
            break
    if header_index is None:
        raise GpuFactsError("nvidia-smi topo -m: no header row starting with GPU0 in {0!r}".format(text[:200]))
    header = _topo_header(lines[header_index])
    devices = [cell for cell in header if cell not in _TOPO_TRAILING_COLUMNS]
    trailing = [cell for cell in header if cell in _TOPO_TRAILING_COLUMNS]
    if header[:len(devices)] != devices:
        raise GpuFactsError("nvidia-smi topo -m: unexpected header {0!r}".format(lines[header_index]))

    links = {}
    affinity = {}
    number = header_index + 1
    while number < len(lines) and lines[number].strip():
        cells = lines[number].split()
        row, values = cells[0], cells[1:]
        if row not in devices:
            break
        # GPU rows carry the affinity columns too; NIC rows only the device columns.
        expected = len(devices) + (len(trailing) if row.startswith("GPU") else 0)
        if len(values) != expected:
            raise GpuFactsError(
                "nvidia-smi topo -m: row {0} has {1} value(s), expected {2} ({3}): {4!r}".format(
                    row, len(values), expected, ", ".join(devices + trailing if row.startswith("GPU") else devices),
                    lines[number]))
        links[row] = dict((column, value) for column, value in zip(devices, values[:len(devices)]) if column != row)
        extra = values[len(devices):]
        if extra:
            affinity[row] = dict(zip(trailing, extra))
        number += 1
    if "GPU0" not in links:
        raise GpuFactsError("nvidia-smi topo -m: no row for GPU0")

    nic_names = {}
    in_nic_legend = False
    for line in lines[number:]:
        if line.strip().startswith("NIC Legend"):
            in_nic_legend = True
            continue
        if in_nic_legend:
            match = re.match(r"^\s*(NIC\d+):\s*(\S+)", line)
            if match:
                nic_names[match.group(1)] = match.group(2)
    return {"devices": devices, "links": links, "affinity": affinity, "nic_names": nic_names}


def _nvlink_count(link):
    match = _NVLINK_RE.match(link or "")
    return int(match.group(1)) if match else 0


def summarize_topology(topology):
    """Per-GPU NVLink peers, CPU/NUMA affinity and nearest NICs, plus the NIC list, from parse_topo_matrix."""
    gpus = {}
    nics = []
    nic_names = topology["nic_names"]
    for device in topology["devices"]:
        if device.startswith("GPU"):
            continue
        row = topology["links"].get(device, {})
        nics.append({
            "name": nic_names.get(device, device),
            "gpu_links": dict((peer, link) for peer, link in sorted(row.items()) if peer.startswith("GPU")),
        })
    for device in topology["devices"]:
        if not device.startswith("GPU"):
            continue
        row = topology["links"].get(device, {})
        peers = dict((peer, _nvlink_count(link)) for peer, link in row.items()
                     if peer.startswith("GPU") and _nvlink_count(link))
        affinity = topology["affinity"].get(device, {})
        gpus[int(device[3:])] = {
            "nvlink_peers": peers,
            "cpu_affinity": _value(affinity.get("CPU Affinity", "")),
            "numa_affinity": _value(affinity.get("NUMA Affinity", "")),
            "nearest_nics": [nic_names.get(peer, peer) for peer, link in row.items()
                             if not peer.startswith("GPU") and link in _NEAR_LINKS],
            "links": dict(row),
        }
    return gpus, nics


def collect_gpu(run, nvidia_smi):
    """Facts about the GPUs, or {"present": False, "reason": ...} when there are none to report."""
    if not nvidia_smi:
        return {"present": False, "reason": "nvidia-smi was not found on this host", "count": 0}

    fields = QUERY_FIELDS
    while True:
        query = [nvidia_smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
        rc, out, err = run(query)
        rejected = _UNKNOWN_FIELD_RE.search(out + err) if rc != 0 else None
        if rejected is None or rejected.group(1) not in OPTIONAL_FIELDS or rejected.group(1) not in fields:
            break
        fields = tuple(field for field in fields if field != rejected.group(1))
    message = (out + "\n" + err).strip()
    if any(marker in message for marker in _NO_GPU_MARKERS):
        return {"present": False, "reason": "nvidia-smi: " + message.splitlines()[0].strip(), "count": 0}
    if rc != 0:
        raise GpuFactsError("{0} failed (rc={1}): {2}".format(" ".join(query), rc, message))
    gpus = parse_query_gpu(out, fields)
    if not gpus:
        return {"present": False, "reason": "nvidia-smi reported no GPU", "count": 0}

    rc, out, err = run([nvidia_smi])
    if rc != 0:
        raise GpuFactsError("{0} failed (rc={1}): {2}".format(nvidia_smi, rc, (out + err).strip()))
    versions = parse_smi_header(out)
    if versions["cuda_version"] is None:
        raise GpuFactsError("nvidia-smi: no 'CUDA Version:' in its banner: {0!r}".format(out[:300]))

    rc, out, err = run([nvidia_smi, "topo", "-m"])
    if rc != 0:
        raise GpuFactsError("{0} topo -m failed (rc={1}): {2}".format(nvidia_smi, rc, (out + err).strip()))
    per_gpu, topology_nics = summarize_topology(parse_topo_matrix(out))

    for gpu in gpus:
        gpu.update(per_gpu.get(gpu["index"], {"nvlink_peers": {}, "cpu_affinity": None, "numa_affinity": None,
                                              "nearest_nics": [], "links": {}}))
        gpu["nvlink"] = bool(gpu["nvlink_peers"])

    products = []
    for gpu in gpus:
        if gpu["name"] not in products:
            products.append(gpu["name"])
    mig_modes = set(gpu["mig_mode"] for gpu in gpus)
    nvlink_counts = [count for gpu in gpus for count in gpu["nvlink_peers"].values()]
    return {
        "present": True,
        "count": len(gpus),
        "product": products[0],
        "product_label": product_label_value(products[0]),
        "products": products,
        "memory_mib": min(gpu["memory_mib"] for gpu in gpus),
        "memory_total_mib": sum(gpu["memory_mib"] for gpu in gpus),
        "driver_version": gpus[0]["driver_version"] or versions["driver_version"],
        "cuda_version": versions["cuda_version"],
        "mig_mode": mig_modes.pop() if len(mig_modes) == 1 else "mixed",
        "mig_capable": any(gpu["mig_capable"] for gpu in gpus),
        # The GPU that product names, as GPU feature discovery labels one device's capability.
        "compute_capability": gpus[0]["compute_capability"],
        "nvlink": any(gpu["nvlink"] for gpu in gpus),
        "nvlink_max_links": max(nvlink_counts) if nvlink_counts else 0,
        "topology_nics": topology_nics,
        "gpus": gpus,
    }


# ---------------------------------------------------------------------------------------------
# Hugepages


def parse_meminfo(text):
    """HugePages_* and Hugepagesize from /proc/meminfo."""
    values = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, rest = line.split(":", 1)
        parts = rest.split()
        if not parts:
            continue
        try:
            values[key.strip()] = int(parts[0])
        except ValueError:
            raise GpuFactsError("/proc/meminfo: {0!r} is not a number".format(line))
    missing = [key for key in ("HugePages_Total", "HugePages_Free", "Hugepagesize") if key not in values]
    if missing:
        raise GpuFactsError("/proc/meminfo: missing {0}".format(", ".join(missing)))
    return {
        "total": values["HugePages_Total"],
        "free": values["HugePages_Free"],
        "reserved": values.get("HugePages_Rsvd", 0),
        "surplus": values.get("HugePages_Surp", 0),
        "default_size_kb": values["Hugepagesize"],
        "hugetlb_kb": values.get("Hugetlb"),
    }


def _read(path):
    with open(path) as handle:
        return handle.read()


def _read_int(path):
    try:
        return int(_read(path).strip())
    except (OSError, IOError, ValueError):
        return None


def collect_hugepages(root="/"):
    facts = parse_meminfo(_read(os.path.join(root, "proc/meminfo")))
    sizes = []
    base = os.path.join(root, "sys/kernel/mm/hugepages")
    entries = os.listdir(base) if os.path.isdir(base) else []
    for entry in entries:
        match = re.match(r"^hugepages-(\d+)kB$", entry)
        if not match:
            continue
        directory = os.path.join(base, entry)
        sizes.append({
            "size_kb": int(match.group(1)),
            "total": _read_int(os.path.join(directory, "nr_hugepages")),
            "free": _read_int(os.path.join(directory, "free_hugepages")),
            "reserved": _read_int(os.path.join(directory, "resv_hugepages")),
            "surplus": _read_int(os.path.join(directory, "surplus_hugepages")),
        })
    facts["sizes"] = sorted(sizes, key=lambda size: size["size_kb"])
    return facts


# ---------------------------------------------------------------------------------------------
# Network interfaces


def parse_ip_addr_json(text):
    """{interface: [{"family", "address", "prefixlen", "scope"}]} from `ip -j addr show`."""
    try:
        data = json.loads(text or "[]")
    except ValueError as error:
        raise GpuFactsError("ip -j addr: output is not JSON ({0}): {1!r}".format(error, text[:200]))
    if not isinstance(data, list):
        raise GpuFactsError("ip -j addr: expected a JSON list, got {0}".format(type(data).__name__))
    addresses = {}
    for link in data:
        name = link.get("ifname")
        if not name:
            continue
        addresses[name] = [{
            "family": "ipv6" if info.get("family") == "inet6" else "ipv4",
            "address": info.get("local"),
            "prefixlen": info.get("prefixlen"),
            "scope": info.get("scope"),
        } for info in link.get("addr_info", []) if info.get("family") in ("inet", "inet6")]
    return addresses


def _read_text(path):
    try:
        return _read(path).strip()
    except (OSError, IOError):
        return None


def collect_nics(run, ip_command, root="/"):
    """Every interface under /sys/class/net with MTU, state, MAC, speed, PCI address, RDMA device
    and (from `ip -j addr` where iproute2 is installed) its addresses."""
    base = os.path.join(root, "sys/class/net")
    addresses = {}
    if ip_command:
        rc, out, err = run([ip_command, "-j", "addr", "show"])
        if rc != 0:
            raise GpuFactsError("{0} -j addr show failed (rc={1}): {2}".format(ip_command, rc, (out + err).strip()))
        addresses = parse_ip_addr_json(out)
    nics = []
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        directory = os.path.join(base, name)
        device = os.path.join(directory, "device")
        pci_bus_id = None
        rdma_devices = []
        if os.path.exists(device):
            pci_bus_id = os.path.basename(os.path.realpath(device))
            infiniband = os.path.join(device, "infiniband")
            if os.path.isdir(infiniband):
                rdma_devices = sorted(os.listdir(infiniband))
        speed = _read_int(os.path.join(directory, "speed"))
        nics.append({
            "name": name,
            "mtu": _read_int(os.path.join(directory, "mtu")),
            "state": _read_text(os.path.join(directory, "operstate")),
            "mac": _read_text(os.path.join(directory, "address")),
            "speed_mbps": speed if speed is not None and speed > 0 else None,
            "physical": os.path.exists(device),
            "bond_master": os.path.isdir(os.path.join(directory, "bonding")),
            "pci_bus_id": pci_bus_id,
            "rdma_devices": rdma_devices,
            "addresses": addresses.get(name, []),
        })
    return nics
