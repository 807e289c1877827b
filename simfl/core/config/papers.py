"""Citations shown by ``simfl list``: the papers several config classes cite."""

FEDAVG = ("McMahan et al., Communication-Efficient Learning of Deep Networks from "
          "Decentralized Data, AISTATS 2017")
MIFA = ("Gu et al., Fast Federated Learning in the Presence of Arbitrary Device "
        "Unavailability (MIFA), NeurIPS 2021")
FEDAR = ("Jiang et al., FedAR: Addressing Client Unavailability in Federated Learning with "
         "Local Update Approximation and Rectification, arXiv 2407.19103, 2024")
RANDOM_ACCESS = ("Theodoropoulos, Nikolakakis, Kalogerias, Federated Learning Under "
                 "Restricted User Availability, arXiv 2309.14176")
