"""A client-edge-cloud topology given as a networkx graph, turned into ``server.hierarchy``.

The graph's nodes are the clients (the integers 0..n-1), the edge servers (any other
names, numbered in the order ``edges`` lists them, or sorted by their text) and one
cloud node (``cloud``). Every client is joined to exactly one edge server; every edge
server is joined to the cloud, and that link's attributes ``rate_bps``, ``latency_s``
and ``p_loss`` (each optional: an ideal link's value when missing) are its backhaul.
The scenario keeps the resulting :class:`~simfl.core.config.hierarchy.Hierarchy`
(plain numbers, so ``config.json`` states the topology in full).
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import networkx as nx

from simfl.core.config.hierarchy import Backhaul, Hierarchy
from simfl.core.errors import ConfigError

#: the name of the cloud node
CLOUD = "cloud"


def hierarchy_from_graph(graph: nx.Graph, n_clients: int, *,
                         edges: Sequence[Hashable] | None = None,
                         **settings: Any) -> Hierarchy:
    """The hierarchy that ``graph`` draws for clients 0..``n_clients`` - 1.

    ``settings`` are the other fields of :class:`Hierarchy` (``kappa1``, ``kappa2``,
    ``cloud_deadline_s``). Raises :class:`ConfigError` naming the first node or link
    that does not fit (a client without an edge, a client joined to an unknown edge,
    an edge server listed twice or without a link to the cloud, a graph that is a
    MultiGraph or directed).
    """
    field = "server.hierarchy (graph)"
    if not isinstance(graph, nx.Graph) or graph.is_multigraph() or graph.is_directed():
        raise ConfigError(field, type(graph).__name__, "an undirected networkx Graph with at "
                          "most one link between two nodes (not a MultiGraph or DiGraph)")
    if CLOUD not in graph:
        raise ConfigError(field, sorted(map(str, graph.nodes))[:5],
                          f"a graph with a node named {CLOUD!r}")
    clients = set(range(n_clients))
    found = [n for n in graph.nodes if n != CLOUD and n not in clients]
    order = list(edges) if edges is not None else sorted(found, key=str)
    listed: set[Hashable] = set()
    for name in order:
        if not isinstance(name, Hashable) or name in listed:
            raise ConfigError(f"{field} edges", name, "each edge server listed once, by a "
                              "node name of the graph")
        listed.add(name)
    unknown = [n for n in found if n not in order]
    if unknown:
        raise ConfigError(f"{field} node", unknown[0], f"a client 0..{n_clients - 1}, the "
                          f"cloud, or a listed edge server ({', '.join(map(str, order))})")
    index = {name: i for i, name in enumerate(order)}
    edge_of = []
    for client in range(n_clients):
        mine = list(graph.neighbors(client)) if client in graph else []
        if not (len(mine) == 1 and mine[0] in index):
            raise ConfigError(f"{field} client {client}", mine, "exactly one neighbour, an "
                              f"edge server ({', '.join(map(str, order))})")
        edge_of.append(index[mine[0]])
    links = []
    for name in order:
        if not graph.has_edge(name, CLOUD):
            raise ConfigError(f"{field} edge server", name, f"a node joined to {CLOUD!r}")
        data = graph.edges[name, CLOUD]
        try:
            links.append(Backhaul(**{k: data[k] for k in ("rate_bps", "latency_s", "p_loss")
                                     if k in data}))
        except ConfigError as err:
            raise err.within(f"server.hierarchy.backhaul[{len(links)}] ({name}-cloud)") from None
    return Hierarchy(edge_of=tuple(edge_of), backhaul=tuple(links), **settings)
