"""Error types that teach: each names where the problem is (file, line, field) and how to fix it."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``did you mean 'x'?`` naming the closest of ``known`` to ``name`` (a similarity of at least
    ``cutoff``, 0 to 1), or ``""``.

    >>> did_you_mean("widht", ["height", "width"]), did_you_mean("zzz", ["width"])
    ("did you mean 'width'?", '')
    """
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"did you mean {close[0]!r}?" if close else ""


def _with_fix(message: str, fix: str | None) -> str:
    return message + (f" ({fix})" if fix else "")


class NlibiasError(Exception):
    """Base class of every error nlibias raises on purpose (the CLI prints it without a traceback);
    ``parameter`` is the one at fault, ``names`` others the message names.

    ``{seed}`` in a message names a parameter, ``{parameter seed}`` refers to one; :meth:`render`
    spells them as a surface does (the command line: by flag).

    >>> error = ConfigError("{seed} is -5; pass 0 or more", parameter="seed")
    >>> str(error), error.render(lambda name: "--" + name, lambda name: "option --" + name)
    ('seed is -5; pass 0 or more', '--seed is -5; pass 0 or more')
    """

    def __init__(
        self, message: str = "", *, parameter: str | None = None, names: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.names = names

    def __str__(self) -> str:
        return self.render(str, lambda name: f"parameter {name}")

    def render(self, name_of: Callable[[str], str], reference_of: Callable[[str], str]) -> str:
        """The message with ``{NAME}`` as ``name_of(NAME)``, ``{parameter NAME}`` as ``reference_of(NAME)``."""
        text = super().__str__()
        for name in dict.fromkeys(n for n in (self.parameter, *self.names) if n):
            text = text.replace(f"{{parameter {name}}}", reference_of(name)).replace(
                f"{{{name}}}", name_of(name)
            )
        return text

    def mentions(self, name: str) -> bool:
        """Whether the message names the parameter ``name`` (or refers to it)."""
        text = super().__str__()
        return f"{{{name}}}" in text or f"{{parameter {name}}}" in text


class _PathError(NlibiasError):
    """An error about one file or directory: ``path[:line]: [field F: ]reason (fix)``."""

    def __init__(
        self,
        path: str | Path | None,
        reason: str,
        *,
        field: str | None = None,
        line: int | None = None,
        fix: str | None = None,
        parameter: str | None = None,
        names: tuple[str, ...] = (),
    ) -> None:
        self.path = None if path is None else str(path)
        self.field = field
        self.reason = reason
        self.line = line
        self.fix = fix
        where = "" if self.path is None else f"{self.path}: " if line is None else f"{self.path}:{line}: "
        named = f"field {field}: " if field else ""
        super().__init__(_with_fix(f"{where}{named}{reason}", fix), parameter=parameter, names=names)


class SourceError(_PathError):
    """A benchmark or user file is malformed.

    >>> str(SourceError("bad.json", "premise", "expected a list of strings", line=3))
    'bad.json:3: field premise: expected a list of strings'
    """

    path: str

    def __init__(
        self,
        path: str | Path,
        field: str | None,
        reason: str,
        *,
        line: int | None = None,
        fix: str | None = None,
        parameter: str | None = None,
        names: tuple[str, ...] = (),
    ) -> None:
        super().__init__(path, reason, field=field, line=line, fix=fix, parameter=parameter, names=names)


class DataNotFoundError(NlibiasError):
    """Benchmark data could not be found locally and could not be downloaded."""


class LabelMappingError(NlibiasError):
    """A model's labels cannot be mapped to entailment / neutral / contradiction."""


class ConfigError(NlibiasError):
    """A parameter or configuration value is invalid: ``parameter`` is the one at fault.

    >>> error = ConfigError("{bootstrap} is -1; pass 0 or more", parameter="bootstrap")
    >>> str(error), error.parameter, error.names
    ('bootstrap is -1; pass 0 or more', 'bootstrap', ())
    """


class DataError(NlibiasError):
    """Data that do not fit together (predictions missing for samples, a pair with two samples in one role).

    >>> error = DataError("model 'm' has no probabilities for sample 'a:pro'", sample="a:pro",
    ...                   model="m", fix="audit with an NLI classifier")
    >>> str(error), error.sample, error.model, error.field
    ("model 'm' has no probabilities for sample 'a:pro' (audit with an NLI classifier)", 'a:pro', 'm', None)
    """

    def __init__(
        self,
        reason: str,
        *,
        sample: str | None = None,
        model: str | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.reason = reason
        self.sample = sample
        self.model = model
        self.field = field
        self.fix = fix
        super().__init__(_with_fix(reason, fix))


class FileAccessError(_PathError):
    """A file or directory cannot be read or written (permissions, a full disk, a missing folder).

    >>> str(FileAccessError("/ro/out", "permission denied", fix="choose a writable directory"))
    '/ro/out: permission denied (choose a writable directory)'
    """


class DamagedFileError(_PathError):
    """A file nlibias keeps (the prediction cache, an annotation database, a parquet file) is damaged.

    >>> str(DamagedFileError("c.sqlite", "the cache file is damaged", fix="move it aside", parameter="cache"))
    'c.sqlite: the cache file is damaged (move it aside)'
    """


class PluginError(NlibiasError):
    """A plug-in (an installed package's benchmark) failed or broke nlibias's contract.

    >>> str(PluginError("plug-in 'mine' (m:B, distribution mine 1.0)", "expanding its source raised KeyError: 'x'"))
    "plug-in 'mine' (m:B, distribution mine 1.0): expanding its source raised KeyError: 'x' (report it to the plug-in's authors, or uninstall it)"
    """

    def __init__(self, plugin: str, reason: str) -> None:
        self.plugin = plugin
        self.reason = reason
        super().__init__(f"{plugin}: {reason} (report it to the plug-in's authors, or uninstall it)")


def import_extra(
    module: str, extra: str, *, use: str, parameter: str | None = None, otherwise: str = ""
) -> ModuleType:
    """``module`` imported, or the one ConfigError of a missing optional package: the ``use`` that
    needs it, the extra that installs it, and ``otherwise`` (a way to do without), naming ``parameter``.

    >>> import_extra("json", "none", use="reading JSON").__name__
    'json'
    >>> import_extra("no_such_module", "report", use="figures", otherwise="or make it without")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: figures: no_such_module is not installed (pip install "nlibias[report]", or make it without)
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or module
        fix = f'pip install "nlibias[{extra}]"' + (f", {otherwise}" if otherwise else "")
        raise ConfigError(f"{use}: {missing} is not installed ({fix})", parameter=parameter) from None
