"""Node parameters with rclpy's types and typing rules, for the DDS backend.

The rules are rclpy's (Jazzy), so that a node that works here works under ``ros2 run``:

* ``declare_parameter(name, default)`` fixes the parameter's type from the default; an
  override of another type (``rate: 10`` for a ``10.0`` default) is an error;
* ``declare_parameter(name, Parameter.Type.STRING)`` declares a typed parameter with no
  value: reading it before an override gave one raises
  :class:`ParameterUninitializedException`: this is how a node says "required";
* overrides come from ``--ros-args --params-file FILE`` and ``-p name:=value``
  (:mod:`robot_rl.ros.dds.arguments`), and from ``Node(parameter_overrides=[...])``.

Our exceptions are :class:`robot_rl.ros.errors.ParameterError` (a ConfigError), so the
node runner prints them as one line.
"""

from __future__ import annotations

import array
from enum import Enum
from typing import Any

from robot_rl.ros.errors import ParameterError


class Parameter:
    class Type(Enum):
        NOT_SET = 0
        BOOL = 1
        INTEGER = 2
        DOUBLE = 3
        STRING = 4
        BYTE_ARRAY = 5
        BOOL_ARRAY = 6
        INTEGER_ARRAY = 7
        DOUBLE_ARRAY = 8
        STRING_ARRAY = 9

        @classmethod
        def from_parameter_value(cls, value: Any) -> "Parameter.Type":
            if value is None:
                return cls.NOT_SET
            if isinstance(value, bool):
                return cls.BOOL
            if isinstance(value, int):
                return cls.INTEGER
            if isinstance(value, float):
                return cls.DOUBLE
            if isinstance(value, str):
                return cls.STRING
            if isinstance(value, (list, tuple, array.array)):
                for kind, elem in ((cls.BYTE_ARRAY, bytes), (cls.BOOL_ARRAY, bool), (cls.INTEGER_ARRAY, int),
                                   (cls.DOUBLE_ARRAY, float), (cls.STRING_ARRAY, str)):
                    if all(isinstance(v, elem) for v in value):
                        return kind
                raise TypeError(f"The given value is not a list of one of the allowed types '{value}'.")
            raise TypeError(f"The given value is not one of the allowed types '{value}'.")

    def __init__(self, name: str, type_: "Parameter.Type | None" = None, value: Any = None) -> None:
        if type_ is None:
            type_ = Parameter.Type.from_parameter_value(value)
        if not isinstance(type_, Parameter.Type):
            raise TypeError("type must be an instance of Parameter.Type")
        if value is not None and not (isinstance(value, (list, tuple)) and len(value) == 0) \
                and Parameter.Type.from_parameter_value(value) != type_:
            raise ValueError(f"Type {type_} and value {value!r} do not agree")
        self._name, self._type, self._value = name, type_, value

    @property
    def name(self) -> str:
        return self._name

    @property
    def type_(self) -> "Parameter.Type":
        return self._type

    @property
    def value(self) -> Any:
        return self._value

    def __repr__(self) -> str:
        return f"Parameter({self._name!r}, {self._type}, {self._value!r})"


class ParameterDescriptor:
    """The part of ``rcl_interfaces/ParameterDescriptor`` that changes behaviour here."""

    def __init__(self, *, description: str = "", read_only: bool = False, dynamic_typing: bool = False,
                 **_ignored: Any) -> None:
        self.description, self.read_only, self.dynamic_typing = description, read_only, dynamic_typing
        self.type = Parameter.Type.NOT_SET.value


class ParameterNotDeclaredException(ParameterError):
    def __init__(self, name: str, node: str = "") -> None:
        super().__init__(f"{_where(node)}parameter '{name}' has not been declared")


class ParameterAlreadyDeclaredException(ParameterError):
    def __init__(self, name: str, node: str = "") -> None:
        super().__init__(f"{_where(node)}parameter '{name}' has already been declared")


class ParameterUninitializedException(ParameterError):
    """A typed parameter was declared without a default and nothing set it: it is required."""

    def __init__(self, name: str, node: str = "", type_: "Parameter.Type | None" = None) -> None:
        kind = f" ({type_.name.lower()})" if type_ is not None else ""
        super().__init__(f"{_where(node)}required parameter '{name}'{kind} is not set; pass "
                         f"--ros-args -p {name}:=VALUE or set it in a --params-file")


class InvalidParameterTypeException(ParameterError):
    def __init__(self, name: str, expected: "Parameter.Type", got: Parameter, node: str = "") -> None:
        super().__init__(f"{_where(node)}parameter '{name}' expects {expected.name.lower()}, "
                         f"got {got.type_.name.lower()} {got.value!r}")


def _where(node: str) -> str:
    return f"node '{node}': " if node else ""


class ParameterTable:
    """The declared parameters of one node, and the overrides waiting to be declared."""

    def __init__(self, node_name: str, overrides: dict[str, Any]) -> None:
        self.node_name = node_name
        self.overrides = dict(overrides)
        self.values: dict[str, Parameter] = {}
        self.types: dict[str, Parameter.Type | None] = {}  # None: dynamically typed

    def declare(self, name: str, value: Any = None, descriptor: ParameterDescriptor | None = None,
                ignore_override: bool = False) -> Parameter:
        if name in self.values:
            raise ParameterAlreadyDeclaredException(name, self.node_name)
        if not name or name.startswith(".") or name.endswith(".") or ".." in name:
            raise ParameterError(f"node '{self.node_name}': invalid parameter name {name!r}")
        dynamic = descriptor.dynamic_typing if descriptor is not None else value is None
        static_type: Parameter.Type | None
        if isinstance(value, Parameter.Type):
            if value == Parameter.Type.NOT_SET:
                raise ValueError(f"Cannot declare parameter {{{name}}} as statically typed of type NOT_SET")
            static_type, value = value, None
        elif dynamic:
            static_type = None
        else:
            static_type = Parameter.Type.from_parameter_value(value)
            if static_type == Parameter.Type.NOT_SET:
                raise ValueError("Cannot declare a statically typed parameter with default value "
                                 "of type PARAMETER_NOT_SET")
        if not ignore_override and name in self.overrides:
            value = self.overrides[name]
        param = Parameter(name, value=value)
        if static_type is not None and param.type_ not in (static_type, Parameter.Type.NOT_SET):
            raise InvalidParameterTypeException(name, static_type, param, self.node_name)
        self.values[name] = param
        self.types[name] = static_type
        return param

    def get(self, name: str) -> Parameter:
        if name not in self.values:
            raise ParameterNotDeclaredException(name, self.node_name)
        param = self.values[name]
        static_type = self.types[name]
        if param.type_ == Parameter.Type.NOT_SET and static_type is not None:
            raise ParameterUninitializedException(name, self.node_name, static_type)
        return param

    def set(self, param: Parameter) -> None:
        if param.name not in self.values:
            raise ParameterNotDeclaredException(param.name, self.node_name)
        static_type = self.types[param.name]
        if static_type is not None and param.type_ != static_type:
            raise InvalidParameterTypeException(param.name, static_type, param, self.node_name)
        self.values[param.name] = param
