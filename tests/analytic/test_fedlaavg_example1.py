"""FedLaAvg's Example 1 (docs/algorithms.md §5), reproduced by running the simulator.

Two noise-free clients of the ``quadratic`` task, f_i(x) = (x - e_i)^2 with e = (0, 1);
client 0 is online for t1 = 1 round, then client 1 for t2 = 3 rounds, periodically;
every online client trains one exact gradient step with lr gamma. FedAvg (adopt the
online client's model) converges at period boundaries to

    X(gamma) = (q^t2 (e1 - e2) + e2 - q^(t1+t2) e1) / (1 - q^(t1+t2)),   q = 1 - 2 gamma,

(0.82655827 at gamma = 0.1, 0.75 as gamma -> 0), not to x* = 0.5; FedLaAvg (latest
gradients of both clients averaged) has x* as its fixed point. The numbers below are
the closed forms evaluated once, by hand; the runs are whole simulations (run_scenario:
availability, sampler, executor, aggregator). The runs are deterministic (no noise), so
the tolerance is float32 rounding, 1e-6.

The day/night pattern is the scripted availability kind: client 0 online in rounds r
with r mod (T1 + T2) < T1, client 1 in the others (nobody leaves during a round).
"""

import pytest

import simfl
from simfl import experiment
from simfl.core.config.scripted import ScriptedAvailability

T1, T2 = 1, 3
PERIODIC_TWO_CLIENTS = ScriptedAvailability(online=((0,),) * T1 + ((1,),) * T2)


def run(tmp_path, algorithm, rounds, gamma=0.1):
    scenario = simfl.Scenario(
        name="example1", seed=3,
        task=simfl.Task(dataset=simfl.Quadratic(targets=(0.0, 1.0), samples_per_client=5),
                        partition=simfl.Native(), model=simfl.Logreg(), n_clients=2,
                        batch_size=8, local_steps=1, lr=gamma),
        population=simfl.Population(availability=PERIODIC_TWO_CLIENTS),
        server=simfl.Server(algorithm=algorithm, sampler=simfl.AllAvailable(),
                            clients_per_round=2, deadline_s=1e6),
        run=simfl.Run(rounds=rounds, eval_every_rounds=rounds))
    result = experiment.run_scenario(scenario, tmp_path / f"{algorithm.kind}_{rounds}")
    assert result.summary["trained_updates"] == rounds  # one online client per round
    return float(result.params["layer0.bias"][0])


@pytest.mark.parametrize("rounds", [200, 204])
def test_fedavg_converges_to_the_biased_period_boundary_limit(tmp_path, rounds):
    x = run(tmp_path, simfl.FedAvg(weighting="uniform"), rounds)
    assert x == pytest.approx(0.82655827, abs=1e-6)


def test_fedavg_limit_at_a_smaller_step(tmp_path):
    # gamma = 0.05: q = 0.9, X = (0.729 * -1 + 1) / (1 - 0.6561) = 0.78802..., closer to 0.75
    x = run(tmp_path, simfl.FedAvg(weighting="uniform"), 400, gamma=0.05)
    assert x == pytest.approx(0.271 / 0.3439, abs=1e-6)


def test_fedlaavg_reaches_the_unbiased_fixed_point(tmp_path):
    x = run(tmp_path, simfl.FedLaAvg(), 400)
    assert x == pytest.approx(0.5, abs=1e-6)
