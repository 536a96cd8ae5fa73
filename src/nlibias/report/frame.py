"""``metrics.json`` as a tidy table (compare Fairlearn's ``MetricFrame.by_group``): one row per
(model, slicing, slice, measure) with its value, 95% interval and count.

>>> metrics = {"models": {"m": {"overall": {"accuracy": 50.0, "n": 4, "ci": {"accuracy": [10.0, 90.0]}},
...                              "by_domain": {"race": {"accuracy": 25.0, "n": 2, "ci": {}}}}}}
>>> for row in metric_rows(metrics):
...     print(row)
{'model': 'm', 'slicing': 'overall', 'slice': 'all', 'measure': 'accuracy', 'value': 50.0, 'ci_low': 10.0, 'ci_high': 90.0, 'n': 4}
{'model': 'm', 'slicing': 'domain', 'slice': 'race', 'measure': 'accuracy', 'value': 25.0, 'ci_low': None, 'ci_high': None, 'n': 2}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from nlibias.metrics.metric_frame import FRAME_COLUMNS, grouped_rows

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("model", *FRAME_COLUMNS)


def metric_rows(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of :func:`metrics_frame`, as dicts (no pandas needed)."""
    for model, model_metrics in metrics["models"].items():
        for row in grouped_rows(model_metrics):
            yield {"model": model, **row}


def metrics_frame(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """Every measure of every model and slice of a ``metrics.json`` as a tidy pandas DataFrame
    with the columns :data:`COLUMNS`."""
    import pandas as pd

    return pd.DataFrame(list(metric_rows(metrics)), columns=list(COLUMNS))
