"""Bridges to the evaluation tools researchers already run: an lm-evaluation-harness task export
(:mod:`nlibias.integrations.lm_eval`) and Inspect AI tasks (:mod:`nlibias.integrations.inspect_tasks`,
registered through Inspect's ``inspect_ai`` entry point). Their logs come back through
``nlibias score`` (:mod:`nlibias.io.tool_logs`). The tools' packages are imported lazily.
"""
