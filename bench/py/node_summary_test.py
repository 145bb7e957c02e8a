"""bench/node_check's summary: ratios within a round, medians over rounds, the targets' pairings."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import node_summary  # noqa: E402


def sort(impl, p, n, seconds, rnd):
    return {"benchmark": "sort", "variant": "uniform", "implementation": impl, "p": p, "n_per_pe": n,
            "median_s": seconds, "round": rnd}


def coll(op, impl, p, n, seconds, rnd):
    return {"benchmark": "collectives", "variant": op, "implementation": impl, "p": p, "n": n,
            "median_s": seconds, "round": rnd}


class Summary(unittest.TestCase):
    def test_jquick_pairs_with_hypercube_on_the_largest_power_of_two_in_the_same_round(self):
        records = [sort("jquick_rbc", 12, 16, 9.0, 1), sort("hypercube_rbc", 8, 16, 10.0, 1),
                   sort("hypercube_rbc", 12, 16, 1.0, 1),  # on all 12 PEs: not the target's partner
                   sort("jquick_rbc", 12, 16, 12.0, 2), sort("hypercube_rbc", 8, 16, 10.0, 2),
                   sort("jquick_rbc", 12, 16, 11.0, 3), sort("hypercube_rbc", 8, 16, 10.0, 3),
                   sort("jquick_rbc", 8, 16, 1.0, 4)]  # no partner in round 4: no ratio
        text = "\n".join(node_summary.jquick_table(records))
        # Beside it: hypercube quicksort on all 12 PEs (round 1 only), JQuick on 8 (no round with both).
        self.assertIn("| 12 | 8 | 16 | 1.10 (0.90-1.20) | not met |  | 9.00 |", text)
        self.assertIn("met at 0 of 1 points", text)
        self.assertNotIn("| 8 | 8 |", text)

    def test_oversubscribed_runs_say_so(self):
        records = [dict(sort(impl, 4, 1, 1.0, 1), platform_params={"oversubscribed": True})
                   for impl in ("jquick_rbc", "hypercube_rbc")]
        self.assertIn("| 4 (oversubscribed) | 4 | 1 | 1.00 | met |", "\n".join(node_summary.jquick_table(records)))

    def test_collective_verdicts_use_the_limit(self):
        records = [coll("bcast", "rbc", 16, 1, 1.2, 1), coll("bcast", "mpi", 16, 1, 1.0, 1),
                   coll("bcast", "rbc", 16, 1024, 1.3, 1), coll("bcast", "mpi", 16, 1024, 1.0, 1)]
        text = "\n".join(node_summary.collectives_table(records))
        self.assertIn("met at 1 of 2 points", text)
        self.assertIn("| bcast | 16 | 1.20 | 1.30 * |", text)

    def test_pingpong_limits_at_8_bytes_and_64_kib_only(self):
        records = []
        for n, rbc in ((8, 1.05), (1024, 1.5), (65536, 1.03)):
            records += [{"variant": "pingpong", "implementation": "rbc", "n": n, "median_s": rbc, "round": 1},
                        {"variant": "pingpong", "implementation": "mpi", "n": n, "median_s": 1.0, "round": 1}]
        text = "\n".join(node_summary.p2p_table(records))
        self.assertIn("| pingpong | 8 | 1.05 | met (<= 1.1) |", text)
        self.assertIn("| pingpong | 1024 | 1.50 |  |", text)
        self.assertIn("| pingpong | 65536 | 1.03 | not met (<= 1.02) |", text)

    def test_pingpong_split_into_envelope_bytes_and_own_work(self):
        records = []
        for rnd, (rbc, wire) in enumerate(((1.3, 1.2), (1.4, 1.1)), start=1):
            records += [{"variant": "pingpong", "implementation": "rbc", "n": 8, "median_s": rbc, "round": rnd},
                        {"variant": "pingpong", "implementation": "mpi", "n": 8, "median_s": 1.0, "round": rnd},
                        {"variant": "pingpong", "implementation": "mpi_wire", "n": 8, "median_s": wire, "round": rnd}]
        text = "\n".join(node_summary.p2p_table(records))
        self.assertIn("RBC's own work", text)
        # rbc / mpi 1.30 and 1.40; mpi_wire / mpi 1.20 and 1.10; rbc / mpi_wire 1.08 and 1.27
        self.assertIn("| pingpong | 8 | 1.35 (1.30-1.40) | not met (<= 1.1) | 1.15 (1.10-1.20) | 1.18 (1.08-1.27) |",
                      text)

    def test_pingpong_on_the_handle_and_on_a_split(self):
        records = []
        for rnd, (rbc, enveloped, wire) in enumerate(((1.05, 1.3, 1.2), (1.07, 1.4, 1.1)), start=1):
            records += [{"variant": "pingpong", "implementation": "rbc", "n": 8, "median_s": rbc, "round": rnd},
                        {"variant": "pingpong", "implementation": "rbc_enveloped", "n": 8, "median_s": enveloped,
                         "round": rnd},
                        {"variant": "pingpong", "implementation": "mpi", "n": 8, "median_s": 1.0, "round": rnd},
                        {"variant": "pingpong", "implementation": "mpi_wire", "n": 8, "median_s": wire, "round": rnd}]
        text = "\n".join(node_summary.p2p_table(records))
        self.assertIn("travel bare", text)
        self.assertIn("RBC on a split (envelopes) / MPI", text)
        # the handle 1.05 and 1.07 (met); the split 1.30 and 1.40, of it the envelope's bytes 1.20 and 1.10 and
        # RBC's own work 1.08 and 1.27
        self.assertIn("| pingpong | 8 | 1.06 (1.05-1.07) | met (<= 1.1) | 1.35 (1.30-1.40) | 1.15 (1.10-1.20) | "
                      "1.18 (1.08-1.27) |", text)

    def test_directory_without_records_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "steps.txt"), "w") as f:
                f.write("node_check: sort np=16 round 1: exit 124, 120 s\n")
            with open(os.path.join(d, "p2p.jsonl"), "w") as f:
                f.write(json.dumps({"variant": "pingpong", "implementation": "rbc", "n": 8, "median_s": 2.0}) + "\n")
            out = os.path.join(d, "out.txt")
            with open(out, "w") as f:
                saved, sys.stdout = sys.stdout, f
                try:
                    node_summary.main(["node_summary", d])
                finally:
                    sys.stdout = saved
            with open(out) as f:
                text = f.read()
        self.assertIn("Target 1: no sort records", text)
        self.assertIn("Target 3: no collectives records", text)
        self.assertIn("Target 4: no p2p records", text)  # no MPI side to compare with
        self.assertIn("exit 124", text)


if __name__ == "__main__":
    unittest.main()
