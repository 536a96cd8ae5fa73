"""Rules declared once: the constrained types settings use, :func:`declared` (pydantic's strict
``validate_call``, built on the first call) and the one adapter from a pydantic error to a
:class:`~nlibias.errors.ConfigError` naming the parameter (a file's: :mod:`nlibias.schema.problems`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Annotated, Any, TypeGuard, TypeVar, cast, overload

import typing_extensions
from annotated_types import Ge, Gt, Le, Lt, Predicate

from nlibias.errors import ConfigError, did_you_mean
from nlibias.schema.applies import SEED_APPLIES, refuse_inapplicable
from nlibias.schema.problems import problems

if typing.TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


@dataclass(frozen=True)
class Allowed:
    """What a type allows, in words (``seed is -1; pass {words}``)."""

    words: str


@dataclass(frozen=True)
class _Finite:
    """Not infinite and not a number (NaN): pydantic's ``allow_inf_nan=False``, which its float
    check reads before any bound, so that a NaN is refused as not finite, not as out of range
    (``nan < 1`` is false as well); pydantic stays unimported until a rule is checked."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        if schema.get("type") == "float":
            schema["allow_inf_nan"] = False
        return schema


_FINITE = _Finite()
FiniteFloat = Annotated[float, _FINITE]
"""A number that is not infinite or NaN (a margin, a limit)."""
NonNegativeFloat = Annotated[float, Ge(0), _FINITE]
PositiveFloat = Annotated[float, Gt(0), _FINITE]
Share = Annotated[float, Ge(0), Le(1), _FINITE, Allowed("a share between 0 and 1")]
"""A share from 0 to 1 (a threshold on a share)."""
ShareAbove0 = Annotated[
    float, Gt(0), Le(1), _FINITE, Allowed("a share between 0 and 1, not 0 (no share falls below 0)")
]
"""A share a share falls below to be flagged: above 0 (0 would flag nothing), at most 1."""
OpenUnit = Annotated[float, Gt(0), Lt(1), _FINITE]
"""Strictly between 0 and 1 (a confidence level); a NaN is refused as not finite."""
PositiveInt = Annotated[int, Ge(1)]
NonNegativeInt = Annotated[int, Ge(0)]
MAX_RESAMPLES = 1_000_000
"""The most bootstrap resamples any route takes (lm-evaluation-harness's default is 100,000; a
p of 1/(B + 1) needs no more than a million to be told from 1e-6): beyond it a run would allocate
and compute for hours or days to change nothing a report shows."""
Resamples = Annotated[
    int,
    Ge(0),
    Le(MAX_RESAMPLES),
    Predicate(lambda b: b == 0 or b >= 39),
    Allowed(
        f"0 (no intervals) or 39 or more resamples, at most {MAX_RESAMPLES:,} (a 95% interval's tails "
        "need 1/(B + 1) <= 0.025; more than a million changes nothing a report shows)"
    ),
]
"""Bootstrap resamples (0: no intervals; fewer than 39 cannot put 2.5% beyond either end; at most
:data:`MAX_RESAMPLES`)."""
Seed = Annotated[int, Ge(0), Le(2**63 - 1), Allowed("an integer from 0 to 2**63 - 1")]
"""A seed numpy takes (0 to 2**63 - 1)."""
DrawSeed = Annotated[Seed, SEED_APPLIES]
"""The seed of a bootstrap (and of a ``limit``'s subset): refused where nothing is drawn."""


