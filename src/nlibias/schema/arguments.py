"""Arguments checked at the door, one mechanism for the whole API.

:func:`checked` wraps a public function so that each argument is checked against the function's
own type hints before it runs: a value of the wrong type is a :class:`~nlibias.errors.ConfigError`
naming the argument (``parameter``) and what it takes — never a bare ``TypeError: 'int' object is
not iterable`` from deep inside. ``bool`` is not taken for ``int`` (``bootstrap=True``), nor a
string for a ``bool`` (``balance="no"`` would read as true). Keywords gathered as
``**settings: Unpack[SomeTypedDict]`` are checked against the TypedDict's keys: one it does not name
is refused like a misspelt parameter, each value against its key's hint. Names the hints use that
the module imports only for type checking are given as ``lazy`` (name → module), imported on the
first call.

:func:`option_applies_to_nothing` is the one refusal of an option given where nothing reads it
(a dtype with no model that loads weights, a label map with no classifier, ``seed`` for sets that
bring their own hypotheses): every such check builds its error here.

>>> @checked
... def head(texts: list[str], n: int = 1) -> list[str]:
...     return texts[:n]
>>> head(["a", "b"], n=1)
['a']
>>> head(123)
Traceback (most recent call last):
...
nlibias.errors.ConfigError: texts must be a list of str; got int 123
>>> head(["a"], n=True)
Traceback (most recent call last):
...
nlibias.errors.ConfigError: n must be int; got bool True
>>> class Style(typing.TypedDict, total=False):
...     width: int
>>> @checked
... def box(text: str, **style: typing.Unpack[Style]) -> str:
...     return text.center(style.get("width", 0))
>>> box("a", width=3)
' a '
>>> box("a", widht=3)
Traceback (most recent call last):
...
nlibias.errors.ConfigError: box takes no argument 'widht' (did you mean 'width'?)
>>> box("a", width="3")
Traceback (most recent call last):
...
nlibias.errors.ConfigError: width must be int; got str '3'
"""

from __future__ import annotations

import collections.abc
import difflib
import functools
import importlib
import inspect
import numbers
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Any, NamedTuple, TypeGuard, TypeVar, cast, overload

import typing_extensions

from nlibias.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
_CHECKED = "__nlibias_checked__"
_UNSET: Any = object()


@overload
def checked(function: F, *, lazy: Mapping[str, str] | None = None) -> F: ...


@overload
def checked(function: None = None, *, lazy: Mapping[str, str] | None = None) -> Callable[[F], F]: ...


def checked(function: F | None = None, *, lazy: Mapping[str, str] | None = None) -> F | Callable[[F], F]:
    """Check ``function``'s arguments against its type hints on every call (see the module notes).

    ``lazy``: names its hints use that its module imports only under ``TYPE_CHECKING`` → the module
    that defines each. ``*args``, ``**kwargs`` (but ``**kwargs: Unpack[SomeTypedDict]``, checked key
    by key) and parameters hinted ``Any`` are not checked.
    """

    def wrap(inner: F) -> F:
        signature = inspect.signature(inner)
        hints: dict[str, Any] = {}

        @functools.wraps(inner)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return inner(*args, **kwargs)  # Python's own message for a call that cannot bind
            if not hints:
                hints.update(_resolve(inner, signature, lazy or {}))
            for name, value in bound.arguments.items():
                hint = hints.get(name)
                if isinstance(hint, _Keywords):  # **settings: Unpack[SomeTypedDict]
                    for key, item in value.items():
                        _check(key, item, hint.hint(inner.__name__, key, signature))
                elif hint is not None:
                    _check(name, value, hint)
            return inner(*args, **kwargs)

        setattr(wrapper, _CHECKED, True)
        spelt = _spelt_out(inner, signature)
        if spelt is not None:  # help() and notebooks show each setting, not **settings
            wrapper.__signature__ = spelt  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return wrap if function is None else wrap(function)


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a Python integer and not a ``bool`` (``True`` is an ``int`` to Python,
    never a count or a seed here).

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def one_or_many(value: T | Sequence[T]) -> list[T]:
    """One name or path, or several, as a list: the public functions take ``"fake:a"`` for
    ``["fake:a"]`` (a string or a path is one value, never its characters or parts).

    >>> one_or_many("fake:a"), one_or_many(("fake:a", "fake:b")), one_or_many(PurePath("run"))
    (['fake:a'], ['fake:a', 'fake:b'], [PurePosixPath('run')])
    """
    if isinstance(value, str | PurePath):
        return [cast(T, value)]
    return list(cast(Sequence[T], value))


