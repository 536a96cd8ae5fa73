"""The one base of every settings object a user builds by hand (options, gate rules, an extend
configuration): a value that breaks a declared rule is a :class:`~nlibias.errors.ConfigError`
naming the field, by :func:`~nlibias.schema.declared.settings_error`, never pydantic's own error.

>>> class Limits(Settings):
...     share: float = 0.5
>>> Limits(share="half")
Traceback (most recent call last):
nlibias.errors.ConfigError: share is 'half'; pass float
>>> Limits(shares=1)
Traceback (most recent call last):
nlibias.errors.ConfigError: Limits takes no argument 'shares' (did you mean 'share'?)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from nlibias.schema.declared import settings_error


class Settings(BaseModel):
    """Settings made from keywords: an unknown name or a broken rule refused as a ConfigError.

    Only building one by hand goes through ``__init__``: a file's reader validates with
    ``model_validate``, which keeps pydantic's error for the reader to name the file and line (and a
    nested settings object is validated as part of its parent, whose error names the whole path).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, **settings: Any) -> None:
        try:
            super().__init__(**settings)
        except ValidationError as error:
            raise settings_error(error, type(self), settings) from None

    # pydantic calls a model's own __init__ while validating a document unless it is marked as its base
    # one: so model_validate (a file, a nested section) keeps pydantic's error with its location
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]
