import numpy as np
import pytest

import simfl
from simfl.core.config import ErasureChannel, FixedRate, IdealChannel
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import AlwaysOnline
from simfl.sim.links.channel import build_link
from simfl.sim.simulation import Simulation


def make_sim(n_clients=4, compute_s=(1.0,), upload_s=1.0, download_s=0.0, deadline_s=10.0,
             p_erasure=0.0, arq=1, clients_per_round=None, overcommit=1.0, seed=0, online=None,
             battery=None, keep_late=False, mac=None):
    """A Simulation with exact, hand-picked durations (model_bytes = 1000 bytes)."""
    model_bytes = 1000
    compute_s = np.resize(np.asarray(compute_s, dtype=float), n_clients)

    def link(seconds, p):
        rate = FixedRate(rate_bps=model_bytes * 8 / seconds) if seconds else FixedRate(rate_bps=float("inf"))
        cfg = ErasureChannel(p=p, rate=rate) if p else IdealChannel(rate=rate)
        return build_link(cfg)

    rngs = RngTree(seed)
    return Simulation(
        rngs=rngs, n_samples=np.full(n_clients, 10), work_samples=compute_s,
        samples_per_s=np.ones(n_clients), online=online or AlwaysOnline(None, n_clients, rngs),
        links={"downlink": link(download_s, 0.0), "uplink": link(upload_s, p_erasure)},
        model_bytes=model_bytes, arq_max_attempts=arq,
        clients_per_round=clients_per_round or n_clients, overcommit=overcommit,
        deadline_s=deadline_s, battery=battery, keep_late=keep_late,
        **({} if mac is None else {"mac": mac}))


def vec(*xs):
    """A float64 vector (the worked examples' precision)."""
    import torch

    return torch.tensor(xs, dtype=torch.float64)


def outcome(r, clients):
    """Round ``r`` in which every one of ``clients`` (10 samples each) arrived on time."""
    from simfl.core.records import Arrival, RoundOutcome

    return RoundOutcome(round=r, t_open_s=float(r), t_deadline_s=r + 1.0, t_close_s=r + 1.0,
                        n_available=len(clients), selected=tuple(clients),
                        received=tuple(Arrival(c, r, r + 0.5, 10) for c in clients), missing=())


def everyone(view):
    return view.available


@pytest.fixture
def tiny_scenario():
    """A scenario that trains for real in well under a second."""
    return simfl.Scenario(
        name="tiny", seed=3,
        task=simfl.Task(dataset=simfl.Digits(), model=simfl.Logreg(), n_clients=12,
                        batch_size=16, local_epochs=1, lr=0.2),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=20.0, sigma=0.8),
                                    availability=simfl.Bernoulli(p=0.8)),
        network=simfl.Network(uplink=simfl.ErasureChannel(p=0.3), arq_max_attempts=2),
        server=simfl.Server(clients_per_round=5, deadline_s=7.0),
        run=simfl.Run(rounds=6))
