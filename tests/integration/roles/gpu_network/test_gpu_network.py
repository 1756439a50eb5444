"""The gpu_network role's RHEL 7/8/9, Ubuntu, DGX OS and systemd-networkd paths, rendered on localhost.

Those paths cannot converge on the Debian lab nodes, so every case is a host of one ansible-playbook run
on localhost (connection local, conftest.py) with the target's facts and gpu_network_root_dir pointing at
its own scratch directory; each test reads what was written there.

The validators are the real ones where Debian has them: netplan's generator and nmcli from
NetworkManager 1.42 (gpu_network_validators), first on PATH as "netplan" and "nmcli". The role's template
tasks run them on every file before it is written, and the tests run them again on the result to see how
netplan and NetworkManager read it.
"""

import subprocess
from pathlib import Path

import pytest
import yaml

from gpuops_testlib.gpu_network_cases import DGX_NETCFG, EXPECTED_NCCL, FLEET, SECONDARY
from gpuops_testlib.gpu_network_validators import mode, nccl_lines, netplan_generate, nmcli_reads, unit_sections


def converged(results, label):
    """The case's share of the run, which must have succeeded."""
    assert results[label].rc == 0, results[label].failure_messages()
    return results[label]


def vars_file_loaded(play):
    (loaded,) = play.results("Load the most specific OS variables")
    return Path(loaded["ansible_included_var_files"][0]).name


# --- RHEL 8 and 9: NetworkManager keyfiles ------------------------------------------------------


def test_rhel9_renders_networkmanager_keyfiles_that_nmcli_reads_back(gpu_network, validators_bin):
    play = converged(gpu_network, "rhel9")
    assert vars_file_loaded(play) == "RedHat.yml"
    nm_dir = play.root / "etc/NetworkManager/system-connections"
    assert play.written() == sorted(
        ["etc/nccl.conf"]
        + [f"etc/NetworkManager/system-connections/{name}.nmconnection" for name in
           ["gpu-network-bond0", "gpu-network-bond0-port-ens1f0np0", "gpu-network-bond0-port-ens1f1np1",
            "gpu-network-nic-ens6", "gpu-network-nic-ens7", "gpu-network-nic-ens8", "gpu-network-nic-ens9"]])
    # Every keyfile went through "nmcli --offline" before it was written.
    assert play.validators("keyfile") == {"sh -c 'nmcli --offline connection modify < \"$1\" > /dev/null' nmcli-validate %s"}

    for keyfile in nm_dir.iterdir():
        assert mode(keyfile) == "0o600", f"NetworkManager ignores {keyfile.name} unless it is 0600"

    bond = nmcli_reads(validators_bin, nm_dir / "gpu-network-bond0.nmconnection")
    assert dict(bond["bond"]) == {"lacp_rate": "fast", "miimon": "100", "mode": "802.3ad",
                                  "xmit_hash_policy": "layer3+4"}
    assert bond["connection"]["type"] == "bond"
    assert bond["ethernet"]["mtu"] == "9000"
    assert bond["ipv4"]["method"] == "manual"
    assert bond["ipv4"]["address1"] == "10.0.0.11/24,10.0.0.1"

    for member in ["ens1f0np0", "ens1f1np1"]:
        port = nmcli_reads(validators_bin, nm_dir / f"gpu-network-bond0-port-{member}.nmconnection")
        assert port["connection"]["interface-name"] == member
        assert port["connection"]["master"] == "bond0"
        assert port["connection"]["slave-type"] == "bond"
        assert port["ethernet"]["mtu"] == "9000"

    for device, ip, table, priority, mtu, gateway in SECONDARY:
        nic = nmcli_reads(validators_bin, nm_dir / f"gpu-network-nic-{device}.nmconnection")
        ipv4 = nic["ipv4"]
        assert nic["ethernet"]["mtu"] == str(mtu)
        assert ipv4["address1"] == f"{ip}/24"
        assert ipv4["never-default"] == "true", "a GPU NIC must not take the main table's default route"
        assert ipv4["routing-rule1"] == f"priority {priority} from {ip} table {table}"
        assert ipv4["route1"] == "10.0.1.0/24"
        assert set(ipv4["route1_options"].split(",")) == {f"src={ip}", f"table={table}"}
        if gateway:
            assert ipv4["route2"] == f"0.0.0.0/0,{gateway}"
            assert ipv4["route2_options"] == f"table={table}"
        else:
            assert "route2" not in ipv4

    assert nccl_lines(play.root) == EXPECTED_NCCL


