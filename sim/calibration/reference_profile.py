"""Builds the built-in profile reference-16c from the micro-figures of one real 16-core node
(../shared/data/reference-node-16c.md: Open MPI 4.1.6, 16 cores of one Xeon socket).

Only micro-figures go in: the ping-pong, communicator creation against p, the broadcast cost
implied by split_bcast and the derived compute constant. The node's sort results are what the
profile is validated against (./janus validate --calibration reference-16c --np 16 --sim-only
docs/results/reference-16c-real.jsonl), never an input.

usage: python3 sim/calibration/reference_profile.py [-o sim/calibration/profiles/reference-16c.json]
"""

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import calibrate  # noqa: E402
import calibration_profile as cp  # noqa: E402

SOURCE = "reference-node-16c.md (one 16-core Xeon node, Open MPI 4.1.6, main at d52cd7d)"
US = 1e-6

# Half round trips, netcheck pingpong, np=2 (the 1 KiB point is likely cold: not fitted).
PINGPONG_US = {0: 0.757, 8: 0.842, 1024: 3.99, 65536: 13.4, 1048576: 146}
# bench comm_create, split into halves, medians.
CREATE_GROUP_US = {2: 5.98, 4: 10.1, 8: 14.7, 16: 18.3}
SPLIT_US = {2: 9.6, 4: 14.5, 8: 22.2, 16: 24.9}
# Per-message overheads: piecewise fit of the figures above (the study's finding).
OVERHEAD = [[0, 0.2 * US, 0.0], [512, 1.75 * US, 0.0]]
# Sorts' local computation, the residual after communication at n/p >= 4096 (the study).
SORT_NS = 13.0
OPEN_MPI_SMALL_RANKS = {"bcast": "binomial_tree", "reduce": "binomial", "allreduce": "rdb",
                        "barrier": "ompi_recursivedoubling", "allgather": "rdb", "gather": "ompi_binomial",
                        "scatter": "ompi_binomial", "alltoall": "bruck", "reduce_scatter": "mpich_rdb",
                        "allgatherv": "mpich_rdb"}


