"""The contracts of the network's extension points, for every registered kind.

channels  ``build_link(cfg, rngs)`` gives a :class:`simfl.sim.links.channel.Link` whose
          ``transmit`` returns a Delivery (``ok`` a bool, a positive airtime set by the
          rate alone), the same deliveries again from the same seed and streams, and
          needs no generator when ``draws`` is False.
rates     an ideal link at the rate takes a positive airtime proportional to the bytes
          sent (no fading: the rate alone sets it), the same every time.
macs      ``build_mac(cfg, env, rngs, n)`` answers a round: ``transmit`` is a SimPy
          generator that waits on events and returns None (delivered) or a refusal
          (a MissingReason and a detail), not before the round opened; if it sends over
          the device's link, an attempt's wall time under its sharing rule is at least
          its airtime and the radio's bursts lie in order inside it; a shared band's
          event fires no sooner than the attempt's airtime after it was asked;
          ``leave`` is a bool; ``close_round`` None or slot records; the capabilities
          claim the process engine; the same seed gives the same round.
"""

from dataclasses import dataclass

import numpy as np
import pytest
import simpy

import simfl
from simfl.core.config.network import Channel, IdealChannel, Mac
from simfl.core.config.scripted import ScriptedErasureChannel, ScriptedMac
from simfl.core.records import MacSlots, MissingReason
from simfl.core.rng import RngTree
from simfl.core.config.rate import FixedRate
from simfl.sim.links.channel import Delivery, Link, build_link
from simfl.sim.mac.access import IdealAccess
from simfl.sim.mac.protocol import MediumAccess
from simfl.sim.mac.kinds import build_mac

from .kinds import config_of, kinds, registered_for_now

#: kinds that need more than their defaults to be built (none today)
CHANNEL_CASES: dict = {}
RATE_CASES: dict = {}
#: a script that exercises the scripted MAC's three paths: granted late, refused, never
MAC_CASES = {"scripted": lambda: ScriptedMac(grant_s=(0.0, 0.5, float("inf")), refused=(4,))}

N_CLIENTS = 6
N_BYTES = 1000


def deliveries(cfg: Channel, seed: int = 1) -> list[tuple[int, bool, float]]:
    rngs = RngTree(seed)
    link = build_link(cfg, rngs)
    assert isinstance(link, Link)
    out = []
    for attempt in range(12):
        for client in range(4):
            rng = rngs.stream(f"contract/{client}") if link.draws else None
            got = link.transmit(0.25 * attempt, N_BYTES, rng, client=client)
            assert isinstance(got, Delivery)
            assert isinstance(got.ok, bool), f"ok is {type(got.ok).__name__}, not bool"
            assert got.airtime_s > 0
            out.append((client, got.ok, got.airtime_s))
    return out


def channel_contract(cfg: Channel) -> None:
    got = deliveries(cfg)
    assert got == deliveries(cfg), "the same seed and streams gave other deliveries"
    if isinstance(cfg.rate, FixedRate) and not cfg.fading:
        assert all(a == pytest.approx(N_BYTES * 8 / cfg.rate.rate_bps) for _, _, a in got)


@pytest.mark.parametrize("name", kinds("channels"))
def test_channel_contract(name):
    channel_contract(config_of("channels", name, CHANNEL_CASES))


@pytest.mark.parametrize("name", kinds("rates"))
def test_rate_contract(name):
    cfg = IdealChannel(rate=config_of("rates", name, RATE_CASES))
    link = build_link(cfg, RngTree(0))
    one = link.transmit(0.0, N_BYTES, None).airtime_s
    assert 0 < one < np.inf
    assert link.transmit(1.0, 2 * N_BYTES, None).airtime_s == pytest.approx(2 * one)
    assert build_link(cfg, RngTree(0)).transmit(0.0, N_BYTES, None).airtime_s == one


class ContractUplink:
    """A device's uplink for the contract: every attempt gets through after its airtime
    (or when the MAC's band serves it); checks what the MAC's sharing rule answers."""

    def __init__(self, env, client, airtime_s):
        self.env, self.client, self.airtime_s = env, client, airtime_s
        self.sent = self.waited = 0
        self.wall_s = self.radio_s = None

    def send(self, share=None, serve=None):
        env, client, airtime_s = self.env, self.client, self.airtime_s
        self.sent += 1
        t_s = env.now
        wall_s, radio_s = airtime_s, airtime_s
        if share is not None:
            wall_s, bursts = share(client, t_s, airtime_s)
            assert wall_s >= airtime_s * (1 - 1e-12)
            ends = [t for burst in bursts for t in burst]  # radio on: in order, inside
            assert ends == sorted(ends) and 0 <= ends[0] and ends[-1] == pytest.approx(wall_s)
            radio_s = sum(end - start for start, end in bursts)
            assert 0 <= radio_s <= wall_s * (1 + 1e-12)
        served = None if serve is None else serve(client, 8.0 * N_BYTES, airtime_s)
        if served is None:
            yield env.timeout(wall_s)
        else:  # a shared band: the attempt ends when its bits are served
            assert isinstance(served, simpy.Event)
            yield served
            wall_s = env.now - t_s
            assert wall_s >= airtime_s * (1 - 1e-12)
        self.wall_s, self.radio_s = wall_s, radio_s
        return True

    def wait(self):
        self.waited += 1