def test_rhel8_renders_networkmanager_keyfiles(gpu_network, validators_bin):
    play = converged(gpu_network, "rhel8")
    assert vars_file_loaded(play) == "RedHat.yml"
    nm_dir = play.root / "etc/NetworkManager/system-connections"
    assert play.written() == sorted(f"etc/NetworkManager/system-connections/{name}.nmconnection" for name in
                                    ["gpu-network-bond0", "gpu-network-bond0-port-ens1f0np0",
                                     "gpu-network-bond0-port-ens1f1np1"])
    bond = nmcli_reads(validators_bin, nm_dir / "gpu-network-bond0.nmconnection")
    assert bond["bond"]["mode"] == "802.3ad" and bond["bond"]["xmit_hash_policy"] == "layer3+4"


def test_networkmanager_without_offline_nmcli_checks_keyfiles_itself(gpu_network):
    # nmcli before NetworkManager 1.40 (RHEL 8.6 and older) has no --offline; with no nmcli on PATH
    # at all the role must fall back to its own keyfile check rather than skip validation.
    play = converged(gpu_network, "nm_without_offline_nmcli")
    (validator,) = play.validators("keyfile")
    assert "nmcli" not in validator and "configparser" in validator
    assert (play.root / "etc/NetworkManager/system-connections/gpu-network-bond0.nmconnection").exists()


# --- RHEL 7: ifcfg ------------------------------------------------------------------------------


def sourced(path):
    """The variables an ifcfg file sets, read the way network-scripts read it: sourced by bash."""
    proc = subprocess.run(["env", "-i", "bash", "-c", 'set -a; . "$1"; env -0', "ifcfg", str(path)],
                          capture_output=True, text=True, check=True)
    values = dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)
    for noise in ("PWD", "SHLVL", "_"):
        values.pop(noise, None)
    return values


def test_rhel7_renders_ifcfg_route_and_rule_files(gpu_network):
    play = converged(gpu_network, "rhel7")
    assert vars_file_loaded(play) == "RedHat_7.yml"
    scripts = play.root / "etc/sysconfig/network-scripts"
    expected = ["ifcfg-bond0", "ifcfg-ens1f0np0", "ifcfg-ens1f1np1"]
    for device in (nic_spec[0] for nic_spec in SECONDARY):
        expected += [f"ifcfg-{device}", f"route-{device}", f"rule-{device}"]
    assert play.written() == sorted(["etc/nccl.conf"] + [f"etc/sysconfig/network-scripts/{f}" for f in expected])
    assert play.validators("ifcfg file") == {"bash -n %s"}

    bond = sourced(scripts / "ifcfg-bond0")
    assert bond == {
        "DEVICE": "bond0", "NAME": "bond0", "TYPE": "Bond", "BONDING_MASTER": "yes",
        "BONDING_OPTS": "mode=802.3ad miimon=100 lacp_rate=fast xmit_hash_policy=layer3+4",
        "ONBOOT": "yes", "MTU": "9000", "BOOTPROTO": "none", "IPADDR0": "10.0.0.11", "PREFIX0": "24",
        "GATEWAY": "10.0.0.1", "IPV6INIT": "no",
    }
    for member in ["ens1f0np0", "ens1f1np1"]:
        port = sourced(scripts / f"ifcfg-{member}")
        assert (port["DEVICE"], port["MASTER"], port["SLAVE"], port["MTU"]) == (member, "bond0", "yes", "9000")

    for device, ip, table, priority, mtu, gateway in SECONDARY:
        nic = sourced(scripts / f"ifcfg-{device}")
        assert (nic["IPADDR"], nic["PREFIX"], nic["MTU"], nic["DEFROUTE"]) == (ip, "24", str(mtu), "no")
        routes = [line for line in (scripts / f"route-{device}").read_text().splitlines() if not line.startswith("#")]
        expected_routes = [f"10.0.1.0/24 dev {device} src {ip} table {table}"]
        if gateway:
            expected_routes.append(f"default via {gateway} dev {device} table {table}")
        assert routes == expected_routes
        rules = [line for line in (scripts / f"rule-{device}").read_text().splitlines() if not line.startswith("#")]
        assert rules == [f"from {ip} table {table} priority {priority}"]


