"""Reproduction studies: one campaign per paper simfl implements, and the report.

Each module (``fedar``, ``cvar``, ``warm_start``, ``fedgs``, ``fedlaavg``) defines its
campaign, a grid of arms times seeds run through :func:`simfl.sweep`, with ``main()``:

    python -m studies.fedar --quick --out runs/q/fedar
    python -m studies --quick --out runs/q          # every study, then the report

``analysis/report.py`` reads the campaign folders (never re-running anything) and
writes ``report.md`` with each paper's claim, setting, figure, numbers with 95%
confidence intervals and verdict.
"""
