"""Sessions: two client groups with different digits take turns; how should a session start?

40 phones hold scikit-learn's digits, split into group A (clients 0-19, digits 0-5) and
group B (clients 20-39, digits 4-9: two digits shared); within a group each phone gets
Dirichlet(0.7) class proportions. Sessions of 15 rounds alternate A, B, A, B, ...; in
each round every phone of the session is invited (all of them are online) and FedAvg
averages what arrives before the 8 s deadline. Accuracy is measured on the test digits of
the current session's group (``evals.csv`` column ``session``).

Session 0 is the pilot stage. From session 1 on, the similarity initialiser starts each
session from a blend of the finished sessions' models, weighted by how similar a
one-round gradient from the pilot model is to theirs (docs/algorithms.md §3). Compare with

    simfl run sessions --set population.sessions.init.kind=previous
    simfl run sessions --set population.sessions.init.kind=average

(every variant restarts from the initial model at session 1, and sessions 0-2 coincide
except for ``continuous``, whose distillation starts in session 2). What to look at:
the first rounds of each returning session (where the warm start matters) and the
accuracy at each session's end; ``simfl plot DIR... --x round`` shows both.
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="sessions",
        seed=3,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Dirichlet(alpha=0.7),
                        model=simfl.Logreg(), n_clients=40, batch_size=16, local_steps=5,
                        lr=0.05),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=40.0, sigma=0.3),
            sessions=simfl.Sessions(groups=2, rounds_per_session=15, pilot_sessions=1,
                                    label_overlap=2,
                                    init=simfl.Similarity(gradient_rounds=1, scale=10.0))),
        network=simfl.Network(uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6)),
                              downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6))),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.AllAvailable(),
                            clients_per_round=20, deadline_s=8.0),
        run=simfl.Run(rounds=105, eval_every_rounds=1),
    )
