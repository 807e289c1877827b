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
from simfl.sim.mac.aloha.cohort_upload import CohortUpload, upload
from simfl.sim.mac.protocol import SlotContention
from simfl.sim.rounds.device import Devices
from simfl.sim.energy.source import Work
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.energy.power_model import PowerModel

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
    up = upload(uplink, started[who[granted]], slot_end_s[granted], d.upload_bytes,
                d.arq_max_attempts, t_deadline, rng)
    arrived, erased = np.zeros(who.size, dtype=bool), np.zeros(who.size, dtype=bool)
    arrived[granted], erased[granted] = up.arrived, up.erased
    upload_end_s = slot_end_s.copy()
    upload_end_s[granted] = up.end_s
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
    tx_j = np.zeros(who.size)
    tx_j[granted] = _upload_j(meter.power, 8 * d.upload_bytes, up, t_close, granted.size)
    then_j = (meter.power.state_w("idle")[0] * (granted_s - ready_s[who])
              + race.n_tx * (meter.power.contention_extra_w() * mac.slot_s) + tx_j)
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
    lost = up.lost_by(t_deadline)
    events += [(t, 1, c, k, EventKind.ATTEMPT_LOST, f"uplink {k}") for t, c, k in zip(
        (up.start_s + up.airtime_s)[lost].tolist(), started[who[granted[up.upload[lost]]]].tolist(),
        up.number[lost].tolist())]
    d.retries += int((up.number[lost] < d.arq_max_attempts).sum())
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



def _upload_j(power: PowerModel, n_bits: int, up: CohortUpload, t_close: float,
              n_uploads: int) -> np.ndarray:
    """Each upload's transmit energy: every attempt at the transmit power of its airtime
    while the radio is on (to its end, or the close), plus any lump per attempt."""
    airtimes, index = np.unique(up.airtime_s, return_inverse=True)
    drawn = [power.state_w("tx", n_bits, airtime_s) for airtime_s in airtimes.tolist()]
    tx_w = np.array([w for w, _ in drawn])[index]
    lump_j = np.array([lump or 0.0 for _, lump in drawn])[index]
    on_s = np.minimum(up.start_s + up.airtime_s, t_close) - up.start_s
    return np.bincount(up.upload, weights=tx_w * on_s + lump_j, minlength=n_uploads)
