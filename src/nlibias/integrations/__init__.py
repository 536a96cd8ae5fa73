"""Bridges to the evaluation tools researchers already run: an lm-evaluation-harness task export
(:mod:`nlibias.integrations.lm_eval`) and Inspect AI tasks (:mod:`nlibias.integrations.inspect_tasks`,
registered through Inspect's ``inspect_ai`` entry point, with the ``nlibias/SPEC`` model provider of
:mod:`nlibias.integrations.inspect_model`), and what they need offline
(:mod:`nlibias.integrations.offline`). Their logs come back through ``nlibias score``
(:mod:`nlibias.io.tool_logs`, checked by :mod:`nlibias.io.tool_log_checks`). The tools' packages
are imported lazily.
"""
