"""A fast round with slotted ALOHA resolved for the whole cohort at once.

With ``network.mac.contention = "vectorised"``, a round that
:class:`~simfl.sim.rounds.fast.FastRound` covers runs here: ready times from the
cohort's compute times, the contention from :func:`simfl.sim.mac.aloha.cohort.contend`,
the granted uploads with ARQ from :func:`simfl.sim.mac.aloha.cohort_upload.upload`, then
outcomes, energy and event records for every client in numpy. Events are recorded in
time order (ties: computed, then lost attempts, then decided, then closed, each by client
id).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.sim.mac.aloha.cohort_upload import upload
from simfl.sim.mac.protocol import SlotContention
from simfl.sim.rounds.device import Devices
from simfl.sim.energy.source import Work
from simfl.sim.energy.infinite import InfiniteEnergy

Outcome = Arrival | Missing
_ARRIVED, _GAVE_UP, _LATE, _COLLIDED, _ERASED = range(5)


def run_cohort(devices: Devices, mac: SlotContention, works: Sequence[Work], round: int,
               started: np.ndarray, deadline_s: float) -> tuple[list[Outcome], float]:
    """Run ``round``'s work of ``started`` (sorted ids, ``works[i]`` standing for client
    i's work at the meter); returns each one's outcome and the time the round closes."""
    d, meter, log = devices, devices.energy, devices.log
    assert isinstance(meter, InfiniteEnergy)
    t_invite = float(d.env.now)
    t_deadline = t_invite + deadline_s
    n_bits = 8 * d.model_bytes
    dl_s = d.links.downlink.transmit(t_invite, d.model_bytes, None).airtime_s
    uplink = d.links.uplink
    ul_s = uplink.attempt_airtime_s(d.upload_bytes)
    t_now = [t_invite]
    meter.time_source = lambda: t_now[0]
    try:
        meter.begin_all(started, works)
        meter.switch_all(started, "rx", n_bits, dl_s)
        t_now[0] = t_dl = t_invite + dl_s
        if t_dl <= t_deadline:
            meter.switch_all(started, "compute")
    finally:
        meter.time_source = None
    ready_s = t_dl + d.compute_s[started]
    computed = (ready_s <= t_deadline) & (t_dl <= t_deadline)
    who = np.flatnonzero(computed)
    race = mac.settle_cohort(started[who], ready_s[who], t_deadline)

    # outcome times: granted uploads land or are erased at their last attempt's end,
    # given-up contenders stop at their slot's end
    slot_end_s = (race.decided_slot + 1) * mac.slot_s
    granted = np.flatnonzero(race.granted)
    rng = d.rngs.stream(f"channel/uplink/cohort/{round}") if uplink.draws else None
    up = upload(uplink, started[who[granted]], slot_end_s[granted], ul_s, d.arq_max_attempts,
                t_deadline, rng)
    arrived, erased = np.zeros(who.size, dtype=bool), np.zeros(who.size, dtype=bool)
    arrived[granted], erased[granted] = up.arrived, up.erased
    n_attempts, upload_end_s = np.zeros(who.size, dtype=np.int64), slot_end_s.copy()
    n_attempts[granted], upload_end_s[granted] = up.n_attempts, up.end_s
    gave_up = (race.decided_slot >= 0) & ~race.granted
    finished = arrived | erased | gave_up
    done_s = np.where(arrived | erased, upload_end_s, slot_end_s)
    t_close = t_deadline
    if 0 < who.size == started.size and finished.all():
        t_close = float(done_s.max())

    # energy: compute until ready, idle while contending (a transmission's slot at
    # transmit power instead), the upload's attempts back to back
    end_s = np.where(finished, done_s, t_close)
    granted_s = np.where(race.granted, slot_end_s, end_s)
    tx_w, tx_lump_j = meter.power.state_w("tx", 8 * d.upload_bytes, ul_s)
    then_j = (meter.power.state_w("idle")[0] * (granted_s - ready_s[who])
              + race.n_tx * (meter.power.contention_extra_w() * mac.slot_s)
              + np.where(race.granted, tx_w * (end_s - granted_s)
                         + n_attempts * (tx_lump_j or 0.0), 0.0))
    t_switch, t_end, extra_j = np.full(started.size, t_close), np.full(started.size, t_close), \
        np.zeros(started.size)
    t_switch[who], t_end[who], extra_j[who] = ready_s[who], end_s, then_j
    meter.finish_all(started, t_switch, extra_j, t_end)

    # outcomes and event records; not computed, or uploading at the close: late
    code = np.full(started.size, _LATE)
    code[who] = np.select([arrived, erased, gave_up, race.granted],
                          [_ARRIVED, _ERASED, _GAVE_UP, _LATE], _COLLIDED)
    outcomes: list[Outcome] = []
    events: list[tuple[float, int, int, int, str, str]] = [
        (t, 0, c, 0, EventKind.COMPUTED, "") for c, t
              in zip(started[who].tolist(), ready_s[who].tolist())]
    events += _lost_attempts(started[who[granted]], slot_end_s[granted], up.n_lost, ul_s)
    d.retries += int(np.minimum(up.n_lost, d.arq_max_attempts - 1).sum())
    for c, k, t in zip(started.tolist(), code.tolist(), t_end.tolist()):
        if k == _ARRIVED:
            outcomes.append(Arrival(c, round, t, int(d.n_samples[c])))
            events.append((t, 2, c, 0, EventKind.ARRIVED, ""))
        elif k == _ERASED:
            outcomes.append(Missing(c, MissingReason.ERASED, t))
            events.append((t, 2, c, 0, MissingReason.ERASED, "uplink"))
        elif k == _GAVE_UP:
            outcomes.append(Missing(c, MissingReason.COLLIDED, t))
            events.append((t, 2, c, 0, MissingReason.COLLIDED, "mac retry limit"))
        else:
            reason = MissingReason.LATE if k == _LATE else MissingReason.COLLIDED
            outcomes.append(Missing(c, reason, t_close))
            events.append((t_close, 3, c, 0, reason, "deadline"))
    events.sort()  # by time, category, client and attempt: no two alike
    for t, _, c, _, kind, detail in events:
        log(t, kind, round, c, detail)
    return outcomes, t_close


def _lost_attempts(clients: np.ndarray, start_s: np.ndarray, n_lost: np.ndarray,
                   airtime_s: float) -> list[tuple[float, int, int, int, str, str]]:
    """The records of the lost upload attempts: attempt k (from 1) of client i, begun at
    ``start_s[i]`` + (k - 1) ``airtime_s``, for k up to ``n_lost[i]``, at its end."""
    if not n_lost.any():
        return []
    each = np.repeat(np.arange(clients.size), n_lost)
    number = np.arange(each.size) - np.repeat(np.cumsum(n_lost) - n_lost, n_lost) + 1
    ends = start_s[each]
    for step in range(int(n_lost.max())):  # back to back, as the uploads' clock adds them
        ends = np.where(number > step, ends + airtime_s, ends)
    return [(t, 1, c, k, EventKind.ATTEMPT_LOST, f"uplink {k}")
            for t, c, k in zip(ends.tolist(), clients[each].tolist(), number.tolist())]
