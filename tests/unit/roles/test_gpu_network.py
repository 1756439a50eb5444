"""The gpu_network role's RHEL 7/8/9, Ubuntu, DGX OS and systemd-networkd paths, rendered on localhost.

Those paths cannot converge on the Debian lab nodes, so each test runs the role through
ansible-playbook against localhost (connection local) with the target's facts in the play and
gpu_network_root_dir pointing at a scratch directory, then reads what was written there.

The validators are the real ones where Debian has them: netplan's generator (the program behind
"netplan generate") and nmcli from NetworkManager 1.42 are unpacked from Debian's packages into the
project cache (never installed, so the host's network is untouched) and put first on PATH as
"netplan" and "nmcli". The role's template tasks run them on every file before it is written, and
the tests run them again on the result to see how netplan and NetworkManager read it.
"""

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuops_testlib.ansible_run import CACHE_ROOT, ansible_env, run_playbook, write_play
from gpuops_testlib.role_cases import platform_facts
VALIDATORS_DIR = Path(CACHE_ROOT) / "gpu-network-validators" / "bookworm"
VALIDATOR_PACKAGES = ["netplan.io", "libnetplan0", "network-manager", "libnm0"]

FACTS = {
    "rhel7": platform_facts("RedHat", "7.9", "RedHat"),
    "centos7": platform_facts("CentOS", "7.9", "RedHat"),
    "rhel8": platform_facts("RedHat", "8.10", "RedHat"),
    "rhel9": platform_facts("RedHat", "9.4", "RedHat"),
    "ubuntu2004": platform_facts("Ubuntu", "20.04", "Debian"),
    "ubuntu2204": platform_facts("Ubuntu", "22.04", "Debian"),
    "ubuntu2404": platform_facts("Ubuntu", "24.04", "Debian"),
    "debian12": platform_facts("Debian", "12.12", "Debian"),
    "sles15": platform_facts("SLES", "15.5", "Suse"),
}

# A DGX-style node: an LACP bond over two ports, four GPU NICs on one subnet (the cloud case where
# replies would otherwise all leave by the first NIC), one without a gateway and with its own MTU.
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
    "gpu_network_nccl_socket_ifname": "bond0",
    "gpu_network_nccl_ib_hca": "mlx5_0,mlx5_1",
    "gpu_network_nccl_ib_gid_index": 3,
    "gpu_network_nccl_socket_nthreads": 4,
    "gpu_network_nccl_nsocks_perthread": 4,
    "gpu_network_nccl_extra": {"NCCL_DEBUG": "WARN", "NCCL_IB_DISABLE": False},
}
EXPECTED_NCCL = [
    "NCCL_SOCKET_IFNAME=bond0",
    "NCCL_IB_HCA=mlx5_0,mlx5_1",
    "NCCL_IB_GID_INDEX=3",
    "NCCL_SOCKET_NTHREADS=4",
    "NCCL_NSOCKS_PERTHREAD=4",
    "NCCL_DEBUG=WARN",
    "NCCL_IB_DISABLE=0",
]
# device, address, table, rule priority, MTU, gateway
SECONDARY = [
    ("ens6", "10.0.1.11", 101, 1000, 9000, "10.0.1.1"),
    ("ens7", "10.0.1.12", 102, 1000, 9000, "10.0.1.1"),
    ("ens8", "10.0.1.13", 103, 900, 9000, "10.0.1.1"),
    ("ens9", "10.0.1.14", 104, 1000, 4200, ""),
]


# --- running the role -------------------------------------------------------------------------


class PlayView:
    """One inventory host's share of an ansible.posix.json document, and the files written under its root."""

    def __init__(self, run, host, root):
        self.run = run
        self.host = host
        self.root = root
        self.tasks = [task for play in run.document.get("plays", []) for task in play["tasks"]
                      if host in task["hosts"]]

    @property
    def rc(self):
        return self.run.rc

    @property
    def stats(self):
        return self.run.document.get("stats", {}).get(self.host, {})

    def results(self, name_part):
        return [task["hosts"][self.host] for task in self.tasks if name_part in task["task"]["name"]]

    def changed_tasks(self):
        return [task["task"]["name"] for task in self.tasks if task["hosts"][self.host].get("changed")]

    def validators(self, name_part):
        """The validate commands the template tasks whose name contains name_part ran."""
        commands = set()
        for result in self.results(name_part):
            for item in result.get("results", [result]):
                command = item.get("invocation", {}).get("module_args", {}).get("validate")
                if command:
                    commands.add(command)
        return commands

    def failure_messages(self):
        messages = []
        for task in self.tasks:
            result = task["hosts"][self.host]
            for item in result.get("results", [result]):
                if item.get("failed"):
                    messages.append(str(item.get("msg")))
        return messages or [self.run.stderr[-3000:]]

    def written(self):
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob("*") if path.is_file())