def is_checked(function: Callable[..., Any]) -> bool:
    """Whether ``function`` checks its arguments (:func:`checked`)."""
    return bool(getattr(function, _CHECKED, False))


def _resolve(
    function: Callable[..., Any], signature: inspect.Signature, lazy: Mapping[str, str]
) -> dict[str, Any]:
    """Each checked parameter's hint, evaluated (``from __future__ import annotations`` keeps strings)."""
    namespace = dict(getattr(function, "__globals__", {}))
    for name, module in lazy.items():
        namespace[name] = getattr(importlib.import_module(module), name)
    resolved: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        hint = parameter.annotation
        if parameter.kind is parameter.VAR_POSITIONAL or hint is inspect.Parameter.empty:
            continue
        if isinstance(hint, str):
            hint = eval(hint, namespace)  # the function's own annotation
        if parameter.kind is parameter.VAR_KEYWORD:
            keywords = _unpacked(hint)
            if keywords is not None:
                resolved[name] = _Keywords(typing_extensions.get_type_hints(keywords, localns=namespace))
        elif hint is not Any:
            resolved[name] = hint
    return resolved


class _Keywords(NamedTuple):
    """The hints of the keywords a ``**settings: Unpack[SomeTypedDict]`` parameter gathers."""

    hints: Mapping[str, Any]

    def hint(self, function: str, key: str, signature: inspect.Signature) -> Any:
        """``key``'s hint; a key the TypedDict does not name is refused as Python refuses an
        unknown keyword, naming the closest of the function's parameters and keys."""
        if key in self.hints:
            return self.hints[key]
        named = [n for n, p in signature.parameters.items() if p.kind is not p.VAR_KEYWORD]
        known = [*named, *self.hints]
        close = difflib.get_close_matches(key, known, n=1)
        shown = f"did you mean {close[0]!r}?" if close else f"it takes: {', '.join(known)}"
        raise ConfigError(f"{function} takes no argument {key!r} ({shown})", parameter=key)


class _Unset:
    """The default a spelt-out setting shows: left out, it leaves the function's own default."""

    def __repr__(self) -> str:
        return "unset"


def _spelt_out(inner: Callable[..., Any], signature: inspect.Signature) -> inspect.Signature | None:
    """``signature`` with its ``**settings: Unpack[SomeTypedDict]`` spelt out as the TypedDict's
    keys (keyword-only, each ``unset``), for ``help()``; None when it has no such parameter or its
    hint cannot be read yet (a TypedDict defined after the function).

    >>> class Style(typing.TypedDict, total=False):
    ...     width: int
    >>> def box(text: str, **style: typing.Unpack[Style]) -> str: ...
    >>> print(_spelt_out(box, inspect.signature(box)))
    (text: 'str', *, width: 'int' = unset) -> 'str'
    """
    *named, last = signature.parameters.values() or [None]
    if last is None or last.kind is not last.VAR_KEYWORD:
        return None
    hint = last.annotation
    try:
        hint = eval(hint, getattr(inner, "__globals__", {})) if isinstance(hint, str) else hint
    except NameError:
        return None
    keywords = _unpacked(hint)
    if keywords is None:
        return None
    spelt = [
        inspect.Parameter(
            key,
            inspect.Parameter.KEYWORD_ONLY,
            default=_Unset(),
            annotation=getattr(annotation, "__forward_arg__", annotation),  # as written, not ForwardRef(...)
        )
        for key, annotation in keywords.__annotations__.items()
    ]
    return signature.replace(parameters=[*named, *spelt])