@dataclass(frozen=True)
class _NotBlank:
    """A path that is not blank: ``Path("")`` (and ``Path(" ")`` as a name) would read or write the
    folder ``.`` instead of what the user meant to name. A marker of pydantic's schema (its own
    words as the reason a file's key gets), read when the rule is checked."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(_not_blank_path, handler(source))


def _not_blank_path(path: T) -> T:
    if isinstance(path, str) and not path.strip():
        raise ValueError(
            f"{path!r} is empty: a blank path (read as the folder '.'); give a file or folder, or leave it out"
        )
    return path


@dataclass(frozen=True)
class Refuse:
    """A rule of one value in its own words, declared on its type: a value for which ``when`` holds
    is refused as ``{name} <words>`` (``words``: a text, or made from the value); ``names``: the
    other parameters the words name (``{full}``). Checked after the type's other rules (``before``:
    before them, so that a value of another type is refused in these words)."""

    when: Callable[[Any], bool]
    words: str | Callable[[Any], str]
    names: tuple[str, ...] = ()
    before: bool = False

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        if self.before:
            return core_schema.no_info_before_validator_function(self._check, handler(source))
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def _check(self, value: T) -> T:
        if self.when(value):
            from pydantic_core import PydanticCustomError

            words = self.words if isinstance(self.words, str) else self.words(value)
            raise PydanticCustomError(_REFUSED, "{words}", {"words": words, "names": self.names})
        return value


_REFUSED = "nlibias_refused"
_NOT_BLANK = _NotBlank()
PathArg = Annotated[str | Path, _NOT_BLANK, Allowed("a path (a str or Path, not blank)")]
"""A path given as a string or a Path (a function's parameter); a blank string is refused."""
PathText = Annotated[str, _NOT_BLANK, Allowed("a path (not blank)")]
"""A path as a settings file writes it (a YAML key's value); a blank string is refused."""
Name = Annotated[str, Predicate(str.strip), Allowed("a non-blank str")]
"""A name that is not blank (a model, a benchmark)."""

_DECLARED = "__nlibias_declared__"


@overload
def declared(function: F, *, lazy: Mapping[str, str] | None = None) -> F: ...


@overload
def declared(function: None = None, *, lazy: Mapping[str, str] | None = None) -> Callable[[F], F]: ...


def declared(function: F | None = None, *, lazy: Mapping[str, str] | None = None) -> F | Callable[[F], F]:
    """Hold ``function``'s arguments to its hints on every call (``**settings: Unpack[TD]`` too);
    ``lazy``: hint names imported only under ``TYPE_CHECKING`` → their module."""

    def wrap(inner: F) -> F:
        signature = inspect.signature(inner)
        defaults = {name: p.default for name, p in signature.parameters.items()}
        built: list[tuple[Callable[..., Any], dict[str, Any]]] = []

        @functools.wraps(inner)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not built:
                built.append(_validator(inner, signature, lazy or {}))
            validate, hints = built[0]
            from pydantic import ValidationError

            try:
                args, kwargs = validate(*args, **kwargs)
            except ValidationError as error:
                raise argument_error(error, inner.__name__, signature, hints, args, kwargs) from None
            refuse_inapplicable(_by_name(signature, args, kwargs), hints, defaults)
            return inner(*args, **kwargs)

        setattr(wrapper, _DECLARED, True)
        spelt = _spelt_out(inner, signature)
        if spelt is not None:  # help() and notebooks show each setting, not **settings
            wrapper.__signature__ = spelt  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return wrap if function is None else wrap(function)


def is_declared(function: Callable[..., Any]) -> bool:
    """Whether ``function`` holds its arguments to its hints (:func:`declared`)."""
    return bool(getattr(function, _DECLARED, False))


def _validator(
    inner: Callable[..., Any], signature: inspect.Signature, lazy: Mapping[str, str]
) -> tuple[Callable[..., Any], dict[str, Any]]:
    """pydantic's validator of ``inner``'s arguments (returning them) and the resolved hints."""
    namespace = dict(getattr(inner, "__globals__", {}))
    for name, module in lazy.items():
        namespace[name] = getattr(importlib.import_module(module), name)
    hints = {  # each parameter's own (the return hint may name what is never imported here)
        name: eval(p.annotation, namespace) if isinstance(p.annotation, str) else p.annotation
        for name, p in signature.parameters.items()
        if p.annotation is not inspect.Parameter.empty
    }

    def arguments(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return args, kwargs

    arguments.__signature__ = signature.replace(return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]
    arguments.__annotations__ = {name: hints.get(name, Any) for name in signature.parameters}
    from pydantic import ConfigDict, validate_call  # on the first call: `import nlibias` stays light

    config = ConfigDict(strict=True, arbitrary_types_allowed=True, extra="forbid")
    return validate_call(config=config)(arguments), hints


def _by_name(signature: inspect.Signature, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Every argument of a call by its parameter's name, ``**settings`` spread out."""
    bound = signature.bind(*args, **kwargs).arguments
    spread = [n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD and n in bound]
    return {**bound, **(bound.pop(spread[0]) if spread else {})}


def argument_error(
    error: ValidationError,
    function: str,
    signature: inspect.Signature,
    hints: Mapping[str, Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
) -> ConfigError:
    """A ConfigError naming the parameter of ``function`` at fault, its value and what it takes."""
    problem = _first(error)
    kind, loc = problem["type"], problem["loc"]
    names = list(signature.parameters)
    at = loc[0] if loc else None
    if isinstance(at, int):  # a positional argument: its parameter
        at = names[at] if at < len(names) else None
    if kind in ("unexpected_keyword_argument", "extra_forbidden") and at is not None:
        return unknown_argument(function, str(at), [*names, *_keyword_hints(signature, hints)])
    if kind == "missing_argument" and at is not None:
        return ConfigError(f"{function} needs {at}; it was not given", parameter=str(at))
    if at is None or kind == "unexpected_positional_argument":
        return ConfigError(f"{function}: {problem['msg']}", parameter=None)
    name = str(at)
    if kind == _REFUSED:
        return _refused(name, problem)
    hint = _keyword_hints(signature, hints).get(name, hints.get(name))
    value = _given(name, signature, args, kwargs)
    got = "none was given" if value is None else f"got {type(value).__name__} {_shown(value)}"
    return ConfigError(f"{{{name}}} must be {describe(hint)}; {got}", parameter=name)


def settings_error(error: ValidationError, model: type[BaseModel], given: Mapping[str, Any]) -> ConfigError:
    """A ConfigError naming the setting of ``model`` at fault: ``{name} is {value!r}; pass {allowed}``
    (a key inside one, such as a measure's rule: ``{name}.KEY: reason``; a rule of the whole object:
    ``Model: reason``)."""
    refused = next((problem for problem in error.errors() if problem["type"] == _REFUSED), None)
    if refused is not None and refused["loc"]:  # a Refuse's rule, in its own words
        return _refused(str(refused["loc"][0]), refused)
    first = problems(error)[0]
    name = str(first.loc[0]) if first.loc else None
    inside = len(first.loc) > 1 and _reaches(given.get(str(name)), first.loc[1:])
    field = None if name is None or inside else model.model_fields.get(name)
    if first.kind in ("extra_forbidden", "unexpected_keyword_argument") and len(first.loc) == 1:
        return unknown_argument(model.__name__, str(name), list(model.model_fields))
    if field is None:  # inside a setting (a dict, a list, a section), or the whole object's rule
        inner = ".".join(str(part) for part in first.loc[1:])
        where = model.__name__ if name is None else f"{{{name}}}{'.' + inner if inner else ''}"
        reason = "unknown key (not a setting there)" if first.kind == "extra_forbidden" else first.reason
        return ConfigError(f"{where}: {reason}", parameter=name)
    shown = _shown(given.get(str(name)))
    if first.kind == "value_error":  # the field's own check, in its words
        return ConfigError(f"{{{name}}} is {shown}: {first.reason}", parameter=name)
    return ConfigError(
        f"{{{name}}} is {shown}; pass {describe(field_hints(model)[str(name)])}", parameter=name
    )


def _reaches(value: Any, parts: Sequence[Any]) -> bool:
    """Whether ``parts`` lead into ``value`` (a key, an index: inside it), not to pydantic's names of
    the kinds a union tried (``bool``, ``str``): the setting itself is at fault then."""
    for part in parts:
        keyed = isinstance(value, Mapping) and part in value
        if not (keyed or (isinstance(value, list | tuple) and isinstance(part, int) and part < len(value))):
            return False
        value = value[part]
    return True


def _first(error: ValidationError) -> Any:
    """The problem to tell: the first, or where a union's member refused the value in a
    :class:`Refuse`'s words (the other members' type errors say less), that one."""
    found = error.errors()
    return next((problem for problem in found if problem["type"] == _REFUSED), found[0])


def _refused(name: str, problem: Any) -> ConfigError:
    """The refusal a :class:`Refuse` declared: ``{name} <its words>``."""
    context = problem["ctx"]
    return ConfigError(f"{{{name}}} {context['words']}", parameter=name, names=tuple(context["names"]))


def field_hints(model: type[BaseModel]) -> dict[str, Any]:
    """Each field's hint with its declared metadata, as written on the model."""
    return {
        name: Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        for name, field in model.model_fields.items()
    }


def unknown_argument(function: str, name: str, known: Sequence[str]) -> ConfigError:
    """The refusal of a keyword ``function`` does not take, naming the closest it does."""
    shown = did_you_mean(name, [k for k in known if k != name]) or f"it takes: {', '.join(known)}"
    return ConfigError(f"{function} takes no argument {name!r} ({shown})", parameter=name)


def _given(name: str, signature: inspect.Signature, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """The value given for ``name``, positionally or by keyword."""
    if name in kwargs:
        return kwargs[name]
    for index, parameter in enumerate(signature.parameters):
        if parameter == name and index < len(args):
            return args[index]
    return None


def _keyword_hints(signature: inspect.Signature, hints: Mapping[str, Any]) -> dict[str, Any]:
    """The keys and hints of a ``**settings: Unpack[SomeTypedDict]`` parameter (empty: none)."""
    for name, parameter in signature.parameters.items():
        if parameter.kind is parameter.VAR_KEYWORD:
            keywords = _unpacked(hints.get(name))
            if keywords is not None:
                return dict(typing_extensions.get_type_hints(keywords, include_extras=True))
    return {}


def _unpacked(hint: Any) -> type | None:
    """The TypedDict of ``Unpack[SomeTypedDict]`` (``typing``'s or ``typing_extensions``'), else None."""
    if typing.get_origin(hint) not in (typing_extensions.Unpack, getattr(typing, "Unpack", None)):
        return None
    (inner,) = typing.get_args(hint)
    return inner if typing_extensions.is_typeddict(inner) else None


class _Unset:
    """The default a spelt-out setting shows: left out, it leaves the function's own default."""

    def __repr__(self) -> str:
        return "unset"


def _spelt_out(inner: Callable[..., Any], signature: inspect.Signature) -> inspect.Signature | None:
    """``signature`` with ``**settings: Unpack[TD]`` spelt out as keyword-only parameters (None: none)."""
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


def describe(hint: Any) -> str:
    """A hint in words, its constraints too.

    >>> describe(str | None), describe(list[str]), describe(OpenUnit), describe(Seed)
    ('str or None', 'a list of str', 'a finite float more than 0 and less than 1', 'an integer from 0 to 2**63 - 1')
    """
    if hint is None or hint is type(None):
        return "None"
    origin = typing.get_origin(hint)
    if origin is Annotated:
        base, *metadata = typing.get_args(hint)
        allowed = [item.words for item in metadata if isinstance(item, Allowed)]
        return allowed[-1] if allowed else _constrained(describe(base), metadata)  # the outer type's words
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


def _constrained(base: str, metadata: Sequence[Any]) -> str:
    """``base`` with the bounds and finiteness its ``Annotated`` metadata declare, in words.

    >>> _constrained("int", []), _constrained("one of 'a', 'b'", []), _constrained("a list of str", [])
    ('an int', "one of 'a', 'b'", 'a list of str')
    """
    bounds: dict[str, Any] = {}
    finite = False
    for item in metadata:
        for entry in getattr(item, "metadata", [item]):
            for key in ("ge", "gt", "le", "lt"):
                if hasattr(entry, key):
                    bounds[key] = getattr(entry, key)
            finite = finite or entry == _FINITE
    if base.startswith(("a ", "an ", "one of ")):
        words = base
    else:
        article = "an" if base[:1] in "aeiou" else "a"
        words = f"{article} {'finite ' if finite else ''}{base}"
    if "ge" in bounds and "le" in bounds:
        return f"{words} from {bounds['ge']} to {bounds['le']}"
    phrases = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
    parts = [f"{phrase} {bounds[key]}" for key, phrase in phrases.items() if key in bounds]
    if not parts:
        return words
    joined = " and ".join(parts)
    return f"{words} of {joined}" if len(parts) == 1 and "at " in joined else f"{words} {joined}"


def _shown(value: Any) -> str:
    """``value`` as a message shows it: a path whole (it names the file), else cut at 60 characters."""
    if isinstance(value, PurePath):
        return repr(str(value))
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` read from a document is a Python integer and not a ``bool``.

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def one_or_many(value: T | Sequence[T]) -> list[T]:
    """One name or path, or several, as a list.

    >>> one_or_many("fake:a"), one_or_many(("fake:a", "fake:b")), one_or_many(PurePath("run"))
    (['fake:a'], ['fake:a', 'fake:b'], [PurePosixPath('run')])
    """
    if isinstance(value, str | PurePath):
        return [cast(T, value)]
    return list(cast(Sequence[T], value))
