"""Reports over run directories: one self-contained HTML file, paper-layout tables, comparisons."""

from __future__ import annotations

from nlibias.report.paper_tables import TABLE_FORMATS as TABLE_FORMATS
