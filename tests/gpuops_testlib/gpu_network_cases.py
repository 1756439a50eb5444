# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_network role's cases: every platform, the single-purpose nodes and every bad input, as the hosts
of one ansible-playbook run (gpuops_testlib.role_cases), and the cases a second run converges again.

Each case renders under its own scratch root (gpu_network_root_dir) with its platform's facts; the cases
that validate with the real netplan and nmcli have them first on PATH (gpu_network_validators).
"""

from gpuops_testlib.role_cases import CASE_ROOT, RoleCase

NODE_VARS = {
    "gpu_network_packages_enabled": False,
    "gpu_network_bond_members": ["ens1f0np0", "ens1f1np1"],
    "gpu_network_bond_addresses": ["10.0.0.11/24"],
    "gpu_network_bond_gateway": "10.0.0.1",
    "gpu_network_secondary_nics": [
        {"device": "ens6", "address": "10.0.1.11/24", "table": 101, "gateway": "10.0.1.1"},
        {"device": "ens7", "address": "10.0.1.12/24", "table": 102, "gateway": "10.0.1.1"},
        {"device": "ens8", "address": "10.0.1.13/24", "table": 103, "gateway": "10.0.1.1", "priority": 900},
        {"device": "ens9", "address": "10.0.1.14/24", "table": 104, "mtu": 4200},
    ],
    # The one source of NCCL settings, which the launchers give the ranks too.
    "gpuops_nccl": {"NCCL_SOCKET_IFNAME": "bond0", "NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": 3,
                    "NCCL_SOCKET_NTHREADS": 4, "NCCL_NSOCKS_PERTHREAD": "4", "NCCL_DEBUG": "WARN", "NCCL_IB_DISABLE": False},
}
# In name order, booleans as 1 and 0.
EXPECTED_NCCL = [
    "NCCL_DEBUG=WARN",
    "NCCL_IB_DISABLE=0",
    "NCCL_IB_GID_INDEX=3",
    "NCCL_IB_HCA=mlx5_0,mlx5_1",
    "NCCL_NSOCKS_PERTHREAD=4",
    "NCCL_SOCKET_IFNAME=bond0",
    "NCCL_SOCKET_NTHREADS=4",
]
# device, address, table, rule priority, MTU, gateway
SECONDARY = [
    ("ens6", "10.0.1.11", 101, 1000, 9000, "10.0.1.1"),
    ("ens7", "10.0.1.12", 102, 1000, 9000, "10.0.1.1"),
    ("ens8", "10.0.1.13", 103, 900, 9000, "10.0.1.1"),
    ("ens9", "10.0.1.14", 104, 1000, 4200, ""),
]


# The same bond without GPU NICs or NCCL file: enough to show the platform picks its renderer and
# that renderer's files validate, where the full node is already rendered for the same vars file.
BOND_ONLY = dict(NODE_VARS, gpu_network_secondary_nics=[], gpu_network_nccl_enabled=False)

DGX_NETCFG = """\
# DGX OS installer's file: the management port
network:
  version: 2
  renderer: networkd
  ethernets:
    enp226s0:
      dhcp4: true
