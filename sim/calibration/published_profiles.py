"""Builds the built-in profiles supermuc and juqueen from published facts (the seeds).

The seeds give the machines' networks (thesis 8.1) and the shape of their MPI libraries'
communicator creation (paper section VIII, fig. 5): Intel MPI's MPI_Comm_create_group grows
linearly with p (explicit group tables), IBM MPI's is slower by orders of magnitude, and
MPI_Comm_split is about 2x Intel's create_group at large p in both libraries. They give no
absolute software costs; where a value is assumed, its source says so and why.

usage: python3 sim/calibration/published_profiles.py   (writes sim/calibration/profiles/)
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)

import calibration_profile as cp  # noqa: E402

PAPER = "rbc-jquick paper, section VIII (fig. 5)"
THESIS = "schizophrenic quicksort thesis, section 8.1"
# Per-rank cost of an explicit group table: walking and copying one entry per rank of the
# parent. Assumed 50 ns (a cache-missing table entry); the seeds give the slope's shape, not its size.
INTEL_PER_RANK = 50e-9
# "Disproportionately slow ... by multiple orders of magnitude" (fig. 5): 100x Intel's.
IBM_FACTOR = 100.0
# IBM MPI's MPI_Comm_split, per rank of the parent: fitted to the paper's fact that it takes
# about 2x Intel MPI's create_group at large p. The simulated split is an allgather of (color,
# key) plus create_group's messages plus this charge; on the juqueen platform the messages alone
# take 1.42 ms at 2^14 ranks (split_bcast, n = 1, with 2x Intel's slope: 3.08 ms, of which the
# charge 1.64 ms and the broadcast 14 us), so about 2.84 ms at 2^15 (they grow with p: the
# allgather is bandwidth-bound). The supermuc profile simulates create_group at 1.65 ms at 2^15
# (docs/results/calibrated-supermuc-split_bcast-p32768.jsonl), so the split should take about
# 3.3 ms: 0.46 ms left for the charge, 14 ns per rank.
IBM_SPLIT_PER_RANK = 14e-9
# Large-scale collectives named explicitly (SMPI's impi/mpich selectors probe the node layout
# with O(p^2) steps at 2^15 ranks; the seeds do not say which algorithms the vendors chose).
LARGE = {"bcast": "binomial_tree", "reduce": "binomial", "allreduce": "rdb", "barrier": "ompi_recursivedoubling",
         "allgather": "rdb", "allgatherv": "mpich_rdb", "gather": "ompi_binomial", "scatter": "ompi_binomial",
         "alltoall": "bruck", "alltoallv": "ompi", "reduce_scatter": "mpich_rdb"}
# RBC's own work per message beyond the MPI library's: c0 + c1 * payload bytes. The seeds give
# none. This is today's RBC on the development VM: in dev-2core's samples (`./janus calibrate
# --np 2` at 2838574), RBC's exchange minus MPI's exchange of the same wire bytes, both real,
# trials alternating; medians of the pairwise differences at 0 B to 4 KiB, least squares.
# (dev-2core's own compute_message also holds what a real MPI exchange costs beyond SMPI's
# price for it; that part is MPI's, so it is left out here.)
RBC_MESSAGE = [1.62e-7, 4.0e-11]
ASSUMED_OVERHEAD = ("assumed: 0.2 us below 512 B and 1.75 us from 512 B, the per-message overheads measured on a "
                    "16-core Xeon node with Open MPI 4.1.6 (reference-node-16c.md); the seeds give none")


def p(value, unit, source):
    return {"value": value, "unit": unit, "source": source}


def common(alpha, alpha_src, bw, bw_src, library):
    overhead = [[0, 0.2e-6, 0.0], [512, 1.75e-6, 0.0]]
    return {
        "os": p(overhead, "[[min_bytes, s, s/byte]]", ASSUMED_OVERHEAD),
        "or": p(overhead, "[[min_bytes, s, s/byte]]", ASSUMED_OVERHEAD),
        "ois": p(overhead, "[[min_bytes, s, s/byte]]",
                 "assumed: as os; MPI_Isend costs its caller what MPI_Send does (Open MPI 4.1 on the development "
                 "machine: 85 against 84 ns below 512 B). RBC's own work per message is compute_message"),
        "compute_message": p(RBC_MESSAGE, "s: c0 + c1 * payload bytes",
                             "assumed: RBC's own work per message beyond MPI's, measured on the development machine: "
                             "RBC's real exchange minus MPI's real exchange of the same wire bytes, 0 B to 4 KiB "
                             "(dev-2core samples, ./janus calibrate --np 2, Open MPI 4.1.4, at 2838574), least "
                             "squares; the seeds give none"),
        "iprobe": p(4.2e-8, "s", "assumed: MPI_Iprobe of Open MPI 4.1 on the development machine; the seeds give none"),
        "test": p(2.5e-8, "s", "assumed: MPI_Test of Open MPI 4.1 on the development machine; the seeds give none"),
        "node_alpha": p(0.3e-6, "s", "assumed: typical shared-memory MPI latency (platforms/platformgen.py); the seeds give none"),
        "node_bw": p(10e9, "B/s", "assumed: typical shared-memory MPI bandwidth (platforms/platformgen.py)"),
        "alpha": p(alpha, "s", alpha_src),
        "bw": p(bw, "B/s", bw_src),
        "collectives": p(dict(LARGE), "SMPI algorithm per collective",
                         f"{library}'s choices are not in the seeds; explicit O(log p) algorithms keep 2^15-rank "
                         "simulations affordable (SMPI's vendor selectors probe the node layout in O(p^2))"),
        "compute_sort": p([0.0, 13e-9], "s: c0 + c1 * n log2 n",
                          "assumed: 13 ns * m log2 m, the local computation of the sorts on a 16-core Xeon node "
                          "(reference-node-16c.md), for lack of a figure from the machine"),
        **{f"compute_{k}": p([0.0, 0.0], "s: c0 + c1 * n", "folded into compute_sort")
           for k in ("partition", "select", "merge", "copy")},
    }


def supermuc():
    params = common(0.5e-6, "assumed: 1 us through one FDR10 switch (2 hops), platforms/platformgen.py; the seeds give none",
                    5e9, f"{THESIS}: InfiniBand FDR10 4x, 40 Gbit/s data = 5 GB/s", "Intel MPI")
    params["comm_create_group"] = p([2.63e-6, 0.0, INTEL_PER_RANK], "s: A + B log2 p + C p (p = parent size)",
                                    f"{PAPER}: Intel MPI's create_group grows linearly with p; A = the fixed part "
                                    "measured with Open MPI on a 16-core node (reference-node-16c.md); C assumed "
                                    f"{INTEL_PER_RANK * 1e9:.0f} ns per rank (an explicit group table entry)")
    params["comm_split"] = p([5.16e-6, 0.0, 2 * INTEL_PER_RANK], "s: A + B log2 p + C p (p = parent size)",
                             f"{PAPER}: Intel MPI's split is about 2x its create_group at large p")
    return {"schema": cp.SCHEMA, "name": "supermuc",
            "machine": {"description": "SuperMUC phase 1 thin nodes: 2 x 8-core Xeon E5-2680 per node, FDR10 fat tree",
                        "cores": 16},
            "mpi": {"library": "Intel MPI", "version": "(as in the paper's experiments)"},
            "date": "from the seeds", "how": "sim/calibration/published_profiles.py from published facts; not measured",
            "platform": {"name": "supermuc", "params": {}}, "parameters": params, "samples": []}


def juqueen():
    params = common(2.5e-6 / 27, f"{THESIS}: 2.5 us worst-case latency over the 27 hops of the 28x8x8x8x2 torus",
                    2e9, f"{THESIS}: 40 GB/s per node = 10 links x 2 directions x 2 GB/s", "IBM MPI")
    params["comm_create_group"] = p([2.63e-6, 0.0, IBM_FACTOR * INTEL_PER_RANK], "s: A + B log2 p + C p (p = parent size)",
                                    f"{PAPER}: IBM MPI's create_group is slower than Intel MPI's by orders of magnitude: "
                                    f"{IBM_FACTOR:.0f}x Intel's per-rank cost (assumed, see supermuc)")
    params["comm_split"] = p([5.16e-6, 0.0, IBM_SPLIT_PER_RANK], "s: A + B log2 p + C p (p = parent size)",
                             f"{PAPER}: IBM MPI's split is about 2x Intel MPI's create_group at large p (so the paper "
                             "uses split with IBM MPI); C fitted so that the simulated split (allgather, create_group "
                             "messages and this charge) is 2x the supermuc profile's simulated create_group at 2^15 "
                             "(see IBM_SPLIT_PER_RANK)")
    return {"schema": cp.SCHEMA, "name": "juqueen",
            "machine": {"description": "JUQUEEN IBM Blue Gene/Q: 16-core PowerPC A2 nodes, 5D torus", "cores": 16},
            "mpi": {"library": "IBM MPI", "version": "(as in the paper's experiments)"},
            "date": "from the seeds", "how": "sim/calibration/published_profiles.py from published facts; not measured",
            "platform": {"name": "juqueen", "params": {}}, "parameters": params, "samples": []}


def main():
    for profile in (supermuc(), juqueen()):
        cp.validate(profile, profile["name"])
        with open(os.path.join(HERE, "profiles", profile["name"] + ".json"), "w") as f:
            json.dump(profile, f, indent=1)
            f.write("\n")
        print(f"wrote profiles/{profile['name']}.json")


if __name__ == "__main__":
    main()