def test_centos7_takes_the_rhel7_path(gpu_network):
    play = converged(gpu_network, "centos7")
    assert vars_file_loaded(play) == "RedHat_7.yml"
    assert play.written() == [f"etc/sysconfig/network-scripts/ifcfg-{name}"
                              for name in ["bond0", "ens1f0np0", "ens1f1np1"]]
    assert sourced(play.root / "etc/sysconfig/network-scripts/ifcfg-bond0")["BONDING_OPTS"] == (
        "mode=802.3ad miimon=100 lacp_rate=fast xmit_hash_policy=layer3+4")


# --- Ubuntu and DGX OS: netplan -----------------------------------------------------------------


def section(sections, name):
    found = [values for section_name, values in sections if section_name == name]
    assert found, f"no [{name}] in {sections}"
    return found


@pytest.mark.parametrize("label", ["ubuntu2004", "ubuntu2204", "ubuntu2404", "dgx"])
def test_ubuntu_and_dgx_render_netplan_that_netplan_generates(gpu_network, validators_bin, label):
    play = converged(gpu_network, label)
    assert vars_file_loaded(play) == ("DGX_Ubuntu.yml" if label == "dgx" else "Ubuntu.yml")
    ours = ["etc/nccl.conf", "etc/netplan/60-gpu-network-bond.yaml", "etc/netplan/61-gpu-network-secondary.yaml"]
    if label == "dgx":
        assert play.written() == sorted(ours + ["etc/dgx-release", "etc/netplan/01-netcfg.yaml"])
        assert (play.root / "etc/netplan/01-netcfg.yaml").read_text() == DGX_NETCFG
    else:
        assert play.written() == ours
    # one validator per file: each names the file it stands in for in the scratch root
    validators = play.validators("netplan file")
    assert len(validators) == 2 and all("netplan generate --root-dir" in v for v in validators), validators
    for name in ["60-gpu-network-bond.yaml", "61-gpu-network-secondary.yaml"]:
        assert mode(play.root / "etc/netplan" / name) == "0o600"

    bond_yaml = yaml.safe_load((play.root / "etc/netplan/60-gpu-network-bond.yaml").read_text())
    assert bond_yaml["network"]["bonds"]["bond0"]["parameters"] == {
        "mode": "802.3ad", "mii-monitor-interval": 100, "lacp-rate": "fast", "transmit-hash-policy": "layer3+4"}

    networkd = netplan_generate(validators_bin, play.root)
    if label == "dgx":
        assert "10-netplan-enp226s0.network" in networkd, "the DGX management port must survive"
    netdev = networkd["10-netplan-bond0.netdev"]
    assert section(netdev, "NetDev")[0]["Kind"] == ["bond"]
    assert section(netdev, "NetDev")[0]["MTUBytes"] == ["9000"]
    assert section(netdev, "Bond")[0] == {"Mode": ["802.3ad"], "LACPTransmitRate": ["fast"],
                                          "MIIMonitorSec": ["100ms"], "TransmitHashPolicy": ["layer3+4"]}
    bond_network = networkd["10-netplan-bond0.network"]
    assert section(bond_network, "Network")[0]["Address"] == ["10.0.0.11/24"]
    for member in ["ens1f0np0", "ens1f1np1"]:
        assert section(networkd[f"10-netplan-{member}.network"], "Network")[0]["Bond"] == ["bond0"]

    for device, ip, table, priority, mtu, gateway in SECONDARY:
        nic = networkd[f"10-netplan-{device}.network"]
        assert section(nic, "Link")[0]["MTUBytes"] == [str(mtu)]
        assert section(nic, "Network")[0]["Address"] == [f"{ip}/24"]
        assert section(nic, "RoutingPolicyRule") == [
            {"From": [ip], "Table": [str(table)], "Priority": [str(priority)]}]
        routes = section(nic, "Route")
        subnet_route = {"Destination": ["10.0.1.0/24"], "Scope": ["link"], "Table": [str(table)],
                        "PreferredSource": [ip]}
        assert subnet_route in [{k: v for k, v in r.items() if k in subnet_route} for r in routes], routes
        default_routes = [r for r in routes if r.get("Destination") == ["0.0.0.0/0"]]
        if gateway:
            assert [(r["Gateway"], r["Table"]) for r in default_routes] == [([gateway], [str(table)])]
        else:
            assert default_routes == []
        assert not any("Gateway" in values for values in section(nic, "Network")), "no default route in main"

    assert nccl_lines(play.root) == EXPECTED_NCCL


