"""The progress bar of a single run (``simfl run``, ``simfl resume``), on stderr."""

from __future__ import annotations

import sys
from typing import Any

from simfl.core.config import Scenario


class Progress:
    """The progress bar of ``simfl run``: in rounds, or in simulated seconds when the run
    is bounded by ``run.horizon_s`` alone (``run.rounds = null``).

    The bar is made at the first round's end, so that its rate and ETA do not count the
    imports and data loading before it; it is off when stderr is not a terminal.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        run = scenario.run
        self.by_time = run.rounds is None
        self.horizon_s = run.horizon_s
        self.bar: Any = None

    def _open(self):
        from tqdm import tqdm

        run = self.scenario.run
        return tqdm(total=run.horizon_s if self.by_time else run.rounds,
                    unit="sim s" if self.by_time else "round", desc=self.scenario.name,
                    file=sys.stderr, dynamic_ncols=True, disable=None,
                    bar_format=("{l_bar}{bar}| {n:,.0f}/{total:,.0f} sim s "
                                "[{elapsed}<{remaining}{postfix}]") if self.by_time else None)

    def __call__(self, done: int, t_s: float, accuracy: float | None) -> None:
        if self.bar is None:  # a resumed run starts where its checkpoint was
            self.bar = self._open()
            if not self.by_time:
                self.bar.update(done - 1)
        if self.by_time:
            self.bar.update(min(t_s, self.horizon_s) - self.bar.n)
        else:
            self.bar.update(1)
        acc = "-" if accuracy is None else f"{accuracy:.3f}"
        where = f"round {done}" if self.by_time else f"sim {t_s:,.1f} s"
        self.bar.set_postfix_str(f"{where}, acc {acc}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
