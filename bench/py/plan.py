"""What each benchmark mode runs: one Job per (program, backend, rank count).

Rank counts, sizes and repetitions per mode live here and nowhere else, so the quick mode (CI
smoke test, minutes) and the full mode (the paper's 2^15-rank figures, hours) differ only in
this table. Limits below exist because SMPI's own MPI calls are super-linear in p (see
docs/benchmarks.md): MPI_Comm_split sends every member the whole group (O(p^2) simulator work)
and MPI_Scan is linear per PE; running them at 2^15 ranks would take days of wall time.
"""

# Every benchmark, in the order they run.
BENCHMARKS = ["comm_create", "overlap", "p2p", "collectives", "split_bcast", "sort", "merge"]

# Benchmarks whose simulated time includes host CPU time (smpi/simulate-computation:yes, charged
# 1:1 on one modelled core): sorting, whose local work (sorting, partitioning, merging) matters.
# Everything else runs deterministically (computation not charged); RBC's communicator creation,
# which is local work and so costs ~0 simulated seconds there, is measured on the host separately
# (host_op_s in the records, added to the simulated time by the report).
CHARGED = {"sort"}


# SimGrid option that turns every send into a rendezvous (sim/runner --rendezvous): SimGrid 3.32
# removes each finished eager (detached) send from a list by linear search, which makes large
# simulations of many small messages O(p^2) (docs/scale.md). Correct MPI programs run unchanged;
# simulated times can differ from the eager runs, so the records name it (sim_options).
RENDEZVOUS = "smpi/send-is-detached-thresh:0"


class Job:
    def __init__(self, benchmark, backend, p, args, stack_kib=256, timeout=1800, sim_cfg=(), charged=None):
        self.benchmark = benchmark
        self.backend = backend
        self.p = p
        self.args = list(args)
        self.stack_kib = stack_kib
        self.timeout = timeout
        self.sim_cfg = list(sim_cfg)  # extra --cfg=KEY:VALUE for smpirun
        # Peak memory estimate (GiB) for running jobs side by side (bench/run --jobs). Measured at
        # 2^15 ranks: collectives 17 GiB, sorting 6 GiB; 2^14: about half of that.
        self.mem_gib = 18.0 if p >= 2**15 else 9.0 if p >= 2**14 else 3.0 if p >= 2**12 else 1.0
        if charged is None:
            charged = benchmark in CHARGED
        self.compute = "charged" if (backend == "smpi" and charged) else (
            "free" if backend == "smpi" else "real")

    def describe(self):
        cfg = "".join(f" --cfg={c}" for c in self.sim_cfg)
        free = " (computation not charged)" if self.compute == "free" and self.benchmark in CHARGED else ""
        return f"{self.benchmark} {self.backend} p={self.p} {' '.join(self.args)}{cfg}{free}".strip()


def _pow2(lo, hi):
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def _csv(values):
    return ",".join(str(v) for v in values)


# SMPI's MPI_Scan (also behind MPI_Iscan) is linear: every PE receives from all lower ranks. Its
# simulation cost explodes beyond ~128 ranks (12 s at 128, > 2 min at 256 for ONE call), so above
# this p only RBC's scans run.
MPI_SCAN_MAX_P = 128


def _collectives_at(backend, p, args, timeout=1800):
    if backend != "smpi" or p <= MPI_SCAN_MAX_P:
        return [Job("collectives", backend, p, args, timeout=timeout)]
    return [Job("collectives", backend, p, args + ["--ops=bcast,reduce,allreduce,gather,allgather,barrier"],
                timeout=timeout),
            Job("collectives", backend, p, args + ["--ops=scan,exscan,scan_and_bcast", "--impls=rbc"], timeout=timeout)]


