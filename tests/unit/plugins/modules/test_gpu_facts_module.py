# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.modules import gpu_facts

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "nvidia_smi")


def recorded(system, name):
    with open(os.path.join(FIXTURES, system, name)) as handle:
        return handle.read()


def run_module(monkeypatch, args, run_command, bin_paths):
    """Run the module's main() with run_command and get_bin_path replaced; return (failed, result)."""
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kwargs: run_command(argv, kwargs))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, opt_dirs=None: bin_paths.get(name))
    outcome = {}

    def exit_json(self, **result):
        outcome.update(failed=False, result=result)
        raise SystemExit(0)

    def fail_json(self, msg, **result):
        result["msg"] = msg
        outcome.update(failed=True, result=result)
        raise SystemExit(1)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            gpu_facts.main()
    return outcome["failed"], outcome["result"]


def smi_for(system):
    calls = []

    def run(argv, kwargs):
        calls.append((list(argv), kwargs))
        if argv[1:] == ["topo", "-m"]:
            return 0, recorded(system, "topo.txt"), ""
        if len(argv) == 1:
            return 0, recorded(system, "nvidia_smi.txt"), ""
        return 0, recorded(system, "query.csv"), ""

    return run, calls


def test_h100_facts_through_the_module(monkeypatch):
    run, calls = smi_for("h100_hgx")
    failed, result = run_module(monkeypatch, {"gather": ["gpu"]}, run, {"nvidia-smi": "/usr/bin/nvidia-smi"})
    assert failed is False
    assert result["changed"] is False
    gpu = result["ansible_facts"]["gpuops_gpu"]
    assert gpu["present"] is True
    assert (gpu["count"], gpu["product"], gpu["cuda_version"], gpu["nvlink"]) == (8, "NVIDIA H100 80GB HBM3", "12.2", True)
    assert (gpu["compute_capability"], gpu["mig_capable"]) == ("9.0", True)
    assert calls[0][0][1] == ("--query-gpu=index,name,uuid,memory.total,driver_version,pci.bus_id,"
                              "mig.mode.current,compute_cap")
    assert set(result["ansible_facts"]) == {"gpuops_gpu"}
    # A list argv, never a shell string, and a C locale so the parsers see the English messages.
    assert calls[0][0][0] == "/usr/bin/nvidia-smi"
    assert all(isinstance(argv, list) for argv, dummy in calls)
    assert all(kwargs.get("environ_update") == {"LC_ALL": "C"} for dummy, kwargs in calls)


def test_no_nvidia_smi_is_not_a_failure(monkeypatch):
    def run(argv, kwargs):
        raise AssertionError("nothing should run: %s" % argv)

    failed, result = run_module(monkeypatch, {"gather": ["gpu"]}, run, {})
    assert failed is False
    assert result["ansible_facts"]["gpuops_gpu"] == {
        "present": False, "reason": "nvidia-smi was not found on this host", "count": 0}


def test_malformed_output_fails_the_task_with_the_reason(monkeypatch):
    def run(argv, kwargs):
        return 0, "0, Tesla T4\n", ""

    failed, result = run_module(monkeypatch, {"gather": ["gpu"]}, run, {"nvidia-smi": "/usr/bin/nvidia-smi"})
    assert failed is True
    assert "line 1 has 2 field(s), expected 8" in result["msg"]


def test_nvidia_smi_path_that_is_not_executable_fails(monkeypatch, tmp_path):
    failed, result = run_module(monkeypatch, {"gather": ["gpu"], "nvidia_smi_path": str(tmp_path / "nvidia-smi")},
                                lambda argv, kwargs: (0, "", ""), {})
    assert failed is True
    assert result["msg"].endswith("is not an executable file")


def test_all_groups_from_a_host_root(monkeypatch, tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "meminfo").write_text(
        "HugePages_Total:       8\nHugePages_Free:        8\nHugePages_Rsvd:        0\n"
        "HugePages_Surp:        0\nHugepagesize:    1048576 kB\n")
    (tmp_path / "sys" / "class" / "net" / "eth0").mkdir(parents=True)
    (tmp_path / "sys" / "class" / "net" / "eth0" / "mtu").write_text("9000\n")
    ip_json = json.dumps([{"ifname": "eth0", "addr_info": [{"family": "inet", "local": "10.1.0.2", "prefixlen": 16,
                                                            "scope": "global"}]}])

    def run(argv, kwargs):
        if argv[0] == "/usr/sbin/ip":
            return 0, ip_json, ""
        return 6, "No devices were found\n", ""

    failed, result = run_module(monkeypatch, {"host_root": str(tmp_path)}, run,
                                {"nvidia-smi": "/usr/bin/nvidia-smi", "ip": "/usr/sbin/ip"})
    assert failed is False
    facts = result["ansible_facts"]
    assert facts["gpuops_gpu"] == {"present": False, "reason": "nvidia-smi: No devices were found", "count": 0}
    assert facts["gpuops_hugepages"]["default_size_kb"] == 1048576
    assert facts["gpuops_hugepages"]["total"] == 8
    assert facts["gpuops_nics"][0]["name"] == "eth0"
    assert facts["gpuops_nics"][0]["mtu"] == 9000
    assert facts["gpuops_nics"][0]["addresses"][0]["address"] == "10.1.0.2"