class PlaybookRun:
    def __init__(self, rc, document, stderr, roots):
        self.rc = rc
        self.document = document
        self.stderr = stderr
        self.roots = roots

    def play(self, label):
        return PlayView(self, label, self.roots[label])


PLAYBOOK = [{
    "name": "gpu_network rendered for another platform",
    "hosts": "all",
    "gather_facts": False,
    "vars": {"ansible_facts": "{{ test_platform_facts }}"},
    "roles": [{"role": "gpuops.cluster.gpu_network"}],
}]


def run_plays(work_dir, nodes, extra_args=(), path_prefix=None):
    """Run gpuops.cluster.gpu_network once for every (label, platform, role_vars, prepare_root), in
    one ansible-playbook call: each label is an inventory host on localhost (connection local) with
    that platform's facts, rendering under work_dir/label. The hosts run in parallel."""
    roots = {}
    hosts = {}
    for label, platform, role_vars, prepare_root in nodes:
        root = work_dir / label
        if not root.exists():
            root.mkdir(parents=True)
            if prepare_root:
                prepare_root(root)
        roots[label] = root
        hosts[label] = dict(role_vars, ansible_connection="local", ansible_python_interpreter=sys.executable,
                            test_platform_facts=FACTS[platform], gpu_network_root_dir=str(root))
    inventory = work_dir / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}, sort_keys=False))
    playbook = write_play(work_dir / "play.yml", PLAYBOOK)
    env = ansible_env(path_prefix=path_prefix, ANSIBLE_LOCAL_TEMP=work_dir / ".ansible-local")
    done = run_playbook(playbook, inventory, options=extra_args, env=env, timeout=900)
    return PlaybookRun(done.rc, done.document, done.stderr, roots)


def run_role(tmp_path, platform, role_vars, extra_args=(), path_prefix=None, prepare_root=None):
    """One play as `platform`, rendering under tmp_path/node."""
    run = run_plays(tmp_path, [("node", platform, role_vars, prepare_root)], extra_args, path_prefix)
    return run.play("node")


def converge(tmp_path, platform, role_vars=None, **kwargs):
    result = run_role(tmp_path, platform, NODE_VARS if role_vars is None else role_vars, **kwargs)
    assert result.rc == 0, result.failure_messages()
    return result


# --- the real validators, unpacked from Debian packages -----------------------------------------


@pytest.fixture(scope="session")
def validators_bin():
    """A directory with "netplan" (generate only) and "nmcli" wrappers around Debian's binaries."""
    bin_dir = VALIDATORS_DIR / "bin"
    if not (bin_dir / "nmcli").exists():
        partial = VALIDATORS_DIR.with_name(VALIDATORS_DIR.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        (partial / "debs").mkdir(parents=True)
        download = subprocess.run(["apt-get", "download", *VALIDATOR_PACKAGES], cwd=partial / "debs",
                                  capture_output=True, text=True, check=False)
        if download.returncode != 0:
            pytest.fail("cannot fetch the validators' Debian packages " + " ".join(VALIDATOR_PACKAGES)
                        + " with apt-get download (run apt-get update?):\n" + download.stderr)
        for deb in sorted((partial / "debs").glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(partial / "root")], check=True)
        libs = partial / "root" / "usr" / "lib" / "x86_64-linux-gnu"
        final_root = VALIDATORS_DIR / "root"
        final_libs = final_root / "usr" / "lib" / "x86_64-linux-gnu"
        wrappers = {
            # "netplan generate [--root-dir DIR]" is the CLI's front for this program.
            "netplan": (
                '#!/bin/sh\n'
                '[ "$1" = generate ] || { echo "this netplan runs only generate" >&2; exit 2; }\n'
                'shift\n'
                f'LD_LIBRARY_PATH="{final_libs}" exec "{final_root}/usr/libexec/netplan/generate" "$@"\n'
            ),
            "nmcli": f'#!/bin/sh\nLD_LIBRARY_PATH="{final_libs}" exec "{final_root}/usr/bin/nmcli" "$@"\n',
        }
        (partial / "bin").mkdir()
        for name, text in wrappers.items():
            (partial / "bin" / name).write_text(text)
            (partial / "bin" / name).chmod(0o755)
        assert libs.is_dir(), f"no {libs} in the unpacked packages"
        shutil.rmtree(VALIDATORS_DIR, ignore_errors=True)
        partial.rename(VALIDATORS_DIR)
    probe = subprocess.run([str(bin_dir / "nmcli"), "--version"], capture_output=True, text=True, check=False)
    assert probe.returncode == 0, f"the unpacked nmcli does not run: {probe.stderr}"
    return bin_dir