# The stable merge's weak scaling (bench/merge.cpp): 1000 + 2000 doubles per PE
# (the paper: 10 + 20 million; the simulated time of the co-ranking, which the variants differ
# in, depends on log2 of the sizes only). Simulating the one-sided co-ranking costs host time
# that grows far faster than p (SimGrid's bandwidth-sharing solver; measured on the SuperMUC-like
# platform: 13 s of CPU at 256 ranks, 3 min at 512, over 10 min per variant at 1024; see
# docs/merge.md), so the simulated sweep stops at MERGE_MAX_P.
MERGE_ARGS = ["--nps=1000", "--b-factor=2"]
MERGE_MAX_P = 1024


def _merge_at(p, reps, timeout=3600):
    """One merge job on SMPI: every variant; rendezvous sends from 256 ranks on (the fence and
    lock variants' many small RMA messages)."""
    return Job("merge", "smpi", p, MERGE_ARGS + reps, timeout=timeout,
               sim_cfg=[RENDEZVOUS] if p >= 256 else [])


def quick():
    """Small p, few sizes: the whole thing takes a few minutes on two cores."""
    jobs = []
    reps = ["--warmup=1", "--reps=3"]
    for p in (16, 64, 256):
        jobs.append(Job("comm_create", "smpi", p, reps))
        jobs.append(Job("overlap", "smpi", p, reps))
    # One node of the SuperMUC-like platform, short to long vectors (the algorithms change with both).
    jobs.append(Job("collectives", "smpi", 16, reps + ["--sizes=" + _csv([1, 1024, 65536])]))
    jobs += _collectives_at("smpi", 256, reps + ["--sizes=1"])
    jobs.append(Job("collectives", "smpi", 64, reps + ["--sizes=" + _csv([1, 16, 256, 4096, 65536])]))
    for p in (16, 64):
        jobs.append(Job("split_bcast", "smpi", p, reps + ["--sizes=1,1024"]))
    jobs.append(Job("sort", "smpi", 16, reps + ["--nps=1,64,1024", "--distributions=uniform",
                                                 "--impls=jquick_rbc,jquick_mpi_create_group,hypercube_rbc"],
                    stack_kib=1024))
    for p in (16, 64):
        jobs.append(_merge_at(p, ["--warmup=1", "--reps=2"]))
    mpi_p = 4
    jobs.append(Job("comm_create", "mpi", mpi_p, reps))
    jobs.append(Job("merge", "mpi", mpi_p, ["--nps=10000", "--b-factor=2"] + reps))
    jobs.append(Job("overlap", "mpi", mpi_p, reps))
    jobs.append(Job("collectives", "mpi", mpi_p, reps + ["--sizes=1,4096"]))
    # Issue 16's size range, 8 B to 8 MiB, where two ranks are not oversubscribed.
    jobs.append(Job("collectives", "mpi", 2, ["--warmup=2", "--reps=7", "--sizes=1,1024,131072,1048576"]))
    jobs.append(Job("p2p", "mpi", 2, ["--warmup=2", "--reps=9", "--sizes=8,1024,65536", "--impls=rbc,rbc_enveloped,mpi,mpi_wire"]))
    jobs.append(Job("p2p", "smpi", 2, ["--warmup=1", "--reps=3", "--sizes=8,1024,65536", "--impls=rbc,rbc_enveloped,mpi,mpi_wire"]))
    jobs.append(Job("split_bcast", "mpi", mpi_p, reps + ["--sizes=1"]))
    jobs.append(Job("sort", "mpi", mpi_p, reps + ["--nps=1,1024", "--distributions=uniform",
                                                   "--impls=jquick_rbc,jquick_mpi_create_group,hypercube_rbc"]))
    # Issue 17's targets: JQuick against its lower bound and hypercube quicksort, two ranks.
    jobs.append(Job("sort", "mpi", 2, ["--warmup=2", "--reps=15", "--nps=4096,65536", "--distributions=uniform",
                                       "--impls=jquick_rbc,hypercube_rbc,lower_bound"]))
    return jobs


# JQuick on MPI communicators under SMPI: simulating it costs host time that grows steeply with p
# (SimGrid's bandwidth-sharing solver, with the sort's computation charged: at 256 ranks the full
# run's six sorts took 49 minutes; at 512 not one sort of one element per PE finished in 6 minutes),
# so it runs up to this p.
JQUICK_MPI_MAX_P = 256

