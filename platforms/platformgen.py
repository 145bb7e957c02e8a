#!/usr/bin/env python3
"""Parameterised SimGrid 3.32 platforms for Janus (SuperMUC-like, JUQUEEN-like, generic).

Every platform is generated as a SimGrid XML file from a handful of named parameters, so users
never edit XML. The network model is the same everywhere, and plain:

* alpha is the latency of ONE link (one hop). A message between two nodes crosses `hops` links
  and its latency is hops * alpha; `hops(a, b)` below is exact for every platform and the
  runner prints the hop counts of each platform's path classes.
* beta is the time per byte of every link (bw = 1 / beta). SimGrid models a message as a flow
  whose rate is limited by the slowest link on its path and shared fairly with concurrent flows,
  so an uncontended message of l bytes takes hops * alpha + l * beta (beta is paid once, not per
  hop). All links are full duplex (SimGrid SPLITDUPLEX: each direction has its own bandwidth).
* Ranks on the same node talk over the node's loopback: one hop of node_alpha and node_bw.
* overhead (default 0) is an optional per-message CPU cost charged to the sender and to the
  receiver (LogP's o), passed to SMPI as smpi/os, smpi/ois and smpi/or.

These are exact only when SMPI's piecewise correction factors are off; the runner does that by
default (network/model:CM02, see sim/runner --help).

Use as a library (`build(name, {"alpha": "1us"}, np=64)`) or from the command line:
  platforms/platformgen.py supermuc islands=2 alpha=0.5us --np 1024 --xml out.xml --hostfile out.hosts
"""

import argparse
import math
import re
import sys
from xml.sax.saxutils import quoteattr

# ---------------------------------------------------------------------------------------------
# Units


class ParamError(ValueError):
    """A platform name, parameter name or parameter value that cannot be used."""


_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}
_BW_UNITS = {
    "Bps": 1.0, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
    "KiBps": 2.0**10, "MiBps": 2.0**20, "GiBps": 2.0**30,
    "bps": 1 / 8, "kbps": 1e3 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
}
_FLOPS_UNITS = {"f": 1.0, "kf": 1e3, "Mf": 1e6, "Gf": 1e9, "Tf": 1e12}
_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


def _parse_with_units(text, units, default_unit, what):
    match = re.fullmatch(_NUMBER + r"\s*([A-Za-z]*)", text.strip())
    if not match:
        raise ParamError(f"cannot read {what} '{text}' (expected e.g. 1.5{default_unit})")
    unit = match.group(2) or default_unit
    if unit not in units:
        raise ParamError(f"unknown unit '{unit}' in {what} '{text}'; known: {', '.join(units)}")
    return float(match.group(1)) * units[unit]


def parse_time(text):
    """'1.5us' -> 1.5e-6 seconds; a bare number is seconds."""
    return _parse_with_units(text, _TIME_UNITS, "s", "time")


def parse_bandwidth(text):
    """'5GBps' -> 5e9 bytes/s; 'Gbps' is gigabits; a bare number is bytes/s."""
    return _parse_with_units(text, _BW_UNITS, "Bps", "bandwidth")


def parse_flops(text):
    return _parse_with_units(text, _FLOPS_UNITS, "f", "speed")


def parse_dims(text):
    parts = re.split(r"[x,]", text.strip())
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        raise ParamError(f"cannot read dimensions '{text}' (expected e.g. 4x4x4x4x2)") from None
    if not dims or any(d < 1 for d in dims):
        raise ParamError(f"dimensions must be positive integers, got '{text}'")
    return dims


def fmt_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:.6g}{unit}"
    return f"{seconds}s"


def fmt_bw(bytes_per_s):
    for unit, scale in (("TBps", 1e12), ("GBps", 1e9), ("MBps", 1e6), ("kBps", 1e3)):
        if bytes_per_s >= scale:
            return f"{bytes_per_s / scale:.6g}{unit}"
    return f"{bytes_per_s:.6g}Bps"


# ---------------------------------------------------------------------------------------------
# Parameters


class Param:
    def __init__(self, name, kind, default, doc, source=""):
        self.name, self.kind, self.default, self.doc, self.source = name, kind, default, doc, source