def test_cloud_vm_without_bond_gets_only_its_gpu_nics(gpu_network, validators_bin):
    play = converged(gpu_network, "ubuntu2204_cloud")
    assert play.written() == ["etc/nccl.conf", "etc/netplan/61-gpu-network-secondary.yaml"]
    networkd = netplan_generate(validators_bin, play.root)
    assert sorted(name for name in networkd if name.endswith((".network", ".netdev"))) == [
        f"10-netplan-{device}.network" for device in ["ens6", "ens7", "ens8", "ens9"]]


def test_netplan_file_that_clashes_with_the_nodes_own_is_never_written(gpu_network):
    # bond0 already exists as an ethernet in another file: netplan refuses the merge, so the role
    # must stop before writing its bond file.
    play = gpu_network["clash"]
    assert play.rc != 0
    assert any("failed to validate" in message for message in play.failure_messages()), play.failure_messages()
    assert not (play.root / "etc/netplan/60-gpu-network-bond.yaml").exists()


def test_removing_all_secondary_nics_removes_their_netplan_file(gpu_network, gpu_network_again):
    assert gpu_network["removing_nics"].rc == 0, gpu_network["removing_nics"].failure_messages()
    play = gpu_network_again["removing_nics"]
    assert play.rc == 0, play.failure_messages()
    assert play.written() == ["etc/nccl.conf", "etc/netplan/60-gpu-network-bond.yaml"]


# --- Debian with systemd-networkd (no offline validator exists) ---------------------------------


def test_debian_networkd_files(gpu_network):
    play = converged(gpu_network, "debian12_networkd")
    assert vars_file_loaded(play) == "Debian.yml"
    networkd = play.root / "etc/systemd/network"
    netdev = unit_sections(networkd / "60-gpu-network-bond0.netdev")
    assert netdev == [
        ("NetDev", {"Name": ["bond0"], "Kind": ["bond"], "MTUBytes": ["9000"]}),
        ("Bond", {"Mode": ["802.3ad"], "MIIMonitorSec": ["100ms"], "LACPTransmitRate": ["fast"],
                  "TransmitHashPolicy": ["layer3+4"]}),
    ]
    assert unit_sections(networkd / "60-gpu-network-bond0.network") == [
        ("Match", {"Name": ["bond0"]}), ("Link", {"MTUBytes": ["9000"]}),
        ("Network", {"Address": ["10.0.0.11/24"], "Gateway": ["10.0.0.1"]})]
    for member in ["ens1f0np0", "ens1f1np1"]:
        port = unit_sections(networkd / f"60-gpu-network-bond0-port-{member}.network")
        assert port == [("Match", {"Name": [member]}), ("Link", {"MTUBytes": ["9000"]}),
                        ("Network", {"Bond": ["bond0"]})]
    for device, ip, table, priority, mtu, gateway in SECONDARY:
        nic = unit_sections(networkd / f"61-gpu-network-nic-{device}.network")
        expected = [
            ("Match", {"Name": [device]}),
            ("Link", {"MTUBytes": [str(mtu)]}),
            ("Network", {"Address": [f"{ip}/24"]}),
            ("Route", {"Destination": ["10.0.1.0/24"], "Scope": ["link"], "PreferredSource": [ip],
                       "Table": [str(table)]}),
        ]
        if gateway:
            expected.append(("Route", {"Gateway": [gateway], "Table": [str(table)]}))
        expected.append(("RoutingPolicyRule", {"From": [ip], "Table": [str(table)], "Priority": [str(priority)]}))
        assert nic == expected
    assert nccl_lines(play.root) == EXPECTED_NCCL


# --- idempotence and check mode -----------------------------------------------------------------


@pytest.mark.parametrize("label", [node[0] for node in FLEET])
def test_second_run_changes_nothing(gpu_network_again, label):
    assert gpu_network_again[label].rc == 0, gpu_network_again[label].failure_messages()
    assert gpu_network_again[label].changed() == []


def test_check_mode_writes_nothing_and_reports_the_changes(gpu_network_check_mode):
    play = gpu_network_check_mode
    assert play.rc == 0, play.failure_messages()
    assert play.written() == []
    assert play.stats["changed"] > 0
    (bond,) = play.results("Write the bond's keyfile")
    assert bond["changed"] and "mode=802.3ad" in bond["diff"][0]["after"]