def build(ois_small_us, creation_sim):
    small = [s for s in PINGPONG_US if s <= 8]
    lat = statistics.median(PINGPONG_US[s] * US - 2 * cp.piecewise_at(OVERHEAD, s) for s in small)
    # From 64 KiB SMPI charges a blocking message no os / or: the two large points are the link's
    # alone, a rendezvous handshake (the intercept) plus the copies (the slope).
    (s1, t1), (s2, t2) = ((s, PINGPONG_US[s] * US) for s in (65536, 1048576))
    beta = (t2 - t1) / (s2 - s1)
    handshake = t1 - beta * s1
    params = {
        "os": calibrate.param(OVERHEAD, "[[min_bytes, s, s/byte]]",
                              f"{SOURCE}: per-message overheads fitted to the ping-pong, 0.2 us below 512 B, 1.75 us from 512 B"),
        "or": calibrate.param(OVERHEAD, "[[min_bytes, s, s/byte]]", f"{SOURCE}: as os"),
        "ois": calibrate.param([[0, ois_small_us * US, 0.0], [512, 1.75 * US, 0.0]], "[[min_bytes, s, s/byte]]",
                               f"{SOURCE}: split_bcast, one RBC broadcast on 8 ranks ~2.6 us (k = 10, 50 minus k = 1); "
                               "RBC sends with MPI_Isend, so its small-message overhead is the one that broadcast implies"),
        "node_alpha": calibrate.param(lat, "s", f"{SOURCE}: ping-pong 0 B and 8 B minus os + or"),
        "node_bw": calibrate.param(1 / beta, "B/s", f"{SOURCE}: ping-pong 64 KiB and 1 MiB, the slope through them"),
        "lat_factor": calibrate.param([[cp.DETACHED_LIMIT, handshake / lat]], "[[min_bytes, factor]]",
                                      f"{SOURCE}: ping-pong 64 KiB and 1 MiB, the intercept through them (a "
                                      "rendezvous' handshake) as a multiple of node_alpha; SMPI charges no "
                                      "os / or to blocking messages from 64 KiB"),
        "iprobe": calibrate.param(4.2e-8, "s", "not in the reference: MPI_Iprobe of Open MPI 4.1 on the development "
                                  "machine (./janus calibrate); SMPI's 1e-4 s default is the ~403 us hypercube artefact"),
        "test": calibrate.param(2.5e-8, "s", "not in the reference: MPI_Test of Open MPI 4.1 on the development machine"),
        "collectives": calibrate.param(
            dict(OPEN_MPI_SMALL_RANKS), "SMPI algorithm per collective",
            f"{SOURCE}: Open MPI 4.1.6; its tuned component's choices for small messages on a few ranks "
            "(binomial and recursive-doubling trees). Named one by one instead of smpi/coll-selector:ompi, "
            "which also changes SMPI's communicator creation (an SMP layout probe: +16 us per creation "
            "of an 8-rank communicator, simulated)"),
        "compute_sort": calibrate.param([0.0, SORT_NS * 1e-9], "s: c0 + c1 * n log2 n",
                                        f"{SOURCE}: ~13 ns * m log2 m per PE, residual after communication at n/p >= 4096 "
                                        "(all local computation of the sorts, lumped into the sort kernel)"),
    }
    for k in ("partition", "select", "merge", "copy"):
        params["compute_" + k] = calibrate.param([0.0, 0.0], "s: c0 + c1 * n",
                                                 "folded into compute_sort (the reference gives one constant)")
    profile = {
        "schema": cp.SCHEMA, "name": "reference-16c",
        "machine": {"description": "one 16-core node: 16 cores of one Xeon socket, 1 NUMA node, Ubuntu 24.04",
                    "cores": 16, "np": 16, "oversubscribed": False},
        "mpi": {"library": "Open MPI", "version": "4.1.6"},
        "date": "2026-11-23",
        "how": f"built by sim/calibration/reference_profile.py from the micro-figures of {SOURCE}; "
               "mpirun --bind-to core --map-by core",
        "platform": {"name": "cluster", "params": {"nodes": "1", "cores": "16"}},
        "parameters": params,
        "samples": [{"kind": "pingpong", "bytes": s, "samples": [t * US]} for s, t in PINGPONG_US.items()]
        + [{"kind": "comm", "op": "create_group", "p": p, "samples": [t * US]} for p, t in CREATE_GROUP_US.items()]
        + [{"kind": "comm", "op": "split", "p": p, "samples": [t * US]} for p, t in SPLIT_US.items()],
    }
    if creation_sim is not None:
        real = {("create_group", p): t * US for p, t in CREATE_GROUP_US.items()}
        real.update({("split", p): t * US for p, t in SPLIT_US.items()})
        params.update(calibrate.fit_creation(real, creation_sim, 16))
        for op in ("comm_create_group", "comm_split"):
            params[op]["source"] = (f"{SOURCE}: bench comm_create (halves, p = 2..16) minus SMPI's own creation "
                                    "time under this profile, least squares A + B log2 p")
        profile["simulated_before_charges"] = {"comm": [{"op": o, "p": p, "seconds": t}
                                                        for (o, p), t in sorted(creation_sim.items())]}
    return profile


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "profiles", "reference-16c.json"))
    parser.add_argument("--ois-small-us", type=float, default=0.8,
                        help="MPI_Isend overhead below 512 B in us (from the RBC broadcast figure)")
    args = parser.parse_args(argv)
    bin_root = calibrate.bazel_bin(["//sim/calibration:calibrate_smpi", "//sim/calibration:libcharge_preload.so"])
    sim_program = os.path.join(bin_root, "sim", "calibration", "libcalibrate_smpi.so")
    preload = os.path.join(bin_root, "sim", "calibration", "libcharge_preload.so")
    profile = build(args.ois_small_us, None)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(profile, f)
    creation_sim = {}
    for p in (2, 4, 8, 16):
        cmd = [os.path.join(ROOT, "sim", "runner"), sim_program, "--np", str(p), "--platform", "cluster",
               "-p", "nodes=1", "-p", "cores=16", "--calibration", tmp, "--heartbeat", "0", "--", "comm"]
        for r in calibrate.run_measurements(cmd, dict(os.environ, JANUS_CHARGE_PRELOAD=preload), 600,
                                            f"SMPI creation at p={p}"):
            if r["kind"] == "comm" and r["p"] == p:
                creation_sim[(r["op"], p)] = calibrate.med(r)
    os.remove(tmp)
    profile = build(args.ois_small_us, creation_sim)
    cp.validate(profile, "reference-16c")
    with open(args.output, "w") as f:
        json.dump(profile, f, indent=1)
        f.write("\n")
    print(calibrate.summary_table(profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
