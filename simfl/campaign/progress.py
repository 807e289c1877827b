"""The progress bar over a campaign's runs: done / running / failed and an ETA, on
stderr; off when stderr is not a terminal, or when quiet."""

from __future__ import annotations

import sys


class CampaignProgress:
    def __init__(self, name: str, total: int, quiet: bool = False) -> None:
        self.done = self.running = self.failed = 0
        self.bar = None
        if quiet or total == 0:
            return
        from tqdm import tqdm

        self.bar = tqdm(total=total, unit="run", desc=name, file=sys.stderr, disable=None,
                        dynamic_ncols=True)
        self._show()

    def _show(self, refresh: bool = True) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"done {self.done}, running {self.running}, "
                                     f"failed {self.failed}", refresh=refresh)

    def started(self) -> None:
        self.running += 1
        self._show()

    def finished(self, ok: bool) -> None:
        self.running -= 1
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self._show(refresh=False)
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
