"""The reproduction report's parts: each paper's claim checked on its study's campaign.

``analysis/report.py`` is the command line; the parts it is made of live here:

* :mod:`.intervals`: the statistics (mean and t-interval over seeds, the paired t-test,
  Holm's step-down levels, the smallest detectable effect);
* :mod:`.verdicts`: the paired comparison of two arms (``compare``, with the paper's
  effect where known), Holm's correction within a claim, the verdict rule and its text;
* :mod:`.campaigns`: reading a study's campaign folder and its finished run folders;
* :mod:`.tables`: Markdown tables; :mod:`.figures` and :mod:`.aligned`: the figures
  (bold mean over thin per-seed lines, shaded phases, panel grids, bars) and the curve
  helpers they are drawn from (aligned on an event, phase spans);
* :mod:`.sections`: one paper's part of the report, its setting line and verdict block
  (a claim's row of the verdict table may state its own seeds and rounds, ``Claim``;
  a study's ``notes["differs"]`` lists where it still differs from the paper);
* :mod:`.papers`: the per-study sections (FedAR, CVaR, warm starts, FedGS, FedLaAvg);
* :mod:`.parts`: each study's committed parts (its section, verdict rows, runs table,
  raw claim metrics :mod:`.claim_metrics`, rows of ``comparisons.csv``
  :mod:`.comparisons_csv`) and ``report.md`` assembled from every study's parts;
* :mod:`.document`: regenerating the parts of the studies whose campaign folders are
  given, then the whole ``report.md``;
* :mod:`.check`: a reader's recomputation of every comparison from the committed raw
  claim metrics, sharing no code with the rest.

Nothing here runs a simulation: every number is read from the run folders.
"""