def mac_round(cfg: Mac, seed: int = 2, t_open_s: float = 1.0, airtime_s: float = 0.05):
    env = simpy.Environment()
    access: MediumAccess = build_mac(cfg, env, RngTree(seed), N_CLIENTS)
    assert "process" in access.capabilities.engines, "every MAC runs on processes"
    seen = []

    def device(client):
        uplink = ContractUplink(env, client, airtime_s)
        steps = access.transmit(client, uplink)
        refusal = yield from steps
        assert refusal is None or (isinstance(refusal, tuple) and len(refusal) == 2
                                   and isinstance(refusal[0], MissingReason)
                                   and isinstance(refusal[1], str)), \
            f"transmit result {refusal!r}"
        assert env.now >= t_open_s
        seen.append((client, env.now, refusal is None, uplink.sent, uplink.waited,
                     uplink.wall_s, uplink.radio_s))

    def server():
        yield env.timeout(t_open_s)
        access.open_round(0, np.arange(N_CLIENTS))
        for client in range(N_CLIENTS):
            env.process(device(client))

    env.process(server())
    env.run(until=t_open_s + 1000.0)
    waiting = [c for c in range(N_CLIENTS) if c not in {s[0] for s in seen}]
    for client in waiting:
        assert isinstance(access.leave(client), (bool, np.bool_))
    stats = access.close_round()  # slot records of a contention MAC, None for the others
    assert stats is None or all(isinstance(row, MacSlots) for row in stats)
    return seen, waiting


def mac_contract(cfg: Mac) -> None:
    first = mac_round(cfg)
    assert first == mac_round(cfg), "the same seed gave another round"


@pytest.mark.parametrize("name", kinds("macs"))
def test_mac_contract(name):
    mac_contract(config_of("macs", name, MAC_CASES))


def test_the_scripted_mac_grants_refuses_and_withholds_as_listed():
    seen, waiting = mac_round(MAC_CASES["scripted"]())
    done = {c: (t, ok) for c, t, ok, *_ in seen}
    assert done[0] == (1.05, True) and done[3] == (1.05, True)  # grant_s[0] = 0, then 0.05 s
    assert done[1] == (1.55, True) and done[4] == (1.0, False)  # 0.5 s late; refused
    assert waiting == [2, 5]  # grant_s = inf


def test_the_scripted_channel_loses_the_listed_attempts_only():
    got = deliveries(ScriptedErasureChannel(lost=(True, False, False), clients=(1, 3)))
    for client in range(4):
        oks = [ok for c, ok, _ in got if c == client]
        assert oks == ([False, True, True] * 4 if client in (1, 3) else [True] * 12)


# ---------------------------------------------------------------------------------
# a kind that breaks its contract is caught


def test_a_channel_whose_losses_ignore_the_seed_fails_the_contract():
    with registered_for_now("channels"):
        @dataclass(frozen=True)
        class Flaky(Channel):
            """Loses on a generator of its own (breaks reproducibility)."""
            kind = "flaky_for_test"

        class FlakyLink(Link):
            def _lost(self, t_s, airtime_s, snr, client, rng):
                return bool(np.random.default_rng().random() < 0.5)

        simfl.register(Flaky, FlakyLink)
        with pytest.raises(AssertionError, match="same seed"):
            channel_contract(config_of("channels", "flaky_for_test", {}))


def test_a_mac_whose_transmission_answers_a_number_fails_the_contract():
    with registered_for_now("macs"):
        @dataclass(frozen=True)
        class Early(Mac):
            """Answers with a number instead of None or a refusal."""
            kind = "early_for_test"

        class EarlyAccess(IdealAccess):
            def transmit(self, client, uplink):
                yield self.env.timeout(0.0)
                return 1

        simfl.register(Early, EarlyAccess)
        with pytest.raises(AssertionError, match="transmit result"):
            mac_contract(config_of("macs", "early_for_test", {}))
        assert "early_for_test" in kinds("macs")
    assert "early_for_test" not in kinds("macs")