def _common(alpha, alpha_src, bw, bw_src, speed, speed_src, node_alpha="0.3us", node_bw="10GBps"):
    assumed = "assumed (typical shared-memory MPI; the seeds give no figure)"
    return [
        Param("cores", "int", "16", "cores (rank slots) per node"),
        Param("alpha", "time", alpha, "latency of one network link (per hop)", alpha_src),
        Param("bw", "bandwidth", bw, "bandwidth of every network link, per direction", bw_src),
        Param("beta", "time", None, "time per byte of every link; alternative to bw (bw = 1/beta)"),
        Param("node_alpha", "time", node_alpha, "latency between two ranks on the same node", assumed),
        Param("node_bw", "bandwidth", node_bw, "bandwidth between two ranks on the same node", assumed),
        Param("overhead", "time", "0s", "CPU time per message on sender and on receiver (LogP o)",
              "0 = pure alpha-beta model"),
        Param("speed", "flops", speed, "flop rate of one core (used by smpi_execute_flops)", speed_src),
    ]


class Built:
    """A generated platform: the XML text, the node names in rank order, and its model."""

    def __init__(self, name, values, xml, hosts, cores, topology, hops, path_classes, smpi_cfg):
        self.name = name
        self.values = values          # resolved parameter values (floats/ints/lists)
        self.xml = xml
        self.hosts = hosts            # node names; node i hosts ranks i*cores .. i*cores+cores-1
        self.cores = cores
        self.topology = topology      # one line saying what was built
        self.hops = hops              # hops(node_a, node_b) -> links crossed (0 = same node)
        self.path_classes = path_classes  # [(description, example node pair)]
        self.smpi_cfg = smpi_cfg      # --cfg options the platform needs (e.g. overhead)

    @property
    def nodes(self):
        return len(self.hosts)

    def latency(self, a, b):
        if a == b:
            return self.values["node_alpha"]
        return self.hops(a, b) * self.values["alpha"]

    def describe(self):
        v = self.values
        lines = [
            f"platform {self.name}: {self.topology}",
            f"  {self.nodes} node(s) x {self.cores} cores = {self.nodes * self.cores} rank slots",
            f"  per link: alpha = {fmt_time(v['alpha'])}, bw = {fmt_bw(v['bw'])} "
            f"(beta = {fmt_time(1 / v['bw'])}/byte), full duplex",
            f"  same node: alpha = {fmt_time(v['node_alpha'])}, bw = {fmt_bw(v['node_bw'])}",
        ]
        if v["overhead"] > 0:
            lines.append(f"  per-message CPU overhead on sender and receiver: {fmt_time(v['overhead'])}")
        for label, (a, b) in self.path_classes:
            if a != b and max(a, b) < self.nodes:
                h = self.hops(a, b)
                lines.append(f"  {label}: {h} hop(s), latency {fmt_time(h * v['alpha'])}")
        return "\n".join(lines)

    def hostfile_lines(self, np, oversubscribe=False):
        """Ranks packed per node: ranks 0..cores-1 on node 0, and so on."""
        slots = self.nodes * self.cores
        if np > slots and not oversubscribe:
            raise ParamError(
                f"{np} ranks do not fit on platform {self.name}: {self.nodes} nodes x {self.cores} "
                f"cores = {slots} slots (give a larger size or --oversubscribe)")
        return [self.hosts[(r // self.cores) % self.nodes] for r in range(np)]

    def summary(self):
        v = dict(self.values)
        return {
            "name": self.name,
            "topology": self.topology,
            "nodes": self.nodes,
            "cores_per_node": self.cores,
            "alpha_per_hop_s": v["alpha"],
            "bw_Bps": v["bw"],
            "beta_s_per_byte": 1 / v["bw"],
            "node_alpha_s": v["node_alpha"],
            "node_bw_Bps": v["node_bw"],
            "overhead_s": v["overhead"],
            "speed_flops": v["speed"],
            "path_hops": {label: self.hops(a, b) for label, (a, b) in self.path_classes
                          if a != b and max(a, b) < self.nodes},
            "parameters": {k: (list(x) if isinstance(x, (list, tuple)) else x) for k, x in v.items()},
        }


def _xml(cluster_attrs, comment):
    attrs = " ".join(f"{k}={quoteattr(str(val))}" for k, val in cluster_attrs.items())
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        f"<!-- Generated by platforms/platformgen.py. {comment} -->\n"
        '<platform version="4.1">\n'
        f"  <cluster {attrs}/>\n"
        "</platform>\n"
    )


def _cluster_attrs(cid, nodes, v, **extra):
    attrs = {
        "id": cid, "prefix": "node-", "suffix": "", "radical": f"0-{nodes - 1}",
        "core": str(v["cores"]), "speed": f"{v['speed']!r}f",
        "bw": f"{v['bw']!r}Bps", "lat": f"{v['alpha']!r}s",
        "loopback_bw": f"{v['node_bw']!r}Bps", "loopback_lat": f"{v['node_alpha']!r}s",
        "sharing_policy": "SPLITDUPLEX",
    }
    attrs.update(extra)
    return attrs


def _smpi_cfg(v):
    if v["overhead"] <= 0:
        return []
    o = repr(v["overhead"])
    return [f"--cfg=smpi/os:0:{o}:0", f"--cfg=smpi/ois:0:{o}:0", f"--cfg=smpi/or:0:{o}:0"]


def _nodes_for(np, cores):
    return max(1, -(-np // cores))


def _torus_hops(dims):
    def hops(a, b):
        total = 0
        for d in dims:
            delta = abs(a % d - b % d)
            total += min(delta, d - delta)
            a //= d
            b //= d
        return total
    return hops


def _balanced_dims(n, count, last=None):
    """Factor n into `count` dimensions as evenly as possible (largest prime factors first)."""
    dims = [1] * count
    rest = n
    if last is not None and n % last == 0:
        dims[-1] = last
        rest //= last
    factors = []
    f = 2
    while f * f <= rest:
        while rest % f == 0:
            factors.append(f)
            rest //= f
        f += 1
    if rest > 1:
        factors.append(rest)
    free = count - 1 if last is not None and dims[-1] == last else count
    for factor in sorted(factors, reverse=True):
        i = min(range(free), key=lambda k: dims[k])
        dims[i] *= factor
    return dims


# ---------------------------------------------------------------------------------------------
# Platforms


def _build_cluster(v, np):
    nodes = v["nodes"] or _nodes_for(np, v["cores"])
    attrs = _cluster_attrs("cluster", nodes, v)

    def hops(a, b):
        return 0 if a == b else 2   # node -> switch -> node
    return (nodes, _xml(attrs, f"flat cluster of {nodes} nodes"),
            f"flat cluster, {nodes} node(s) on one non-blocking switch",
            hops, [("any two nodes", (0, min(1, nodes - 1)))])


def _xgft_hops(down):
    def hops(a, b):
        level = 0
        while a != b:
            a //= down[level]
            b //= down[level]
            level += 1
        return 2 * level
    return hops


def _parse_topo(text):
    parts = text.split(";")
    if len(parts) != 4:
        raise ParamError(f"fat tree topo '{text}' must be 'levels;down,..;up,..;count,..'")
    try:
        levels = int(parts[0])
        vecs = [[int(x) for x in p.split(",")] for p in parts[1:]]
    except ValueError:
        raise ParamError(f"fat tree topo '{text}' must contain integers only") from None
    if levels < 1 or any(len(vec) != levels or min(vec) < 1 for vec in vecs):
        raise ParamError(f"fat tree topo '{text}': each of the 3 lists needs {levels} positive entries")
    return levels, vecs[0], vecs[1], vecs[2]


def _path_classes_xgft(down):
    classes = []
    span = 1
    names = ["same leaf switch"] + [f"lowest common switch at level {k + 2}" for k in range(len(down) - 1)]
    for level, d in enumerate(down):
        if d > 1:
            classes.append((names[level], (0, span)))
        span *= d
    return classes


def _build_fattree(v, np):
    if v["topo"]:
        levels, down, up, count = _parse_topo(v["topo"])
    else:
        leaf = v["leaf"]
        nodes = v["nodes"] or _nodes_for(np, v["cores"])
        if nodes <= leaf:
            levels, down, up, count = 1, [nodes], [1], [1]
        else:
            leaves = -(-nodes // leaf)
            levels, down, up, count = 2, [leaf, leaves], [1, leaf], [1, 1]
    nodes = math.prod(down)
    topo = f"{levels};{','.join(map(str, down))};{','.join(map(str, up))};{','.join(map(str, count))}"
    attrs = _cluster_attrs("fattree", nodes, v, topology="FAT_TREE", topo_parameters=topo)
    return (nodes, _xml(attrs, f"fat tree {topo}"),
            f"fat tree (SimGrid XGFT '{topo}'), {nodes} nodes; d-mod-k routing",
            _xgft_hops(down), _path_classes_xgft(down))


def _simgrid_torus(dims):
    """SimGrid names torus links by their two end nodes only, so two dimensions of size 1 (each a
    link from a node to itself) collide. Such dimensions carry no traffic: leave them out."""
    kept = [d for d in dims if d > 1]
    return ",".join(map(str, kept or [1]))


def _build_torus(v, np):
    if v["dims"]:
        dims = v["dims"]
    else:
        nodes = v["nodes"] or _nodes_for(np, v["cores"])
        dims = _balanced_dims(nodes, 3)
    nodes = math.prod(dims)
    text = _simgrid_torus(dims)
    attrs = _cluster_attrs("torus", nodes, v, topology="TORUS", topo_parameters=text)
    far = 0
    stride = 1
    for d in dims:
        far += (d // 2) * stride
        stride *= d
    return (nodes, _xml(attrs, f"torus {text}"),
            f"{len(dims)}D torus {'x'.join(map(str, dims))}, {nodes} node(s); dimension-order routing",
            _torus_hops(dims),
            [("nearest neighbours", (0, min(1, nodes - 1))), ("farthest pair", (0, far))])


SUPERMUC_ISLAND_NODES = 512
SUPERMUC_LEAF = 16
SUPERMUC_LEAVES = SUPERMUC_ISLAND_NODES // SUPERMUC_LEAF   # 32 leaf switches per island
SUPERMUC_MAX_ISLANDS = 18


def _build_supermuc(v, np):
    nodes_needed = _nodes_for(np, v["cores"])
    islands = v["islands"] or -(-nodes_needed // SUPERMUC_ISLAND_NODES)
    if not 1 <= islands <= SUPERMUC_MAX_ISLANDS:
        raise ParamError(f"supermuc: islands must be 1..{SUPERMUC_MAX_ISLANDS}, got {islands}"
                         + (f" ({np} ranks need {nodes_needed} nodes)" if not v["islands"] else ""))
    pruning = v["pruning"]
    if pruning < 1 or SUPERMUC_LEAVES % pruning:
        raise ParamError(f"supermuc: pruning must divide {SUPERMUC_LEAVES} (1, 2, 4, 8, 16, 32), got {pruning}")
    # Leaf switches with 16 nodes; each leaf has one link to each of 16 island spine switches
    # (non-blocking: 16 down, 16 up). Each spine has 32 links down and 32/pruning up to the
    # inter-island top switches, so the island's uplink capacity is 1/pruning of its node links.
    if islands == 1:
        topo = f"2;{SUPERMUC_LEAF},{SUPERMUC_LEAVES};1,{SUPERMUC_LEAF};1,1"
        down = [SUPERMUC_LEAF, SUPERMUC_LEAVES]
    else:
        topo = (f"3;{SUPERMUC_LEAF},{SUPERMUC_LEAVES},{islands};1,{SUPERMUC_LEAF},"
                f"{SUPERMUC_LEAVES // pruning};1,1,1")
        down = [SUPERMUC_LEAF, SUPERMUC_LEAVES, islands]
    nodes = math.prod(down)
    attrs = _cluster_attrs("supermuc", nodes, v, topology="FAT_TREE", topo_parameters=topo)
    classes = [("same leaf switch", (0, 1)), ("same island", (0, SUPERMUC_LEAF))]
    if islands > 1:
        classes.append(("different islands", (0, SUPERMUC_ISLAND_NODES)))
    return (nodes, _xml(attrs, f"SuperMUC-like, {islands} islands, fat tree {topo}"),
            f"SuperMUC-like: {islands} island(s) x 512 nodes, non-blocking fat tree per island, "
            f"{pruning}:1 pruned tree between islands (XGFT '{topo}')",
            _xgft_hops(down), classes)


JUQUEEN_FULL_DIMS = [28, 8, 8, 8, 2]   # 28,672 nodes


def _juqueen_auto_dims(nodes):
    dims = [1, 1, 1, 1, 1]
    if nodes > 1:
        dims[4] = 2
    while math.prod(dims) < nodes:
        i = min(range(4), key=lambda k: dims[k])
        dims[i] *= 2
    return dims


def _build_juqueen(v, np):
    if v["dims"]:
        dims = v["dims"]
        if len(dims) != 5:
            raise ParamError(f"juqueen: dims must have 5 entries (AxBxCxDxE), got {len(dims)}")
    elif v["nodes"] == math.prod(JUQUEEN_FULL_DIMS):
        dims = list(JUQUEEN_FULL_DIMS)
    elif v["nodes"]:
        dims = _balanced_dims(v["nodes"], 5, last=2)
    else:
        needed = _nodes_for(np, v["cores"])
        dims = _juqueen_auto_dims(needed)
        if math.prod(dims) > math.prod(JUQUEEN_FULL_DIMS) >= needed:
            dims = list(JUQUEEN_FULL_DIMS)
    nodes = math.prod(dims)
    if nodes > math.prod(JUQUEEN_FULL_DIMS):
        raise ParamError(f"juqueen: {nodes} nodes requested; the machine has {math.prod(JUQUEEN_FULL_DIMS)} "
                         "(use the generic torus platform for larger tori)")
    text = _simgrid_torus(dims)
    attrs = _cluster_attrs("juqueen", nodes, v, topology="TORUS", topo_parameters=text)
    far = 0
    stride = 1
    for d in dims:
        far += (d // 2) * stride
        stride *= d
    return (nodes, _xml(attrs, f"JUQUEEN-like 5D torus {text}"),
            f"JUQUEEN-like: Blue Gene/Q 5D torus {'x'.join(map(str, dims))} = {nodes} nodes "
            f"(full machine 28x8x8x8x2); dimension-order routing",
            _torus_hops(dims),
            [("nearest neighbours", (0, min(1, nodes - 1))), ("farthest pair", (0, far))])


_FULL_PATH_27 = sum(d // 2 for d in JUQUEEN_FULL_DIMS)   # 27 hops across the full machine

PLATFORMS = {
    "supermuc": {
        "summary": "SuperMUC phase 1 thin nodes: islands of 512 nodes x 16 cores, non-blocking fat "
                   "tree inside an island, 4:1 pruned tree between islands, up to 18 islands",
        "build": _build_supermuc,
        "params": [
            Param("islands", "int", "0", "islands (1..18); 0 = as many as the ranks need",
                  "18 islands of 512 nodes (paper VIII, thesis 8.1)"),
            Param("pruning", "int", "4", "bandwidth ratio intra-island : inter-island uplinks",
                  "4:1 bisection ratio (paper VIII, thesis 8.1)"),
        ] + _common("0.5us", "assumed: 1 us through one FDR10 switch (2 hops); seeds give no figure",
                    "5GBps", "InfiniBand FDR10 4x: 4 x 10.3125 Gbit/s, 64b/66b = 40 Gbit/s data",
                    "18.4Gf", "Xeon E5-2680, 2.3 GHz x 8 DP flop/cycle (AVX)"),
    },
    "juqueen": {
        "summary": "JUQUEEN (IBM Blue Gene/Q): nodes x 16 cores on a 5D torus, any partition size",
        "build": _build_juqueen,
        "params": [
            Param("dims", "dims", "", "torus shape AxBxCxDxE; empty = smallest power-of-two "
                  "partition that holds the ranks", "full machine 28,672 nodes (thesis 8.1)"),
            Param("nodes", "int", "0", "node count, factored into a balanced 5D shape (if dims empty)"),
        ] + _common(f"{2.5 / _FULL_PATH_27:.4g}us",
                    f"2.5 us worst-case latency (thesis 8.1) / {_FULL_PATH_27} hops of the full "
                    "28x8x8x8x2 torus",
                    "2GBps", "40 GB/s per node (thesis 8.1) = 10 torus links x 2 directions x 2 GB/s",
                    "12.8Gf", "PowerPC A2, 1.6 GHz x 8 DP flop/cycle (QPX FMA)"),
    },
    "cluster": {
        "summary": "generic flat cluster: every node on one non-blocking switch",
        "build": _build_cluster,
        "params": [
            Param("nodes", "int", "0", "node count; 0 = as many as the ranks need"),
        ] + _common("1us", "generic", "10GBps", "generic", "10Gf", "generic"),
    },
    "fattree": {
        "summary": "generic fat tree (SimGrid XGFT); default: non-blocking 2-level tree, 16 nodes per leaf",
        "build": _build_fattree,
        "params": [
            Param("nodes", "int", "0", "node count for the default 2-level tree; 0 = as the ranks need"),
            Param("leaf", "int", "16", "nodes per leaf switch for the default tree"),
            Param("topo", "str", "", "explicit SimGrid topo_parameters 'levels;down..;up..;count..' "
                  "(overrides nodes/leaf)"),
        ] + _common("0.5us", "generic", "10GBps", "generic", "10Gf", "generic"),
    },
    "torus": {
        "summary": "generic torus of any dimension",
        "build": _build_torus,
        "params": [
            Param("dims", "dims", "", "torus shape, e.g. 8x8x8; empty = balanced 3D shape"),
            Param("nodes", "int", "0", "node count for the default 3D shape; 0 = as the ranks need"),
        ] + _common("0.1us", "generic", "5GBps", "generic", "10Gf", "generic"),
    },
}


def _convert(param, text):
    if text is None:
        return None
    try:
        if param.kind == "time":
            return parse_time(text)
        if param.kind == "bandwidth":
            return parse_bandwidth(text)
        if param.kind == "flops":
            return parse_flops(text)
        if param.kind == "int":
            value = int(text)
            if value < 0:
                raise ValueError
            return value
        if param.kind == "dims":
            return parse_dims(text) if text else []
        return text
    except ParamError as err:
        raise ParamError(f"parameter {param.name}: {err}") from None
    except ValueError:
        raise ParamError(f"parameter {param.name}: '{text}' is not a non-negative integer") from None


def param_names(name):
    return [p.name for p in PLATFORMS[name]["params"]]


def build(name, overrides=None, np=1):
    """Generates platform `name` with parameters `overrides` (name -> string) for np ranks."""
    if name not in PLATFORMS:
        raise ParamError(f"unknown platform '{name}'; valid platforms: {', '.join(PLATFORMS)}")
    overrides = dict(overrides or {})
    spec = PLATFORMS[name]
    unknown = sorted(set(overrides) - set(param_names(name)))
    if unknown:
        raise ParamError(f"unknown parameter(s) {', '.join(unknown)} for platform {name}; "
                         f"valid: {', '.join(param_names(name))}")
    if "bw" in overrides and "beta" in overrides:
        raise ParamError("give either bw or beta, not both (bw = 1/beta)")
    values = {p.name: _convert(p, overrides.get(p.name, p.default)) for p in spec["params"]}
    if values["beta"] is not None:
        if values["beta"] <= 0:
            raise ParamError("parameter beta must be positive")
        values["bw"] = 1.0 / values["beta"]
    del values["beta"]
    for key in ("bw", "node_bw", "speed"):
        if values[key] <= 0:
            raise ParamError(f"parameter {key} must be positive")
    if values["cores"] < 1:
        raise ParamError("parameter cores must be at least 1")
    if np < 1:
        raise ParamError(f"rank count must be positive, got {np}")
    nodes, xml, topology, hops, classes = spec["build"](values, np)
    return Built(name, values, xml, [f"node-{i}" for i in range(nodes)], values["cores"],
                 topology, hops, classes, _smpi_cfg(values))


def describe_platforms():
    """Human-readable list of platforms, their parameters, defaults and sources."""
    out = []
    for name, spec in PLATFORMS.items():
        out.append(f"{name}: {spec['summary']}")
        for p in spec["params"]:
            default = "(unset)" if p.default is None else (p.default if p.default != "" else "(auto)")
            src = f"  [{p.source}]" if p.source else ""
            out.append(f"    {p.name:<11} default {default:<9} {p.doc}{src}")
    return "\n".join(out)


def parse_assignments(items):
    result = {}
    for item in items:
        if "=" not in item:
            raise ParamError(f"platform parameter '{item}' must look like key=value")
        key, value = item.split("=", 1)
        result[key.strip()] = value.strip()
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description="Generate a Janus SimGrid platform (XML + hostfile).")
    parser.add_argument("platform", nargs="?", help="platform name")
    parser.add_argument("params", nargs="*", help="key=value platform parameters")
    parser.add_argument("--np", type=int, default=1, help="ranks to place (sizes auto platforms)")
    parser.add_argument("--xml", help="write the platform XML here")
    parser.add_argument("--hostfile", help="write the hostfile (one line per rank) here")
    parser.add_argument("--oversubscribe", action="store_true")
    parser.add_argument("--list", action="store_true", help="list platforms and parameters")
    args = parser.parse_args(argv)
    if args.list or not args.platform:
        print(describe_platforms())
        return 0
    try:
        built = build(args.platform, parse_assignments(args.params), args.np)
        lines = built.hostfile_lines(args.np, args.oversubscribe)
    except ParamError as err:
        print(f"platformgen: {err}", file=sys.stderr)
        return 2
    if args.xml:
        with open(args.xml, "w") as f:
            f.write(built.xml)
    if args.hostfile:
        with open(args.hostfile, "w") as f:
            f.write("\n".join(lines) + "\n")
    print(built.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
