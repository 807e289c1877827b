"""Your own MAC: p-persistent slotted ALOHA whose persistence halves at every collision.

The MAC is a config class with a ``kind`` plus an access model handed to simfl.register;
no file of simfl changes. 30 phones contend for the uplink in 10 ms slots before each
upload: a contender sends in a slot with probability p (0.5 to start), a lone sender
wins the channel, and each sender of a collision halves its p (down to p_min); after
max_collisions collisions the upload is given up (reason ``collided``).
"""

import math
from dataclasses import dataclass

import simfl


@dataclass(frozen=True)
class PersistentAloha(simfl.Mac):
    """p-persistent slotted ALOHA with p halved at each collision (down to p_min)."""

    kind = "persistent_aloha"
    slot_s: float = 0.01
    p: float = 0.5
    p_min: float = 0.01
    max_collisions: int = 12

    def validate(self) -> None:
        if not 0.0 < self.p_min <= self.p <= 1.0:
            raise simfl.ConfigError("p", self.p, f"a probability in [p_min = {self.p_min}, 1] "
                                    "with p_min > 0")
        if not (self.slot_s > 0 and self.max_collisions >= 0):
            raise simfl.ConfigError("slot_s", self.slot_s, "a slot > 0 s and max_collisions >= 0")


@simfl.register(PersistentAloha)
class PersistentAlohaAccess(simfl.MacBase):
    """Built as ``cls(cfg, env, rngs, n_clients, on_transmit)``; ``transmit`` is a device's
    whole upload: contend until it wins a slot (or gives up), then send on its own link."""

    round = -1
    contenders: dict = {}  # client -> [its access event, its p, its collisions]

    def open_round(self, round, started):
        self.round, self.contenders = round, {}
        self.rng = self.rngs.stream(f"mac/persistent_aloha/round/{round}")

    def transmit(self, client, uplink):
        won = self.env.event()
        self.contenders[client] = [won, self.cfg.p, 0]
        if len(self.contenders) == 1:  # the medium was idle: the slots start again
            self.env.process(self.slots(self.round))
        uplink.wait()  # awake while contending (the slots charge the transmissions)
        if not (yield won):
            return simfl.GAVE_UP
        if not (yield from uplink.send()):
            return simfl.LOST_ON_LINK
        return None

    def leave(self, client):
        return self.contenders.pop(client, None) is not None

    def close_round(self):
        self.round, self.contenders = -1, {}

    def slots(self, round):
        slot_s = self.cfg.slot_s
        while self.contenders and self.round == round:
            slot = math.ceil(self.env.now / slot_s - 1e-9)  # the next slot from t = 0 on
            yield self.env.timeout(max((slot + 1) * slot_s - self.env.now, 0.0))  # its end
            clients = sorted(self.contenders)
            draws = self.rng.random(len(clients))
            senders = [c for c, u in zip(clients, draws) if u < self.contenders[c][1]]
            if senders and self.on_transmit is not None:
                self.on_transmit(senders, slot_s)  # charge the contention transmissions
            if len(senders) == 1:  # alone in the slot: access granted
                self.contenders.pop(senders[0])[0].succeed(True)
                continue
            for client in senders:  # a collision: each sender backs off
                state = self.contenders[client]
                state[1], state[2] = max(state[1] / 2, self.cfg.p_min), state[2] + 1
                if state[2] > self.cfg.max_collisions:
                    self.contenders.pop(client)[0].succeed(False)


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="own_mac", seed=1,
        task=simfl.Task(dataset=simfl.Digits(), model=simfl.Mlp(hidden=(32,)), n_clients=30,
                        local_steps=5, lr=0.1),
        network=simfl.Network(mac=PersistentAloha(),
                              uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6))),
        server=simfl.Server(clients_per_round=10, deadline_s=10.0),
        run=simfl.Run(rounds=10, eval_every_rounds=5))
