"""The scripted kinds drive whole runs: a scenario names the losses and grants it needs."""

import csv
import math

import simfl
from simfl.core.config.scripted import ScriptedAvailability, ScriptedErasureChannel, ScriptedMac


def rounds_table(tmp_path, network, availability=ScriptedAvailability(), rounds=2):
    scenario = simfl.Scenario(
        name="scripted", seed=1,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Native(), n_clients=4),
        population=simfl.Population(availability=availability),
        server=simfl.Server(clients_per_round=4, deadline_s=100.0, sampler=simfl.AllAvailable()),
        network=network, run=simfl.Run(rounds=rounds, timing_only=True))
    result = simfl.run(scenario, tmp_path / "run")
    with open(result.out_dir / "rounds.csv", newline="") as f:
        return [{k: v for k, v in row.items()} for row in csv.DictReader(f)]


def counts(table, *columns):
    return [tuple(int(row[c]) for c in columns) for row in table]


def test_listed_losses_grants_and_refusals_decide_each_round(tmp_path):
    network = simfl.Network(
        uplink=ScriptedErasureChannel(lost=(True, False), clients=(1,)),  # 1st upload of 1
        mac=ScriptedMac(grant_s=(0.0, 0.0, 0.0, math.inf), refused=(2,)))  # 2 refused, 3 never
    table = rounds_table(tmp_path, network)
    assert counts(table, "n_received", "n_erased", "n_collided") == [(1, 1, 2), (2, 0, 2)]


def test_a_grant_after_the_deadline_makes_the_update_late_or_collided(tmp_path):
    network = simfl.Network(mac=ScriptedMac(grant_s=(0.0, 150.0)))  # odd clients too late
    table = rounds_table(tmp_path, network, rounds=1)
    assert counts(table, "n_received") == [(2,)]
    assert int(table[0]["n_late"]) + int(table[0]["n_collided"]) == 2


def test_scripted_presence_sets_who_is_available(tmp_path):
    table = rounds_table(tmp_path, simfl.Network(),
                         ScriptedAvailability(online=((0, 1, 2), (3,), ())), rounds=3)
    assert counts(table, "n_available", "n_received") == [(3, 3), (1, 1), (0, 0)]