# Charging host CPU time stops being a measurement of local work at scale: the host runs
# thousands of simulated ranks on one core, so every rank resumes with cold caches, and SMPI's own
# per-call bookkeeping is charged too (measured: 100 MPI_Wtime calls are charged 121 us at 16 ranks,
# 302 us at 1024; JQuick at n/p = 16 and 4096 ranks: 40 ms charged vs 0.44 ms of communication).
# Above this p sorting runs with computation not charged (communication only; the records say so).
SORT_CHARGED_MAX_P = 256


def full(max_p=2**15):
    """The paper's figures over p = 16, 64, ..., 4096, 16384 and 2^15 on the simulated machine,
    sized to finish in about an hour with --jobs 2 on two cores (62 minutes at 3effe7c). From 1024
    ranks on, sends are rendezvous (SimGrid's eager-send bookkeeping is quadratic, docs/scale.md)
    and simulated runs, being deterministic, are timed once after one warm-up round."""
    jobs = []
    ps = [p for p in (16, 64, 256, 1024, 4096, 16384, 2**15) if p <= max_p]

    def reps(p):
        return ["--warmup=1", "--reps=3" if p <= 1024 else "--reps=1"]

    def cfg(p):
        return [RENDEZVOUS] if p >= 1024 else []

    for p in ps:
        # A rank list holds the p/2 members on every PE; MPI_Comm_split is O(p^2) simulator work;
        # a recursive MPI_Comm_create_group keeps ~2p group entries on every PE (24 GiB at 2^15).
        impls = ["rbc", "rbc_icreate_range"] + (["rbc_icreate_list"] if p <= 4096 else []) + [
            "mpi_create_group"] + (["mpi_split"] if p <= 1024 else [])
        if p <= 2**14:
            jobs.append(Job("comm_create", "smpi", p, reps(p) + ["--impls=" + _csv(impls)],
                            timeout=5400, sim_cfg=cfg(p)))
        else:
            jobs.append(Job("comm_create", "smpi", p, reps(p) + ["--modes=halves", "--impls=" + _csv(impls)],
                            timeout=5400, sim_cfg=cfg(p)))
            jobs.append(Job("comm_create", "smpi", p, reps(p) + ["--modes=recursive", "--impls=rbc,rbc_icreate_range"],
                            timeout=5400, sim_cfg=cfg(p)))
        # p = 3k + 1 covers every PE with groups of 4 overlapping in one.
        q = p - ((p - 1) % 3)
        ov = ["rbc", "mpi_create_group_cascaded", "mpi_create_group_alternating"] + (
            ["mpi_split"] if q <= 1024 else [])
        jobs.append(Job("overlap", "smpi", q, reps(q) + ["--impls=" + _csv(ov)], timeout=5400, sim_cfg=cfg(q)))
        # Collectives over p at small messages (fig. 4).
        for job in _collectives_at("smpi", p, reps(p) + ["--sizes=1,1024"], timeout=5400):
            job.sim_cfg = cfg(p)
            jobs.append(job)
        impls = ["rbc", "mpi_create_group"] + (["mpi_split"] if p <= 1024 else [])
        ks = "1,10,50" if p <= 1024 else "1,10"
        jobs.append(Job("split_bcast", "smpi", p, reps(p) + ["--ks=" + ks, "--sizes=1,32,1024",
                                                           "--impls=" + _csv(impls)],
                        timeout=5400, sim_cfg=cfg(p)))
    # Collectives over message size at a fixed p (fig. 9): memory bounds p at 2^18 doubles.
    if 64 <= max_p:
        jobs += _collectives_at("smpi", 64, reps(64) + ["--sizes=" + _csv(_pow2(1, 2**18))], timeout=5400)
    # Sorting (fig. 8): every power of two of n/p at small p, powers of 4 above.
    all_impls = "--impls=jquick_rbc,jquick_mpi_create_group,hypercube_rbc"
    rbc_impls = "--impls=jquick_rbc,hypercube_rbc"
    for p in (p for p in ps if p <= 64):
        jobs.append(Job("sort", "smpi", p, reps(p) + ["--nps=" + _csv(_pow2(1, 2**16)), "--distributions=uniform",
                                                   all_impls], stack_kib=1024, timeout=5400))
    for p, nps in ((256, _pow2(1, 2**16)[::2]), (1024, [1, 16, 256, 4096]), (4096, [1, 16, 256]),
                   (2**15, [16])):
        if p > max_p:
            continue
        charged = p <= SORT_CHARGED_MAX_P
        # Not charged, the simulation is deterministic: a warm-up round would repeat the timed one.
        sort_reps = reps(p) if charged else ["--warmup=0", "--reps=1"]
        jobs.append(Job("sort", "smpi", p, sort_reps + ["--nps=" + _csv(nps), "--distributions=uniform", rbc_impls],
                        stack_kib=1024, timeout=5400, sim_cfg=cfg(p), charged=charged))
        if p <= JQUICK_MPI_MAX_P:
            jobs.append(Job("sort", "smpi", p, ["--warmup=1", "--reps=1", "--nps=1,16,1024",
                                                "--distributions=uniform", "--impls=jquick_mpi_create_group"],
                            stack_kib=1024, timeout=5400, sim_cfg=cfg(p)))
    if 64 <= max_p:
        jobs.append(Job("sort", "smpi", 64, ["--warmup=1", "--reps=1", "--nps=1,1024",
                                             "--distributions=gaussian,zero,bucket-sorted,g-group,"
                                             "staggered,deterministic-duplicates,randomized-duplicates,"
                                             "reverse-sorted,mirrored-target,all-to-one", all_impls],
                        stack_kib=1024, timeout=5400))
    # Simulated runs are deterministic (computation not charged): one timed merge per variant.
    # 512 ranks: the 1024-rank point alone takes over 20 minutes of one core (docs/merge.md).
    for p in _pow2(2**6, min(max_p, 512)):
        jobs.append(_merge_at(p, ["--warmup=0", "--reps=1"], timeout=5400))
    # Open MPI, local ranks (the driver runs these alone, before the simulations).
    mreps = ["--warmup=1", "--reps=5"]
    for p in (2, 4, 8):
        jobs.append(Job("comm_create", "mpi", p, mreps))
        jobs.append(Job("merge", "mpi", p, ["--nps=100000", "--b-factor=2"] + mreps))
        jobs.append(Job("overlap", "mpi", p + (1 if p % 3 == 0 else 0), mreps))
        jobs.append(Job("collectives", "mpi", p, mreps + ["--sizes=" + _csv(_pow2(1, 2**18)[::2])]))
        jobs.append(Job("split_bcast", "mpi", p, mreps))
        jobs.append(Job("sort", "mpi", p, ["--warmup=1", "--reps=3", "--nps=" + _csv(_pow2(1, 2**16)[::3]),
                                            all_impls]))
    # Largest first, so that with --jobs N the long runs do not end up alone at the end.
    return sorted(jobs, key=lambda j: (j.backend != "mpi", -j.p))