def nmcli_reads(validators_bin, keyfile):
    """The keyfile as NetworkManager normalises it after reading and verifying it."""
    with open(keyfile, "rb") as stdin:
        proc = subprocess.run([str(validators_bin / "nmcli"), "--offline", "connection", "modify"],
                              stdin=stdin, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"nmcli --offline rejects {keyfile}: {proc.stderr}"
    return ini(proc.stdout)


def ini(text):
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return parser


def unit_sections(path):
    """A systemd .network/.netdev file as a list of (section, {key: [values]}); sections repeat."""
    sections = []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            sections.append((line.strip("[]"), {}))
        else:
            key, value = line.split("=", 1)
            sections[-1][1].setdefault(key, []).append(value)
    return sections


def nccl_lines(root):
    return [line for line in (root / "etc/nccl.conf").read_text().splitlines() if line and not line.startswith("#")]


def mode(path):
    return oct(path.stat().st_mode & 0o777)


# --- every platform, rendered in one ansible-playbook run, then run again ------------------------

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


@pytest.fixture(scope="session")
def fleet_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gpu_network_fleet")


@pytest.fixture(scope="session")
def fleet(fleet_dir, validators_bin):
    run = run_plays(fleet_dir, FLEET, path_prefix=validators_bin)
    assert run.rc == 0, {node[0]: run.play(node[0]).failure_messages() for node in FLEET}
    return run


@pytest.fixture(scope="session")
def fleet_second_run(fleet, fleet_dir, validators_bin):
    return run_plays(fleet_dir, FLEET, path_prefix=validators_bin)


def vars_file_loaded(play):
    (loaded,) = play.results("Load the most specific OS variables")
    return Path(loaded["ansible_included_var_files"][0]).name


# --- RHEL 8 and 9: NetworkManager keyfiles ------------------------------------------------------


def test_rhel9_renders_networkmanager_keyfiles_that_nmcli_reads_back(fleet, validators_bin):
    play = fleet.play("rhel9")
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


def test_rhel8_renders_networkmanager_keyfiles(fleet, validators_bin):
    play = fleet.play("rhel8")
    assert vars_file_loaded(play) == "RedHat.yml"
    nm_dir = play.root / "etc/NetworkManager/system-connections"
    assert play.written() == sorted(f"etc/NetworkManager/system-connections/{name}.nmconnection" for name in
                                    ["gpu-network-bond0", "gpu-network-bond0-port-ens1f0np0",
                                     "gpu-network-bond0-port-ens1f1np1"])
    bond = nmcli_reads(validators_bin, nm_dir / "gpu-network-bond0.nmconnection")
    assert bond["bond"]["mode"] == "802.3ad" and bond["bond"]["xmit_hash_policy"] == "layer3+4"


def test_networkmanager_without_offline_nmcli_checks_keyfiles_itself(tmp_path):
    # nmcli before NetworkManager 1.40 (RHEL 8.6 and older) has no --offline; with no nmcli on PATH
    # at all the role must fall back to its own keyfile check rather than skip validation.
    play = converge(tmp_path, "rhel8", dict(BOND_ONLY, gpu_network_bond_members=["ens1", "ens2"]))
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


def test_rhel7_renders_ifcfg_route_and_rule_files(fleet):
    play = fleet.play("rhel7")
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


def test_centos7_takes_the_rhel7_path(fleet):
    play = fleet.play("centos7")
    assert vars_file_loaded(play) == "RedHat_7.yml"
    assert play.written() == [f"etc/sysconfig/network-scripts/ifcfg-{name}"
                              for name in ["bond0", "ens1f0np0", "ens1f1np1"]]
    assert sourced(play.root / "etc/sysconfig/network-scripts/ifcfg-bond0")["BONDING_OPTS"] == (
        "mode=802.3ad miimon=100 lacp_rate=fast xmit_hash_policy=layer3+4")


# --- Ubuntu and DGX OS: netplan -----------------------------------------------------------------


def netplan_generate(validators_bin, root):
    """Run netplan's generator over root and return the systemd-networkd files it produced."""
    proc = subprocess.run([str(validators_bin / "netplan"), "generate", "--root-dir", str(root)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"netplan generate rejects the configuration: {proc.stderr}"
    out = root / "run/systemd/network"
    return {path.name: unit_sections(path) for path in out.iterdir()}


def section(sections, name):
    found = [values for section_name, values in sections if section_name == name]
    assert found, f"no [{name}] in {sections}"
    return found


@pytest.mark.parametrize("label", ["ubuntu2004", "ubuntu2204", "ubuntu2404", "dgx"])
def test_ubuntu_and_dgx_render_netplan_that_netplan_generates(fleet, validators_bin, label):
    play = fleet.play(label)
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


def test_cloud_vm_without_bond_gets_only_its_gpu_nics(fleet, validators_bin):
    play = fleet.play("ubuntu2204_cloud")
    assert play.written() == ["etc/nccl.conf", "etc/netplan/61-gpu-network-secondary.yaml"]
    networkd = netplan_generate(validators_bin, play.root)
    assert sorted(name for name in networkd if name.endswith((".network", ".netdev"))) == [
        f"10-netplan-{device}.network" for device in ["ens6", "ens7", "ens8", "ens9"]]


def test_netplan_file_that_clashes_with_the_nodes_own_is_never_written(tmp_path, validators_bin):
    # bond0 already exists as an ethernet in another file: netplan refuses the merge, so the role
    # must stop before writing its bond file.
    def clashing_root(root):
        (root / "etc/netplan").mkdir(parents=True)
        clash = root / "etc/netplan/50-clash.yaml"
        clash.write_text("network:\n  version: 2\n  ethernets:\n    bond0:\n      dhcp4: true\n")
        clash.chmod(0o600)

    play = run_role(tmp_path, "ubuntu2204", NODE_VARS, path_prefix=validators_bin, prepare_root=clashing_root)
    assert play.rc != 0
    assert any("failed to validate" in message for message in play.failure_messages()), play.failure_messages()
    assert not (play.root / "etc/netplan/60-gpu-network-bond.yaml").exists()


def test_removing_all_secondary_nics_removes_their_netplan_file(tmp_path, validators_bin):
    converge(tmp_path, "ubuntu2404", path_prefix=validators_bin)
    play = converge(tmp_path, "ubuntu2404", dict(NODE_VARS, gpu_network_secondary_nics=[]),
                    path_prefix=validators_bin)
    assert play.written() == ["etc/nccl.conf", "etc/netplan/60-gpu-network-bond.yaml"]


# --- Debian with systemd-networkd (no offline validator exists) ---------------------------------


def test_debian_networkd_files(fleet):
    play = fleet.play("debian12_networkd")
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
def test_second_run_changes_nothing(fleet_second_run, label):
    assert fleet_second_run.rc == 0, fleet_second_run.play(label).failure_messages()
    assert fleet_second_run.play(label).changed_tasks() == []


def test_check_mode_writes_nothing_and_reports_the_changes(tmp_path, validators_bin):
    play = run_role(tmp_path, "rhel9", BOND_ONLY, extra_args=["--check", "--diff"], path_prefix=validators_bin)
    assert play.rc == 0, play.failure_messages()
    assert play.written() == []
    assert play.stats["changed"] > 0
    (bond,) = play.results("Write the bond's keyfile")
    assert bond["changed"] and "mode=802.3ad" in bond["diff"][0]["after"]


# --- bad input: each fails before any change, naming the variable and what was expected ---------


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
        ["gpu_network_secondary_nics[0]", "mtu 68 to 9216", "got 60"]),
    "bond address not CIDR": (
        {"gpu_network_bond_addresses": ["10.0.0.11"]},
        ["gpu_network_bond_addresses", "CIDR"]),
    "secondary address not CIDR": (
        {"gpu_network_secondary_nics": nic(address="10.0.1.300/24")},
        ["gpu_network_secondary_nics[0].address", "CIDR", "10.0.1.300/24"]),
    "secondary gateway not an address": (
        {"gpu_network_secondary_nics": nic(gateway="router1")},
        ["gpu_network_secondary_nics[0].gateway", "IPv4 address", "router1"]),
    "duplicate routing table ids": (
        {"gpu_network_secondary_nics": nic() + nic(device="ens7", address="10.0.1.12/24")},
        ["gpu_network_secondary_nics", "distinct routing table", "[101, 101]"]),
    "reserved routing table id (main)": (
        {"gpu_network_secondary_nics": nic(table=254)},
        ["gpu_network_secondary_nics[0]", "other than 253, 254 and 255", "got 254"]),
    "routing table id not a number": (
        {"gpu_network_secondary_nics": nic(table="gpu0")},
        ["gpu_network_secondary_nics", "table", "int"]),
    "secondary NIC missing its address": (
        {"gpu_network_secondary_nics": [{"device": "ens6", "table": 101}]},
        ["gpu_network_secondary_nics", "address"]),
    "secondary NIC that is a bond member": (
        {"gpu_network_secondary_nics": nic(device="ens1f0np0")},
        ["gpu_network_secondary_nics", "none of them in the bond"]),
    "NCCL extra value not a scalar": (
        {"gpu_network_nccl_extra": {"NCCL_ALGO": ["Ring", "Tree"]}},
        ["gpu_network_nccl_extra.NCCL_ALGO", "string, number or boolean", '["Ring", "Tree"]']),
    "NCCL extra name not NCCL_*": (
        {"gpu_network_nccl_extra": {"OMP_NUM_THREADS": 4}},
        ["gpu_network_nccl_extra.OMP_NUM_THREADS", "NCCL_*"]),
    "NCCL extra repeats a named setting": (
        {"gpu_network_nccl_extra": {"NCCL_SOCKET_IFNAME": "eth0"}},
        ["gpu_network_nccl_extra.NCCL_SOCKET_IFNAME", "not set by its own variable"]),
    "NCCL socket threads times sockets above 64": (
        {"gpu_network_nccl_socket_nthreads": 16, "gpu_network_nccl_nsocks_perthread": 8},
        ["gpu_network_nccl_nsocks_perthread", "product at most 64"]),
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
        ["gpu_network_apply: true cannot apply files rendered under gpu_network_root_dir"]),
    # This host, like the lab machines and their containers, runs no systemd for netplan to hand over to.
    "apply without systemd": (
        "ubuntu2204", {"gpu_network_apply": True},
        ["gpu_network_apply: true needs a running systemd to apply netplan", "systemd running: False"]),
}
ALL_BAD = dict({case: ("rhel9", overrides, fragments) for case, (overrides, fragments) in BAD_INPUT.items()},
               **BAD_PLATFORM)


