"""What every aggregator says about the round it aggregated (its metrics).

``aggregate`` returns ``(params, state, metrics)``; the metrics of every aggregator
hold at least

* ``n_aggregated``: how many of the updates it was given it used (folded into the model,
  into its stored table or into a buffer). The round loop records this number as
  ``aggregated_updates`` and the executor's count of trained updates as
  ``trained_updates``; the run's invariant check compares the two, so an aggregator that
  loses an update is caught.
* ``stepped``: 1.0 when the global model was moved this round, 0.0 when it was returned
  unchanged (nothing to apply, or the rule is still waiting: MIFA's ``wait_for_all``,
  a ``fedavg_s`` group not yet complete, FedLaAvg's warm-up). A run in which updates
  arrived but no round stepped ends with a warning.

and optionally ``waiting_for``: the number of clients whose update the rule still needs
before it can step. Further keys are rule-specific (e.g. ``n_received``).
"""

from __future__ import annotations

#: metrics key: updates used this round
N_AGGREGATED = "n_aggregated"
#: metrics key: 1.0 if the global model moved this round
STEPPED = "stepped"
#: optional metrics key: clients still awaited before the rule can step
WAITING_FOR = "waiting_for"


def report(n_aggregated: int, stepped: bool, **extra: float) -> dict[str, float]:
    """The metrics dict of one ``aggregate`` call: the two shared keys plus ``extra``."""
    return {N_AGGREGATED: float(n_aggregated), STEPPED: float(bool(stepped)),
            **{key: float(value) for key, value in extra.items()}}
