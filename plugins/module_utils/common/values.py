# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Values as users give them, converted to the types an argument spec names, and the words for what is wrong.

Plain Python: the gpuops.cluster.check_inputs action gathers a run's values and evaluates the rules' Jinja; the
sweep plan and slurm_job's options word their problems the same way. Values arrive as users give them:
``-e name=3`` and INI inventories give strings, so a number or a boolean may be a string here; it is converted
as Ansible's own argument specs convert it, or it is a problem. Every problem is one line: the variable, the
value it got, and what was expected.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils.common.validation import (
    check_type_bool, check_type_dict, check_type_float, check_type_int, check_type_list, check_type_path,
    check_type_raw, check_type_str,
)

# Each type: its converter, what one value is, and what several are (a list's elements).
_CONVERTERS = {
    "str": (check_type_str, "a string", "strings"),
    "path": (check_type_path, "a path", "paths"),
    "int": (check_type_int, "a whole number", "whole numbers"),
    "float": (check_type_float, "a number", "numbers"),
    "bool": (check_type_bool, "true or false", "booleans"),
    "list": (check_type_list, "a list", "lists"),
    "dict": (check_type_dict, "a mapping", "mappings"),
    "raw": (check_type_raw, "any value", "values"),
}


class Problem:
    """One input that is wrong: the variables it is about, with their values, and what was expected."""

    def __init__(self, values, expected, secret=False):
        self.values = values
        self.expected = expected
        self.secret = secret

    def line(self):
        names = ", ".join(
            "{0}={1}".format(name, shown(value, self.secret)) for name, value in self.values[1:])
        name, value = self.values[0]
        got = "got {0}".format(shown(value, self.secret))
        if names:
            got = "{0} (with {1})".format(got, names)
        return "{0}: {1}; expected {2}".format(name, got, self.expected)

    def __eq__(self, other):
        return isinstance(other, Problem) and self.line() == other.line()

    def __repr__(self):
        return "Problem({0!r})".format(self.line())


class NotSet:
    """The value of a variable nobody set and no default gives."""

    def __repr__(self):
        return "not set"


NOT_SET = NotSet()


def shown(value, secret=False):
    """A value as a message shows it: strings quoted (so '3' and 3 differ), a secret never."""
    if value is NOT_SET:
        return "nothing (not set)"
    if secret:
        return "a value (hidden: no_log)"
    if isinstance(value, str):
        return "'{0}'".format(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _expected_type(option):
    kind = option.get("type", "str")
    if kind == "list" and option.get("elements"):
        elements = option["elements"]
        return "a list of {0}".format(_CONVERTERS.get(elements, (None, elements, elements))[2])
    return _CONVERTERS.get(kind, (None, kind, kind))[1]


def _convert_one(value, kind):
    converter = _CONVERTERS.get(kind, (check_type_raw,))[0]
    # A bool is an int to Python; a count or a port given as true is a mistake, not 1.
    if kind in ("int", "float") and isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    return converter(value)


def convert(name, value, option):
    """(converted value, Problem or None) for one variable of an argument spec's ``options``."""
    secret = bool(option.get("no_log"))
    if value is NOT_SET or value is None:
        if option.get("required") and value is NOT_SET:
            return value, Problem([(name, value)], _expected_type(option), secret)
        return value, None
    kind = option.get("type", "str")
    # The roles get the raw value, not this conversion: a list or mapping given as one string ("a,b" or
    # "k=v", as -e key=value gives it) would reach them as a string, so it is refused here.
    if kind in ("list", "dict") and isinstance(value, str):
        return value, Problem([(name, value)], "{0}, given as YAML or JSON (-e '{{\"{1}\": {2}}}')".format(
            _expected_type(option), name, "[...]" if kind == "list" else "{...}"), secret)
    try:
        converted = _convert_one(value, kind)
        if kind == "list" and option.get("elements"):
            converted = [_convert_one(element, option["elements"]) for element in converted]
    except (TypeError, ValueError):
        return value, Problem([(name, value)], _expected_type(option), secret)
    choices = option.get("choices")
    if choices is not None:
        chosen = converted if isinstance(converted, list) else [converted]
        if any(item not in choices for item in chosen):
            return value, Problem([(name, value)], "one of {0}".format(", ".join(str(c) for c in choices)), secret)
    return converted, None


def convert_all(options, values):
    """({name: converted}, [Problem]) for every option of a spec; ``values`` maps names to what was given."""
    converted, problems = {}, []
    for name in sorted(options):
        value, problem = convert(name, values.get(name, NOT_SET), options[name] or {})
        if problem is None:
            if value is not NOT_SET:
                converted[name] = value
        else:
            problems.append(problem)
    return converted, problems


def api_text(value):
    """Label, selector and env values are strings in the API (and in a script's environment); YAML hands over
    numbers and booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value
