"""Checks that every run must satisfy; a violation is a simulator bug, not a user error."""

from __future__ import annotations

from typing import Any, Sequence

from simfl.core.records import MISSING_REASONS, RoundOutcome


def check_rounds(outcomes: Sequence[RoundOutcome], trained: Sequence[int],
                 aggregated: Sequence[int], late_allowed: bool = False) -> list[str]:
    """Violations (as sentences) of the round-level invariants; empty when all hold.

    Monotone clock; each invited client ends the round in exactly one outcome with a
    known reason; nothing in ``received`` after the deadline or the close; no wasted or
    invented training: trained == aggregated, and trained is 0 (timing only, or a round
    below ``server.min_updates``) or every update that arrived (received + late received).
    ``trained`` is counted from what the executor returned and ``aggregated`` from what
    the aggregator reports it used, so a rule that loses an update fails here. Late uploads
    (``late_received``) only when the aggregator asked for them (``late_allowed``), each
    from a client that its invitation round counted ``late``, landing after that round
    closed and by this one's close.
    """
    problems: list[str] = []
    t_prev = 0.0
    by_round = {outcome.round: outcome for outcome in outcomes}
    for outcome, n_trained, n_aggregated in zip(outcomes, trained, aggregated):
        r = outcome.round
        if not t_prev <= outcome.t_open_s <= outcome.t_close_s <= outcome.t_deadline_s:
            problems.append(f"round {r}: clock not monotone (previous close {t_prev}, open "
                            f"{outcome.t_open_s}, close {outcome.t_close_s}, deadline "
                            f"{outcome.t_deadline_s})")
        t_prev = outcome.t_close_s
        ended = sorted([a.client for a in outcome.received] + [m.client for m in outcome.missing])
        if ended != sorted(outcome.selected):
            problems.append(f"round {r}: invited {sorted(outcome.selected)} but outcomes for {ended}")
        late = [a.client for a in outcome.received
                if a.t_s > outcome.t_deadline_s or a.t_s > outcome.t_close_s]
        if late:
            problems.append(f"round {r}: received after the deadline or close: {late}")
        unknown = {m.reason for m in outcome.missing} - set(MISSING_REASONS)
        if unknown:
            problems.append(f"round {r}: unknown missing reasons {sorted(unknown)}")
        if outcome.late_received and not late_allowed:
            problems.append(f"round {r}: late uploads the aggregator did not ask for: "
                            f"{[a.client for a in outcome.late_received]}")
        for a in outcome.late_received:
            base = by_round.get(a.base_round)
            if (base is None or a.base_round >= r or not base.t_close_s <= a.t_s <= outcome.t_close_s
                    or (a.client, "late") not in {(m.client, m.reason) for m in base.missing}):
                problems.append(f"round {r}: late upload of client {a.client} from round "
                                f"{a.base_round} at {a.t_s} s does not match a late invitee")
        n_arrived = len(outcome.received) + len(outcome.late_received)
        if n_trained != n_aggregated or n_trained not in (0, n_arrived):
            problems.append(f"round {r}: trained {n_trained}, aggregated {n_aggregated}, "
                            f"received {n_arrived} (late included)")
    return problems


def check_energy(outcomes: Sequence[RoundOutcome], clients: dict[str, Sequence[Any]],
                 tol_j: float = 1e-6) -> list[str]:
    """Violations of the energy invariants, from the per-client table (``clients.csv``).

    Battery energy never below zero and never above capacity: every client's lowest
    and final stored energy lie in [0, capacity_j] (within ``tol_j``, float rounding);
    and the energy of the rounds (``rounds.csv``) adds up to that of the clients.
    """
    problems: list[str] = []
    if "min_stored_j" in clients:
        for client, low, final, cap in zip(clients["client"], clients["min_stored_j"],
                                           clients["final_stored_j"], clients["capacity_j"]):
            if not -tol_j <= low <= final + tol_j or final > cap + tol_j:
                problems.append(f"client {client}: stored energy left [0, {cap}] J "
                                f"(lowest {low}, final {final})")
    by_rounds = sum(o.energy_j for o in outcomes)
    by_clients = float(sum(clients["energy_j"]))
    if abs(by_rounds - by_clients) > tol_j * max(1.0, by_clients):
        problems.append(f"energy of the rounds {by_rounds} J != energy of the clients "
                        f"{by_clients} J")
    return problems
