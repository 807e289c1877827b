"""Each client's optimal linear-softmax model on its own training data.

The FedGS oracle graph of a synthetic task links clients whose optimal local models are
alike: client k's optimum (W_k, b_k) of multinomial logistic regression on its own
samples. Those samples are often linearly separable (the Synthetic(alpha, beta) labels
are the argmax of a linear map), where the plain cross-entropy has no minimiser, so the
objective carries a small ridge penalty on the weights and the bias together:

    mean_i CE(softmax(W^T x_i + b), y_i) + l2 / 2 * (||W||^2 + ||b||^2),

strictly convex, so the optimum is unique; it is found with L-BFGS in float64 from zero,
with one BLAS thread (many small products: threads only contend, and one thread keeps
the sums in one order).
With the same penalty on every class, the optimum's columns sum to zero (adding a
vector to every class changes no prediction but raises the penalty).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from simfl.train.data import FederatedData

#: the ridge penalty on the weights and bias of every client's optimum
OPTIMUM_L2 = 1e-2
#: L-BFGS stopping rule: the projected gradient's largest entry (the relative-decrease
#: rule is set far below it so that it does not stop first)
OPTIMUM_GTOL = 1e-9


def softmax_optimum(x: np.ndarray, y: np.ndarray, n_classes: int,
                    l2: float = OPTIMUM_L2) -> tuple[np.ndarray, np.ndarray]:
    """The penalised logistic-regression optimum of one data set.

    Parameters
    ----------
    x : ndarray, shape (n, d)
        Samples (flattened).
    y : ndarray, shape (n,)
        Class labels in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes (columns of W).
    l2 : float
        Ridge penalty on W and b (must be > 0 for separable data).

    Returns
    -------
    weights : ndarray, shape (d, n_classes)
    bias : ndarray, shape (n_classes,)
    """
    x = np.asarray(x, dtype=np.float64).reshape(len(y), -1)
    n, d = x.shape
    if n == 0:
        return np.zeros((d, n_classes)), np.zeros(n_classes)
    xb = np.hstack([x, np.ones((n, 1))])  # the bias as a weight of a constant feature
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), np.asarray(y, dtype=np.int64)] = 1.0

    def value_and_grad(flat: np.ndarray) -> tuple[float, np.ndarray]:
        theta = flat.reshape(d + 1, n_classes)
        logits = xb @ theta
        logits -= logits.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(logits).sum(axis=1, keepdims=True))
        log_p = logits - log_norm
        value = -float((onehot * log_p).sum()) / n + 0.5 * l2 * float((theta ** 2).sum())
        grad = xb.T @ (np.exp(log_p) - onehot) / n + l2 * theta
        return value, grad.ravel()

    found = minimize(value_and_grad, np.zeros((d + 1) * n_classes), jac=True,
                     method="L-BFGS-B", options={"maxiter": 10000, "gtol": OPTIMUM_GTOL,
                              "ftol": 1e-15})
    theta = found.x.reshape(d + 1, n_classes)
    return theta[:d], theta[d]


def client_optima(data: FederatedData, l2: float = OPTIMUM_L2) -> np.ndarray:
    """One row per client: its optimal (W_k, b_k), flattened W then b.

    Shape (n_clients, (n_features + 1) * n_classes); a client without samples gets zeros
    (no edges in the graph).
    """
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for idx in data.client_indices:
            weights, bias = softmax_optimum(data.x_train[idx], data.y_train[idx],
                                            data.n_classes, l2)
            rows.append(np.concatenate([weights.ravel(), bias]))
    return np.stack(rows)