def _unpacked(hint: Any) -> type | None:
    """The TypedDict of ``Unpack[SomeTypedDict]`` (``typing``'s or ``typing_extensions``'), else None."""
    if typing.get_origin(hint) not in (typing.Unpack, typing_extensions.Unpack):
        return None
    (inner,) = typing.get_args(hint)
    return inner if typing_extensions.is_typeddict(inner) else None


def _check(name: str, value: Any, hint: Any) -> None:
    """Refuse ``value`` when it does not fit ``hint``, naming the argument and what it takes."""
    if not _matches(value, hint):
        raise ConfigError(
            f"{name} must be {describe(hint)}; got {type(value).__name__} {_shown(value)}", parameter=name
        )


def _matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits ``hint`` (unions, Optional, Literal, sequences, mappings, classes)."""
    if hint is Any or hint is object:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if origin is typing.Literal:
        return any(value == arg and type(value) is type(arg) for arg in typing.get_args(hint))
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:  # numpy's integers too, never a bool
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if origin is None:
        return _isinstance(value, hint)
    if not _isinstance(value, origin):
        return False
    args = typing.get_args(hint)
    if origin in (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable):
        if isinstance(value, (str, bytes)) and origin is not str:
            return False
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        elif origin is tuple:
            return len(value) == len(args) and all(_matches(v, a) for v, a in zip(value, args, strict=True))
        if len(args) == 1 and isinstance(value, collections.abc.Collection):
            return all(_matches(item, args[0]) for item in value)
    if origin in (dict, collections.abc.Mapping) and len(args) == 2:
        return all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
    return True


def _isinstance(value: Any, kind: Any) -> bool:
    try:
        return isinstance(value, kind)
    except TypeError:  # a hint isinstance cannot test (a non-runtime protocol, a TypeVar): let it pass
        return True


def describe(hint: Any) -> str:
    """A hint in words.

    >>> describe(str | None), describe(list[str]), describe(int | bool)
    ('str or None', 'a list of str', 'int or bool')
    """
    if hint is None or hint is type(None):
        return "None"
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [describe(arg) for arg in typing.get_args(hint)]
        return ", ".join(parts[:-1]) + " or " + parts[-1]
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(arg) for arg in typing.get_args(hint))
    if origin is None:
        return getattr(hint, "__name__", str(hint))
    args = typing.get_args(hint)
    container = {list: "a list", tuple: "a tuple", set: "a set", frozenset: "a set", dict: "a dict"}.get(
        origin, f"a {getattr(origin, '__name__', str(origin)).lower()}"
    )
    if len(args) == 1 or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return f"{container} of {describe(args[0])}"
    return container


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class InapplicableOption(ConfigError):
    """An option given where nothing reads it (:func:`option_applies_to_nothing` builds it)."""


def option_applies_to_nothing(
    parameter: str,
    applies_to: str,
    *,
    value: Any = _UNSET,
    subject: str | None = None,
    plural: bool = False,
    given: str | None = None,
    fix: str | None = None,
    names: tuple[str, ...] = (),
) -> InapplicableOption:
    """The refusal of an option that nothing given reads (it would be ignored without a word):
    ``{subject} [{value!r}] applies to {applies_to}[, and {given}]; {fix}`` (default fix: leave it
    out), naming ``parameter`` and the other parameters ``given`` or ``fix`` name (``names``: the
    command line names them by their options too). The caller raises it.

    >>> str(option_applies_to_nothing("seed", "evaluation sets without hypotheses", value=3,
    ...                               given="every set given brings its own"))
    'seed 3 applies to evaluation sets without hypotheses, and every set given brings its own; leave seed out'
    """
    what = subject or parameter
    if value is not _UNSET:
        what += f" {value!r}"
    message = f"{what} {'apply' if plural else 'applies'} to {applies_to}"
    if given:
        message += f", and {given}"
    return InapplicableOption(
        f"{message}; {fix or f'leave {parameter} out'}", parameter=parameter, names=names
    )
