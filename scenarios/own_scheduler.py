"""Own scheduler: an OFDMA scheduler and a client-selection policy written in this script.

40 phones in a 300 m cell share a 1 MHz uplink band (``network.mac.kind = "ofdma"``).
Two kinds are defined here and given their implementations with ``simfl.register``,
without touching simfl:

* the scheduler ``equal_time`` splits a cell's band among its active uploads in inverse
  proportion to each one's full-band rate, so that the weak get the larger shares (were
  rates proportional to shares, uploads started together would end together)
  (``network.mac.scheduler = "equal_time"``);
* the policy ``strongest_fresh`` (``server.policy``) invites, among the sampler's
  candidates, the ``k`` with the highest mean SNR that did not take part in the last
  round (ties to the lower id); it decides the selection only.

Compare with the built-ins::

    simfl run own_scheduler --timing-only
    simfl run own_scheduler --timing-only --set network.mac.scheduler=equal \\
        --set server.policy=none
"""

from dataclasses import dataclass

import numpy as np

import simfl


@dataclass(frozen=True)
class EqualTime(simfl.Scheduler):
    """Band shares inversely proportional to each upload's full-band rate."""

    kind = "equal_time"


@simfl.register(EqualTime)
class EqualTimeSplit(simfl.BandSplit):
    """Built as ``cls(mac_cfg, radio_map, n_clients)``; asked for the active uploads'
    shares whenever an upload of a cell starts or ends."""

    def fractions(self, clients: np.ndarray, link_bps: np.ndarray) -> np.ndarray:
        inverse = 1.0 / self.full_rate_bps(clients, link_bps)
        return inverse / inverse.sum()


@dataclass(frozen=True)
class StrongestFresh(simfl.Policy):
    """The k candidates of highest mean SNR that sat out the last round."""

    kind = "strongest_fresh"
    k: int = 8


@simfl.register(StrongestFresh)
class StrongestFreshPolicy:
    def __init__(self, cfg: StrongestFresh) -> None:
        self.k = cfg.k

    def decide(self, state: simfl.RoundState) -> simfl.Allocation:
        assert state.radio is not None, "this policy reads the radio"
        fresh = (state.last_round < 0) | (state.last_round != state.round - 1)
        order = np.lexsort((state.clients, -state.radio.mean_snr_db))  # best first
        picked = [int(state.clients[i]) for i in order if fresh[i]][:self.k]
        return simfl.Allocation(selected=sorted(picked))


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="own_scheduler",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Logreg(),
                        n_clients=40, batch_size=16, local_epochs=1, lr=0.1),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=50.0, sigma=0.3),
            placement=simfl.DiscPlacement(radius_m=300.0, min_m=10.0)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(), downlink=simfl.IdealChannel(),
            radio=simfl.Radio(shadowing_db=8.0, bandwidth_hz=1e6),
            mac=simfl.OfdmaMac(scheduler="equal_time"), model_bytes=250_000),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=16, deadline_s=10.0,
                            policy=StrongestFresh(k=8)),
        run=simfl.Run(rounds=10, eval_every_rounds=1),
    )
