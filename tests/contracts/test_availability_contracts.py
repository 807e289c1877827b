"""The contract of every registered availability model.

``build_availability(cfg, n, rngs, n_samples, label_counts)`` gives a model whose
``online(round, t_s)`` is a bool mask over the n registered clients, the same for the
same seed, round and time (however many rounds were asked before: each round draws
from its own stream), and whose ``offline_at(clients)`` gives one time per client, not
before the round's opening time (``inf``: stays).
"""

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import simfl
from simfl.core.config import Availability, Trace
from simfl.core.config.scripted import ScriptedAvailability
from simfl.core.rng import RngTree
from simfl.sim.availability.models import build_availability
from simfl.sim.availability.rounds import PerRoundModel

from .kinds import config_of, kinds, registered_for_now

N_CLIENTS = 8
N_SAMPLES = np.arange(1, N_CLIENTS + 1) * 10
LABEL_COUNTS = np.eye(N_CLIENTS, 4, dtype=np.int64) * 5 + 1
ROUND_S = 60.0
#: removed when the test process ends
_FILES = tempfile.TemporaryDirectory(prefix="simfl-contracts-")
TRACE = Path(_FILES.name) / "trace.csv"


def _trace() -> Trace:
    if not TRACE.exists():
        rows = "".join(f"{c},{40 * r + 7 * c},{40 * r + 7 * c + 25}\n"
                       for c in range(N_CLIENTS) for r in range(10))
        TRACE.write_text("client,start_s,end_s\n" + rows)
    return Trace(path=str(TRACE), periodic=True, period_s=500.0)


#: kinds that need more than their defaults
CASES = {"trace": _trace,
         "scripted": lambda: ScriptedAvailability(online=((0, 3), (), (1, 2, 7)))}


def build(cfg: Availability, seed: int = 3):
    return build_availability(cfg, N_CLIENTS, RngTree(seed), N_SAMPLES,
                              LABEL_COUNTS if cfg.needs_labels else None)


def availability_contract(cfg: Availability) -> None:
    model = build(cfg)
    asked = []
    for r in range(6):
        mask = model.online(r, r * ROUND_S)
        assert isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == (N_CLIENTS,)
        online = np.flatnonzero(mask)
        off = np.asarray(model.offline_at(online), dtype=float)
        assert off.shape == online.shape and not np.isnan(off).any()
        assert (off >= r * ROUND_S).all(), "a client goes offline before the round opened"
        asked.append((mask.copy(), off))
    again = build(cfg)
    for r, (mask, off) in enumerate(asked):
        got = again.online(r, r * ROUND_S)
        assert np.array_equal(got, mask), "the same seed and round gave another mask"
        assert np.array_equal(again.offline_at(np.flatnonzero(got)), off)
    if isinstance(model, PerRoundModel):  # rounds draw from their own streams
        assert np.array_equal(build(cfg).online(5, 5 * ROUND_S), asked[5][0])


@pytest.mark.parametrize("name", kinds("availability"))
def test_availability_contract(name):
    availability_contract(config_of("availability", name, CASES))


def test_the_scripted_model_is_online_as_listed():
    model = build(CASES["scripted"]())
    assert [list(np.flatnonzero(model.online(r, 0.0))) for r in range(4)] == \
        [[0, 3], [], [1, 2, 7], [0, 3]]


def test_a_model_that_ignores_the_seed_fails_the_contract():
    with registered_for_now("availability"):
        @dataclass(frozen=True)
        class Coin(Availability):
            """Tosses a coin of its own."""
            kind = "coin_for_test"

        class CoinOnline(PerRoundModel):
            def __init__(self, cfg, n_clients, rngs, n_samples, label_counts):
                super().__init__(n_clients, rngs)

            def online(self, round, t_s):
                return np.random.default_rng().random(self.n_clients) < 0.5

        simfl.register(Coin, CoinOnline)
        with pytest.raises(AssertionError, match="same seed"):
            availability_contract(config_of("availability", "coin_for_test", {}))
