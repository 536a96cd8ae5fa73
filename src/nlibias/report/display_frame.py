"""A DataFrame shown with rounded numbers (the values keep full precision), for a notebook's verdict."""

from __future__ import annotations

from typing import Any

import pandas as pd

DISPLAY_DECIMALS = 2


class DisplayFrame(pd.DataFrame):
    """A :class:`pandas.DataFrame` printed with :data:`DISPLAY_DECIMALS` decimals."""

    @property
    def _constructor(self) -> Any:
        return pd.DataFrame  # a derived frame holds other values: shown as pandas would

    def __repr__(self) -> str:
        with pd.option_context("display.precision", DISPLAY_DECIMALS):
            return super().__repr__()

    def _repr_html_(self) -> str | None:
        with pd.option_context("display.precision", DISPLAY_DECIMALS):
            return super()._repr_html_()