def medium(max_p=2**15):
    """Between quick and full (about an hour on a quiet two-core machine): three rank counts per
    figure up to 4096, sorting up to 512, and the headline 2^15-rank points (communicator
    creation into halves, split + one broadcast), run last, if max_p allows."""
    jobs = []
    reps = ["--warmup=1", "--reps=3"]
    for p in (p for p in (64, 512, 4096) if p <= max_p):
        # SMPI's MPI_Comm_split is O(p^2) simulator work: measured at p <= 512 only.
        no_split = p > 512
        jobs.append(Job("comm_create", "smpi", p, reps + (
            ["--impls=rbc,rbc_icreate_range,rbc_icreate_list,mpi_create_group"] if no_split else []),
                        timeout=3600))
        jobs.append(Job("overlap", "smpi", p - ((p - 1) % 3), reps + (
            ["--impls=rbc,mpi_create_group_cascaded,mpi_create_group_alternating"] if no_split else []), timeout=3600))
        jobs += _collectives_at("smpi", p, reps + ["--sizes=1,1024"], timeout=3600)
        jobs.append(Job("split_bcast", "smpi", p, reps + ["--sizes=1,32,1024"] + (
            ["--impls=rbc,mpi_create_group"] if no_split else []), timeout=3600))
    jobs += _collectives_at("smpi", 64, reps + ["--sizes=" + _csv(_pow2(1, 2**18)[::2])], timeout=3600)
    for p, nps in ((64, [1, 16, 256, 4096, 65536]), (512, [1, 64, 1024, 16384])):
        if p <= max_p:
            impls = "jquick_rbc,jquick_mpi_create_group,hypercube_rbc" if p <= JQUICK_MPI_MAX_P else "jquick_rbc,hypercube_rbc"
            jobs.append(Job("sort", "smpi", p, reps + ["--nps=" + _csv(nps), "--distributions=uniform",
                                                        "--impls=" + impls], stack_kib=1024, timeout=3600))
    if 64 <= max_p:
        jobs.append(Job("sort", "smpi", 64, reps + ["--nps=1,1024", "--distributions=gaussian,zero,bucket-sorted,"
                                                     "g-group,staggered,deterministic-duplicates,randomized-duplicates,"
                                                     "reverse-sorted,mirrored-target,all-to-one",
                                                     "--impls=jquick_rbc,jquick_mpi_create_group,hypercube_rbc"],
                        stack_kib=1024, timeout=3600))
    for p in _pow2(2**6, min(max_p, 512)):
        jobs.append(_merge_at(p, ["--warmup=0", "--reps=1"]))
    for p in (2, 4):
        jobs.append(Job("comm_create", "mpi", p, reps))
        jobs.append(Job("merge", "mpi", p, ["--nps=10000", "--b-factor=2"] + reps))
        jobs.append(Job("overlap", "mpi", p, reps))
        jobs.append(Job("collectives", "mpi", p, reps + ["--sizes=1,1024,65536"]))
        jobs.append(Job("split_bcast", "mpi", p, reps + ["--sizes=1,1024"]))
        jobs.append(Job("sort", "mpi", p, reps + ["--nps=1,1024,65536",
                                                   "--impls=jquick_rbc,jquick_mpi_create_group,hypercube_rbc"]))
    big = 2**15
    if big <= max_p:
        one = ["--warmup=1", "--reps=1"]
        # No rbc_icreate_list here: a rank list holds p/2 ranks on every PE (2 GiB at 2^15).
        # Rendezvous sends: SimGrid's eager-send bookkeeping is quadratic at this size (docs/scale.md).
        jobs.append(Job("comm_create", "smpi", big, one + ["--modes=halves", "--impls=rbc,rbc_icreate_range,mpi_create_group"],
                        timeout=5400, sim_cfg=[RENDEZVOUS]))
        jobs.append(Job("split_bcast", "smpi", big, one + ["--ks=1", "--sizes=1,1024", "--impls=rbc,mpi_create_group"],
                        timeout=5400, sim_cfg=[RENDEZVOUS]))
    return jobs


def smoke():
    """Tiny: one run per program and backend, for the Bazel smoke test (seconds)."""
    jobs = []
    one = ["--warmup=0", "--reps=1"]
    for backend, p in (("smpi", 8), ("mpi", 2)):
        jobs.append(Job("comm_create", backend, p, one))
        jobs.append(Job("overlap", backend, p if backend == "mpi" else 7, one))
        jobs.append(Job("collectives", backend, p, one + ["--sizes=1,64"]))
        jobs.append(Job("split_bcast", backend, p, one + ["--ks=1,10", "--sizes=1"]))
        jobs.append(Job("sort", backend, p, one + ["--nps=1,64"], stack_kib=1024))
        jobs.append(Job("merge", backend, p, one + ["--nps=100"]))
    return jobs
