# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``NCCL_DEBUG=INFO`` lines: version, network, interfaces, the transport of every ring or channel
connection, the communicators that completed their initialisation, and NCCL's warnings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_PREFIX = re.compile(r"^(?P<host>[^\s:]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] NCCL (?P<level>INFO|WARN) (?P<body>.*)$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda(\d+(?:\.\d+)*))?")
_NETWORK = re.compile(r"^Using network (.+?)\s*$")  # NCCL 2.x: the network plugin chosen
_NET_IB = re.compile(r"^NET/IB\s*: Using (.*)$")
_NET_SOCKET = re.compile(r"^NET/Socket\s*: Using (\[.*)$")
_BOOTSTRAP = re.compile(r"^Bootstrap\s*: Using (\S+)")
_DEVICE = re.compile(r"\[(\d+)\]([^\s\[;]+)")
_CONNECTION = re.compile(
    r"^(?:Channel|Ring) (\d+)(?:/(\d+))?\s*:\s*(\d+)(?:\[[0-9a-fA-Fx]+\])?\s*->\s*(\d+)(?:\[[0-9a-fA-Fx]+\])?"
    r"(?:\s*\[(send|receive)\])?\s+via\s+(.+?)\s*$"
)
_INIT_COMPLETE = re.compile(
    r"comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) cudaDev (\d+).*?(?:commId (0x[0-9a-fA-F]+) )?- Init COMPLETE"
)


def append_unique(items, item):
    if item not in items:
        items.append(item)


def classify_transport(detail):
    """Name the transport of an NCCL connection from the text after 'via'.

    'NET/IB/0/GDRDMA' and 'NET/IBext_v8/4' give NET/IB, 'NET/Socket/1' gives NET/Socket,
    'P2P/IPC/read', 'P2P/CUMEM' and 'P2P/direct pointer' give P2P, 'SHM/direct/direct' gives SHM.
    """
    head, _slash, rest = detail.partition("/")
    if head == "NET":
        name = re.split(r"/\d", rest, maxsplit=1)[0]
        name = re.sub(r"ext_v\d+$", "", name)
        return "NET/" + name
    return head.split()[0] if head.split() else detail


def gpudirect_counts(transport_details):
    """(RDMA network connections with GPUDirect RDMA, RDMA network connections) of {connection text: count}: NCCL
    names a connection whose NIC reads and writes the GPU's memory directly NET/IB/<n>/GDRDMA, and one staged through
    host memory NET/IB/<n>. TCP sockets (NET/Socket) never read a GPU's memory, and are not counted."""
    network = [(detail, count) for detail, count in (transport_details or {}).items()
               if classify_transport(detail).startswith("NET/") and not detail.startswith("NET/Socket")]
    return sum(count for detail, count in network if detail.endswith("/GDRDMA")), sum(count for _detail, count in network)


def parse_nccl_line(log, stripped, body):
    """Read one line that mentions NCCL. Returns True when it was NCCL's own output."""
    prefix = _PREFIX.match(stripped)
    if prefix:
        append_unique(log.nccl_hosts, prefix.group("host"))
    version = _VERSION.search(body)
    if version:
        log.nccl_seen = True
        log.add_source("nccl")
        log.nccl_version = version.group(1)
        log.nccl_cuda = version.group(2)
        return True
    if not prefix:
        return False
    log.nccl_seen = True
    if prefix.group("level") == "WARN":
        log.nccl_warnings.append(prefix.group("body").strip())
        return True
    log.add_source("nccl")
    _parse_info(log, prefix.group("host"), prefix.group("body"))
    return True


def _parse_info(log, host, body):
    for parse in _INFO_PARSERS:
        if parse(log, host, body):
            return


def _parse_network(log, _host, body):
    network = _NETWORK.match(body)
    if network:
        append_unique(log.nccl_networks, network.group(1))
    return network


def _parse_ib(log, _host, body):
    ib = _NET_IB.match(body)
    if ib:
        devices, _sep, oob = ib.group(1).partition(";")
        for _index, name in _DEVICE.findall(devices):
            device, _colon, rest = name.partition(":")
            port, _slash, link = rest.partition("/")
            append_unique(log.nccl_interfaces, {
                "net": "IB", "name": device, "port": int(port) if port.isdigit() else None,
                "link_layer": link or None,
            })
        oob = oob.replace("OOB", "").strip()
        if oob:
            append_unique(log.nccl_bootstrap, oob.split("<")[0])
    return ib


def _parse_socket(log, _host, body):
    socket = _NET_SOCKET.match(body)
    if socket:
        for _index, name in _DEVICE.findall(socket.group(1)):
            interface, _colon, address = name.partition(":")
            append_unique(log.nccl_interfaces, {
                "net": "Socket", "name": interface, "address": address.split("<")[0] or None,
            })
    return socket


def _parse_bootstrap(log, _host, body):
    bootstrap = _BOOTSTRAP.match(body)
    if bootstrap:
        # NCCL 2.7 wrote "[0]eth0:10.0.0.1<0>", later versions "eth0:10.0.0.1<0>".
        append_unique(log.nccl_bootstrap, re.sub(r"^\[\d+\]", "", bootstrap.group(1)).split("<")[0])
    return bootstrap


def _parse_connection(log, _host, body):
    connection = _CONNECTION.match(body)
    if connection:
        detail = connection.group(6)
        kind = classify_transport(detail)
        log.transports[kind] = log.transports.get(kind, 0) + 1
        log.transport_details[detail] = log.transport_details.get(detail, 0) + 1
    return connection


def _parse_init(log, host, body):
    init = _INIT_COMPLETE.search(body)
    if init:
        # Every process has its own comm pointer; one communicator is what they share: its commId
        # where NCCL prints it (2.12 and later), else its size.
        key = init.group(5) or "nranks=%s" % init.group(3)
        comm = log.nccl_comms.setdefault(key, {"nranks": int(init.group(3)), "ranks": {}})
        comm["ranks"][int(init.group(2))] = host
    return init


_INFO_PARSERS = (_parse_network, _parse_ib, _parse_socket, _parse_bootstrap, _parse_connection, _parse_init)
