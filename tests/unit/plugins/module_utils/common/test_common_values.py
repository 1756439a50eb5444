# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Values converted as users give them (common.values), the one-line wording of what is wrong, and a YAML
value as the API's text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import (
    NOT_SET, Problem, api_text, convert, convert_all,
)


@pytest.mark.parametrize("option, given, expected", [
    ({"type": "int"}, "3", 3),
    ({"type": "int"}, "-3", -3),
    ({"type": "float"}, "0.9", 0.9),
    ({"type": "bool"}, "false", False),
    ({"type": "bool"}, "yes", True),
    ({"type": "list", "elements": "int"}, [1, "2"], [1, 2]),
    ({"type": "str", "choices": ["2M", "1G"]}, "1G", "1G"),
    ({"type": "int"}, None, None),
])
def test_a_value_given_as_a_string_is_converted_to_the_type_of_its_option(option, given, expected):
    assert convert("x", given, option) == (expected, None)


@pytest.mark.parametrize("option, given, line", [
    ({"type": "int"}, "abc", "x: got 'abc'; expected a whole number"),
    ({"type": "int"}, "3.5", "x: got '3.5'; expected a whole number"),
    ({"type": "int"}, True, "x: got true; expected a whole number"),
    ({"type": "bool"}, "maybe", "x: got 'maybe'; expected true or false"),
    ({"type": "list", "elements": "int"}, ["1", "b"], "x: got [\"1\", \"b\"]; expected a list of whole numbers"),
    ({"type": "str", "choices": ["2M", "1G"]}, "4K", "x: got '4K'; expected one of 2M, 1G"),
    ({"type": "str", "required": True}, NOT_SET, "x: got nothing (not set); expected a string"),
    ({"type": "list", "elements": "str"}, "a,b", """x: got 'a,b'; expected a list of strings, given as YAML or JSON """
                                                 """(-e '{"x": [...]}')"""),
    ({"type": "dict"}, "k=v", """x: got 'k=v'; expected a mapping, given as YAML or JSON (-e '{"x": {...}}')"""),
])
def test_a_value_that_cannot_be_converted_is_one_line_naming_it_the_value_and_what_was_expected(option, given, line):
    value, problem = convert("x", given, option)
    assert value == given
    assert problem.line() == line


def test_a_secret_value_is_never_shown():
    dummy, problem = convert("registry_password", "hunter2", {"type": "int", "no_log": True})
    assert problem.line() == "registry_password: got a value (hidden: no_log); expected a whole number"
    assert "hunter2" not in problem.line()


def test_every_problem_of_a_spec_comes_at_once_and_only_the_wrong_ones():
    options = {"a": {"type": "int"}, "b": {"type": "bool"}, "c": {"type": "int"}, "d": {"type": "str"}}
    converted, problems = convert_all(options, {"a": "x", "b": "true", "c": "y"})
    assert converted == {"b": True}
    assert [problem.line() for problem in problems] == [
        "a: got 'x'; expected a whole number", "c: got 'y'; expected a whole number"]


def test_a_problem_about_several_variables_names_the_one_to_fix_first_and_shows_the_others():
    problem = Problem([("ranks", 5), ("workers", 2), ("slots", 1)], "workers x slots (2)")
    assert problem.line() == "ranks: got 5 (with workers=2, slots=1); expected workers x slots (2)"


@pytest.mark.parametrize("given, text", [(True, "true"), (False, "false"), (3, "3"), (0.5, "0.5"), ("x", "x"), (None, None)])
def test_a_yaml_value_becomes_the_text_the_api_takes(given, text):
    assert api_text(given) == text
