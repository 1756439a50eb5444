# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running a module's code in the test process: exit_json and fail_json become an exception to catch."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


class Exited(Exception):
    """What the module exited with: failed, and the result it returned."""

    def __init__(self, failed, result):
        super(Exited, self).__init__(result.get("msg", ""))
        self.failed = failed
        self.result = result


def catch_exits(monkeypatch):
    """exit_json and fail_json of every AnsibleModule raise Exited instead of ending the process."""
    def exit_json(self, **result):
        raise Exited(False, result)

    def fail_json(self, msg, **result):
        result["msg"] = msg
        raise Exited(True, result)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


def run_k8s_module(module_file, args, api, check_mode=False, diff=False):
    """Run a Kubernetes module's run_module against api (None: the test asserts no API client is ever built).

    Returns the Exited of its exit_json or fail_json; needs catch_exits in force."""
    def make_api(module):
        if api is None:
            raise AssertionError("the module built an API client")
        make_api.modules.append(module)
        return api
    make_api.modules = []

    with patch_module_args(dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)):
        module = module_file.AnsibleK8SModule(module_class=basic.AnsibleModule, argument_spec=module_file.argument_spec(),
                                              supports_check_mode=True)
        with pytest.raises(Exited) as caught:
            module_file.run_module(module, make_api=make_api)
    return caught.value