"""


def dgx_root(root):
    (root / "etc/netplan").mkdir(parents=True)
    (root / "etc/dgx-release").write_text('DGX_NAME="DGX Server"\nDGX_OTA_VERSION="6.2.1"\n')
    (root / "etc/netplan/01-netcfg.yaml").write_text(DGX_NETCFG)
    (root / "etc/netplan/01-netcfg.yaml").chmod(0o600)


FLEET = [
    ("rhel7", "rhel7", NODE_VARS, None),
    ("centos7", "centos7", BOND_ONLY, None),
    ("rhel8", "rhel8", BOND_ONLY, None),
    ("rhel9", "rhel9", NODE_VARS, None),
    ("ubuntu2004", "ubuntu2004", NODE_VARS, None),
    ("ubuntu2204", "ubuntu2204", NODE_VARS, None),
    ("ubuntu2404", "ubuntu2404", NODE_VARS, None),
    ("dgx", "ubuntu2204", NODE_VARS, dgx_root),
    ("debian12_networkd", "debian12", dict(NODE_VARS, gpu_network_renderer="networkd"), None),
    # a cloud VM: no bond, only the per-GPU elastic NICs
    ("ubuntu2204_cloud", "ubuntu2204", dict(NODE_VARS, gpu_network_bond_enabled=False), None),
]


def clashing_root(root):
    """bond0 already exists as an ethernet in another netplan file: netplan refuses the merge."""
    (root / "etc/netplan").mkdir(parents=True)
    clash = root / "etc/netplan/50-clash.yaml"
    clash.write_text("network:\n  version: 2\n  ethernets:\n    bond0:\n      dhcp4: true\n")
    clash.chmod(0o600)


# Single-purpose nodes: (label, platform, role variables, prepare_root, validators on PATH)
SINGLE = [
    ("clash", "ubuntu2204", NODE_VARS, clashing_root, True),
    ("removing_nics", "ubuntu2404", NODE_VARS, None, True),
    # nmcli before NetworkManager 1.40 (RHEL 8.6 and older) has no --offline: here no nmcli at all.
    ("nm_without_offline_nmcli", "rhel8", dict(BOND_ONLY, gpu_network_bond_members=["ens1", "ens2"]), None, False),
]
# What the second run changes on the removing_nics node.
REMOVING_NICS_AGAIN = dict(NODE_VARS, gpu_network_secondary_nics=[])


def nic(**overrides):
    return [dict({"device": "ens6", "address": "10.0.1.11/24", "table": 101}, **overrides)]


BAD_INPUT = {
    "bond with one member": (
        {"gpu_network_bond_members": ["ens1f0np0"]},
        ["gpu_network_bond_members", "at least 2"]),
    "bond member repeated": (
        {"gpu_network_bond_members": ["ens1f0np0", "ens1f0np0"]},
        ["gpu_network_bond_members", "distinct"]),
    "unknown xmit_hash_policy": (
        {"gpu_network_bond_xmit_hash_policy": "layer3+5"},
        ["gpu_network_bond_xmit_hash_policy", "layer2, layer2+3, layer3+4"]),
    "unknown lacp_rate": (
        {"gpu_network_bond_lacp_rate": "medium"},
        ["gpu_network_bond_lacp_rate", "slow, fast"]),
    "bond MTU above 9216": (
        {"gpu_network_bond_mtu": 9500},
        ["gpu_network_bond_mtu", "68 to 9216", "9500"]),
    "secondary MTU below 68": (
        {"gpu_network_secondary_nics": nic(mtu=60)},
        ["gpu_network_secondary_nics: got [", '"mtu": 60', "expected an mtu, where a NIC sets one, from 68 to 9216"]),
    "bond address not CIDR": (
        {"gpu_network_bond_addresses": ["10.0.0.11"]},
        ["gpu_network_bond_addresses", "CIDR"]),
    "secondary address not CIDR": (
        {"gpu_network_secondary_nics": nic(address="10.0.1.300/24")},
        ["gpu_network_secondary_nics: got [", "10.0.1.300/24", "expected an address on every NIC in IPv4 CIDR form"]),
    "secondary gateway not an address": (
        {"gpu_network_secondary_nics": nic(gateway="router1")},
        ["gpu_network_secondary_nics: got [", "router1", "expected a gateway, where a NIC sets one, that is an IPv4 address"]),
    "duplicate routing table ids": (
        {"gpu_network_secondary_nics": nic() + nic(device="ens7", address="10.0.1.12/24")},
        ["gpu_network_secondary_nics: got [", "expected a distinct routing table id for every NIC"]),
    "reserved routing table id (main)": (
        {"gpu_network_secondary_nics": nic(table=254)},
        ["gpu_network_secondary_nics: got [", '"table": 254', "other than 253, 254 and 255"]),
    "routing table id not a number": (
        {"gpu_network_secondary_nics": nic(table="gpu0")},
        ["gpu_network_secondary_nics", "table", "int"]),
    "secondary NIC missing its address": (
        {"gpu_network_secondary_nics": [{"device": "ens6", "table": 101}]},
        ["gpu_network_secondary_nics", "address"]),
    "secondary NIC that is a bond member": (
        {"gpu_network_secondary_nics": nic(device="ens1f0np0")},
        ["gpu_network_secondary_nics", "none of them in the bond"]),
    # The role's own NCCL variables are gone: one still set names gpuops_nccl, which replaces it.
    "removed NCCL variable": (
        {"gpu_network_nccl_socket_ifname": "bond0"},
        ["gpu_network_nccl_socket_ifname: got 'bond0'; expected nothing (a removed variable); give NCCL_SOCKET_IFNAME "
         "in gpuops_nccl, which writes /etc/nccl.conf and the ranks' environment"]),
    "removed free-form NCCL variables": (
        {"gpu_network_nccl_extra": {"NCCL_DEBUG": "WARN"}},
        ["gpu_network_nccl_extra: got {\"NCCL_DEBUG\": \"WARN\"}; expected nothing (a removed variable); give these "
         "NCCL_* settings in gpuops_nccl"]),
    "renderer not available on the OS": (
        {"gpu_network_renderer": "netplan"},
        ["gpu_network_renderer", "'netplan' is not supported on RedHat 9.4", "networkmanager"]),
}


# Cases that need another platform than RHEL 9.
BAD_PLATFORM = {
    "unsupported OS": ("sles15", {}, ["gpu_network_renderer: '' is not supported on SLES 15.5"]),
    # ifupdown needs no systemd, so this reaches the root-directory check on any host.
    "apply into an alternate root": (
        "debian12", {"gpu_network_apply": True},
        ["gpu_network_apply: got true (with gpu_network_root_dir=", "expected false while gpu_network_root_dir is set"]),
}
ALL_BAD = dict({case: ("rhel9", overrides, fragments) for case, (overrides, fragments) in BAD_INPUT.items()},
               **BAD_PLATFORM)


def host_label(case):
    return "bad_" + "".join(c if c.isalnum() else "_" for c in case)


def case(label, platform, role_vars, prepare=None, tool_dirs=()):
    return RoleCase(label, "gpu_network", platform, dict(role_vars, gpu_network_root_dir=CASE_ROOT), prepare,
                    tool_dirs=tuple(tool_dirs))


def first_run_cases(validators_bin_dir):
    """Every case of the first run: the fleet, the single-purpose nodes, every bad input."""
    validators = [validators_bin_dir]
    return ([case(label, platform, role_vars, prepare, validators) for label, platform, role_vars, prepare in FLEET]
            + [case(label, platform, role_vars, prepare, validators if on_path else ())
               for label, platform, role_vars, prepare, on_path in SINGLE]
            + [case(host_label(name), platform, dict(NODE_VARS, **overrides))
               for name, (platform, overrides, unused_fragments) in sorted(ALL_BAD.items())])


def second_run_cases(validators_bin_dir):
    """The fleet again (idempotence) and the removing_nics node without its secondary NICs."""
    validators = [validators_bin_dir]
    return ([case(label, platform, role_vars, prepare, validators) for label, platform, role_vars, prepare in FLEET]
            + [case("removing_nics", "ubuntu2404", REMOVING_NICS_AGAIN, None, validators)])


def check_mode_case(validators_bin_dir):
    return case("check_mode", "rhel9", BOND_ONLY, None, [validators_bin_dir])
