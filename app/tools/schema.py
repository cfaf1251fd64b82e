"""Tool schemas: a JSON schema of a function's parameters, and arguments checked against it.

Owns what :mod:`app.tools.functions` derives from a function's signature: the description and
per-parameter text of a Google-style docstring (:func:`parse_docstring`), the JSON schema of a
type hint (:func:`schema_for`) and of all parameters (:func:`parameters_schema`), the Enum a
parameter takes (:func:`enum_in`), and the checks of the arguments a model sends
(:func:`check_arguments`, :func:`matches`, :func:`describe`).
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..errors import ToolArgumentError

__all__ = [
    "check_arguments",
    "describe",
    "enum_in",
    "matches",
    "parameters_schema",
    "parse_docstring",
    "schema_for",
]

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$", re.IGNORECASE)
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (first paragraph) and per-argument text of a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.match(line):
            break
        description.append(line.strip())
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    indent = 0
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args, current = True, None
            continue
        if not in_args:
            continue
        if not line.strip():
            current = None
            continue
        this_indent = len(line) - len(line.lstrip())
        match = _ARG_LINE.match(line)
        if match and (current is None or this_indent <= indent):
            current = match.group(1).lstrip("*")
            indent = this_indent
            params[current] = match.group(3).strip()
        elif current is not None and this_indent > indent:
            params[current] = f"{params[current]} {line.strip()}".strip()
        elif re.match(r"^\s*\w+\s*:\s*$", line):  # the next section (Returns:, Raises:)
            in_args = False
    return " ".join(description), params


def schema_for(annotation: Any) -> dict[str, Any]:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = schema_for(args[0])
        extra = [a for a in args[1:] if isinstance(a, str)]
        if extra:
            schema["description"] = extra[0]
        return schema
    if origin in (typing.Union, types.UnionType):
        # Optional[X] says None is a valid value: the model may send null for it.
        schemas = [schema_for(a) for a in args if a is not type(None)]
        if type(None) in args:
            schemas.append({"type": "null"})
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if origin is Literal:
        return {"enum": list(args)}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [m.value for m in annotation]}
    if annotation is str:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation in (list, tuple, set, frozenset) or origin in (
        list,
        tuple,
        set,
        frozenset,
        Sequence,
    ):
        array: dict[str, Any] = {"type": "array"}
        if args and args[-1] is not Ellipsis:
            array["items"] = schema_for(args[0])
        return array
    if annotation is dict or origin in (dict, Mapping):
        return {"type": "object"}
    raise TypeError(f"cannot describe parameter type {annotation!r} to a model")


def enum_in(annotation: Any) -> type[enum.Enum] | None:
    """The Enum a parameter takes (directly, ``Optional``, or ``Annotated``), if any."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return enum_in(args[0])
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return enum_in(options[0]) if len(options) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    return None


def matches(value: Any, schema: Mapping[str, Any]) -> bool:
    if "anyOf" in schema:
        return any(matches(value, s) for s in schema["anyOf"])
    if "enum" in schema:
        return value in schema["enum"]
    kind = schema.get("type")
    if kind is None:
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "array":
        items = schema.get("items")
        return isinstance(value, list) and (items is None or all(matches(v, items) for v in value))
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    return True


def describe(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(describe(s) for s in schema["anyOf"])
    return {
        "string": "a string",
        "boolean": "true or false",
        "integer": "an integer",
        "number": "a number",
        "array": "a list",
        "object": "an object",
        "null": "null",
    }.get(str(schema.get("type")), "a value")


def parameters_schema(
    tool_name: str,
    signature: inspect.Signature,
    hints: Mapping[str, Any],
    arg_docs: Mapping[str, str],
) -> tuple[dict[str, Any], dict[str, type[enum.Enum]]]:
    """The JSON schema of a function's parameters, and the Enum each Enum parameter takes.

    ``tool_name`` (the function's name) is for the error about a positional-only parameter.
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    enums: dict[str, type[enum.Enum]] = {}
    for param in signature.parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"tool {tool_name}: positional-only parameters cannot be named")
        annotation = hints.get(param.name, inspect.Parameter.empty)
        schema = schema_for(annotation)
        enum_type = enum_in(annotation)
        if enum_type is not None:
            enums[param.name] = enum_type
        if param.name in arg_docs and "description" not in schema:
            schema["description"] = arg_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif isinstance(param.default, str | int | float | bool) or param.default is None:
            schema["default"] = param.default
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return parameters, enums


def check_arguments(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any], signature: inspect.Signature
) -> None:
    """Raise :class:`ToolArgumentError` unless ``arguments`` fit the ``parameters`` schema.

    Unknown names are refused unless the function takes ``**kwargs``; required names must be
    present; each value must match its parameter's schema.
    """
    properties: Mapping[str, Any] = parameters.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    ):
        raise ToolArgumentError(f"unexpected argument(s) {', '.join(unknown)}")
    missing = [n for n in parameters.get("required", ()) if n not in arguments]
    if missing:
        raise ToolArgumentError(f"missing required argument(s) {', '.join(missing)}")
    for name, value in arguments.items():
        schema = properties.get(name)
        if schema is not None and not matches(value, schema):
            raise ToolArgumentError(mismatch(f"argument {name!r}", value, schema))


def mismatch(what: str, value: Any, schema: Mapping[str, Any]) -> str:
    """Why ``value`` does not match ``schema``, naming the first wrong item of a list
    (``item 2 of argument 'ids' should be an integer, got "two"``)."""
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(value, list) and isinstance(items, Mapping):
        for index, item in enumerate(value, 1):
            if not matches(item, items):
                return mismatch(f"item {index} of {what}", item, items)
    return f"{what} should be {describe(schema)}, got {json.dumps(value, default=str)[:80]}"
