"""Generated valid timing-only scenarios: the run's records obey the accounting rules.

Each example draws a population, availability model, channel, ARQ, MAC, battery,
sampler and deadline, runs it timing-only for a few rounds, and checks from the
records themselves (not from the recorder's own checks): the clock never goes back,
every invitee ends its round in exactly one outcome, energy is never negative, and
the counts in ``rounds.csv`` and ``summary.json`` add up.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import simfl
from simfl.core.records import MISSING_REASONS
from simfl.experiment import run_scenario
from simfl.metrics.rundir import read_csv

probability = st.floats(0.05, 1.0)


@st.composite
def scenarios(draw):
    n = draw(st.integers(2, 60))
    k = draw(st.integers(1, n))
    availability = draw(st.one_of(
        st.just(simfl.Always()),
        probability.map(lambda p: simfl.Bernoulli(p=p)),
        st.builds(simfl.Markov, on_rate_per_s=st.floats(0.01, 1.0), off_rate_per_s=st.floats(0.01, 1.0)),
        st.builds(lambda m: simfl.Diurnal(strategy="sine", mean_p=m, period_s=50.0),
                  st.floats(0.05, 0.4)),
    ))
    rate = st.builds(simfl.FixedRate, rate_bps=st.floats(1e4, 1e8))
    uplink = draw(st.one_of(
        st.builds(simfl.IdealChannel, rate=rate),
        st.builds(simfl.ErasureChannel, p=st.floats(0.0, 0.9), rate=rate),
        st.builds(simfl.GilbertElliottChannel, rate=rate),
        st.builds(simfl.RayleighChannel, mean_snr_db=st.floats(-5.0, 30.0)),
    ))
    mac = draw(st.one_of(
        st.just(simfl.IdealMac()),
        st.builds(simfl.TdmaMac, mode=st.sampled_from(["slots", "shared"]),
                  slot_s=st.floats(0.01, 1.0)),
        st.builds(simfl.SlottedAlohaMac, access_prob=st.floats(0.05, 1.0),
                  slot_s=st.floats(0.001, 0.1), channels=st.integers(1, 3),
                  backoff=st.sampled_from(["none", "binary_exponential"])),
        st.builds(simfl.RelayMac, policy=st.sampled_from(["bernoulli", "capacity"]),
                  probs=probability),
    ))
    battery = draw(st.one_of(st.none(), st.builds(
        simfl.Battery, capacity_j=st.floats(5.0, 500.0), initial_soc=st.floats(0.2, 1.0))))
    sampler = draw(st.sampled_from([simfl.Uniform(), simfl.Uniform(pool="all"),
                                    simfl.AllAvailable(), simfl.Md(), simfl.LongestAbsent()]))
    return simfl.Scenario(
        name="generated", seed=draw(st.integers(0, 2**32)),
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Native(), n_clients=n,
                        local_epochs=draw(st.integers(1, 3))),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=draw(st.floats(50.0, 5000.0)),
                                  sigma=draw(st.floats(0.0, 1.5))),
            availability=availability, battery=battery),
        network=simfl.Network(uplink=uplink, mac=mac, arq_max_attempts=draw(st.integers(1, 3)),
                              model_bytes=draw(st.integers(1_000, 2_000_000))),
        server=simfl.Server(sampler=sampler, clients_per_round=k,
                            deadline_s=draw(st.floats(0.5, 200.0)),
                            overcommit=draw(st.floats(1.0, 2.0))),
        run=simfl.Run(rounds=draw(st.integers(1, 6)), timing_only=True),
    )


def check_run(scenario, out_dir):
    result = run_scenario(scenario, out_dir)
    rows = read_csv(result.out_dir / "rounds.csv")
    summary = json.loads((result.out_dir / "summary.json").read_text())
    assert len(rows) == summary["rounds"] == len(result.outcomes) == scenario.run.rounds
    t_prev = 0.0
    for o, row in zip(result.outcomes, rows):
        # the clock: rounds follow one another, each closes by its deadline
        assert t_prev <= o.t_open_s <= o.t_close_s <= o.t_deadline_s
        t_prev = o.t_close_s
        # each invitee exactly one outcome
        ended = [a.client for a in o.received] + [m.client for m in o.missing]
        assert sorted(ended) == sorted(o.selected) and len(set(o.selected)) == len(o.selected)
        assert all(m.reason in MISSING_REASONS for m in o.missing)
        assert all(a.t_s <= o.t_close_s for a in o.received)
        # counts add up in the table
        # (``truncated`` is AirComp's, counted in aircomp.csv rather than rounds.csv)
        missing = sum(int(row[f"n_{r}"]) for r in MISSING_REASONS if r != "truncated")
        assert o.n_missing("truncated") == 0
        assert int(row["n_received"]) + missing == int(row["n_selected"]) == len(o.selected)
        assert int(row["n_available"]) >= 0 and int(row["retries"]) >= 0
        assert int(row["trained_updates"]) == int(row["aggregated_updates"]) == 0  # timing only
        # energy is never negative
        assert o.energy_j >= 0 and float(row["energy_j"]) >= 0
    clients = read_csv(result.out_dir / "clients.csv")
    assert all(float(c["energy_j"]) >= 0 for c in clients)
    if clients and "min_stored_j" in clients[0]:
        assert all(float(c["min_stored_j"]) >= -1e-6 for c in clients)
    assert summary["energy_j"] == pytest.approx(sum(o.energy_j for o in result.outcomes),
                                                rel=1e-9, abs=1e-9)
    assert summary["sim_time_s"] >= t_prev


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_generated_timing_only_runs_keep_their_accounts(tmp_path, scenario):
    check_run(scenario, tmp_path / "r")


@pytest.mark.slow
@settings(max_examples=2000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_generated_timing_only_runs_long_profile(tmp_path, scenario):
    check_run(scenario, tmp_path / "r")