def host_label(case):
    return "bad_" + "".join(c if c.isalnum() else "_" for c in case)


@pytest.fixture(scope="session")
def bad_input_run(tmp_path_factory):
    """Every bad-input case as its own host of one run, each failing on its own."""
    if Path("/run/systemd/system").exists():
        pytest.fail("the 'apply without systemd' case needs a host where systemd is not running, "
                    "like the lab machines and containers")
    nodes = [(host_label(case), platform, dict(NODE_VARS, **overrides), None)
             for case, (platform, overrides, unused_fragments) in sorted(ALL_BAD.items())]
    return run_plays(tmp_path_factory.mktemp("gpu_network_bad_input"), nodes)


@pytest.mark.parametrize("case", sorted(ALL_BAD))
def test_bad_input_fails_before_any_change(bad_input_run, case):
    expected_fragments = ALL_BAD[case][2]
    play = bad_input_run.play(host_label(case))
    assert play.stats.get("failures", 0) == 1, f"{case}: the role accepted it: {play.stats}"
    messages = "\n".join(play.failure_messages())
    for fragment in expected_fragments:
        assert fragment in messages, f"{case}: {fragment!r} missing from the failure:\n{messages}"
    assert play.changed_tasks() == []
    assert play.written() == [], f"{case}: files were written before the failure"
