"""The reproduction report's parts: each paper's claim checked on its study's campaign.

``analysis/report.py`` is the command line; the parts it is made of live here:

* :mod:`.verdicts`: the statistics (mean and 95% t-interval over seeds), the paired
  comparison of two arms and the verdict rule, with the rule's text for the report;
* :mod:`.campaigns`: reading a study's campaign folder and its finished run folders;
* :mod:`.tables` and :mod:`.figures`: Markdown tables and the mean-and-band figures;
* :mod:`.sections`: one paper's part of the report, its setting line and verdict block;
* :mod:`.papers`: the per-study sections (FedAR, CVaR, warm starts, FedGS, FedLaAvg);
* :mod:`.document`: the whole ``report.md`` from the campaign folders.

Nothing here runs a simulation: every number is read from the run folders.
"""
