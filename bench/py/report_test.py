"""bench/report keeps simulated platforms apart: records of two platforms with the same (p, n/p)
must each appear in their own tables, never one overwriting the other."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import report  # noqa: E402


def sort_record(platform, calibration, impl, p, n, seconds):
    return {"benchmark": "sort", "backend": "smpi", "platform": platform,
            "platform_params": {"name": platform, "topology": platform, "cores_per_node": 16},
            "rev": "test", "p": p, "variant": "uniform", "implementation": impl, "n_per_pe": n,
            "warmup": 0, "repetitions": 1, "median_s": seconds, "min_s": seconds, "max_s": seconds,
            "phases": {"local_sort": seconds / 2}, "verified": True, "calibration": calibration}


def write(path, recs):
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")



def p2p(impl, seconds):
    """A real 8-byte ping-pong record of `impl` on two ranks."""
    return {"benchmark": "p2p", "backend": "mpi", "platform": "node", "mpi_library": "Open MPI v4.1.4",
            "platform_params": {"name": "node", "host_cores": 2, "oversubscribed": False}, "rev": "test",
            "p": 2, "variant": "pingpong", "implementation": impl, "n": 8, "median_s": seconds,
            "warmup": 1, "repetitions": 1, "min_s": seconds, "max_s": seconds}

class PlatformsApart(unittest.TestCase):
    def generate(self, recs):
        out = tempfile.mkdtemp()
        path = os.path.join(out, "records.jsonl")
        write(path, recs)
        with open(report.generate([path], os.path.join(out, "report"))) as f:
            return f.read()

    def test_two_platforms_get_their_own_tables(self):
        recs = [sort_record("supermuc", "supermuc", "jquick_rbc", 8, 16, 2e-5),
                sort_record("supermuc", "supermuc", "hypercube_rbc", 8, 16, 4e-5),
                sort_record("juqueen", "juqueen", "jquick_rbc", 8, 16, 9e-5),
                sort_record("juqueen", "juqueen", "hypercube_rbc", 8, 16, 3e-5)]
        text = self.generate(recs)
        self.assertIn("# Simulated (SMPI): supermuc platform, calibration supermuc", text)
        self.assertIn("# Simulated (SMPI): juqueen platform, calibration juqueen", text)
        self.assertIn("### supermuc platform, calibration supermuc", text)
        # Parts come in the records' order: supermuc's, then juqueen's.
        supermuc = text.index("# Simulated (SMPI): supermuc")
        juqueen = text.index("# Simulated (SMPI): juqueen")
        self.assertLess(supermuc, juqueen)
        supermuc_part, juqueen_part = text[supermuc:juqueen], text[juqueen:]
        self.assertIn("| 0.50x | met (<= 1.0) |", supermuc_part)
        self.assertNotIn("3.00x", supermuc_part.split("JQuick / hypercube per")[1])
        self.assertIn("| 3.00x | not met |", juqueen_part)
        self.assertNotIn("0.50x", juqueen_part.split("JQuick / hypercube per")[1])

    def test_one_platform_keeps_one_part(self):
        recs = [sort_record("supermuc", "supermuc", "jquick_rbc", 8, 16, 2e-5),
                sort_record("supermuc", "supermuc", "hypercube_rbc", 8, 16, 4e-5)]
        text = self.generate(recs)
        self.assertIn("# Simulated (SMPI)\n", text)
        self.assertNotIn("# Simulated (SMPI):", text)
        self.assertNotIn("### supermuc platform", text)


class StretchVerdict(unittest.TestCase):
    def test_p_not_a_power_of_two_pairs_with_hypercube_on_q(self):
        # At p = 12 JQuick beats hypercube quicksort on all 12 PEs but not on 8: the target's
        # pairing, so the summary row must say "not met" (as the per-(p, n/p) table does).
        recs = [sort_record("supermuc", "supermuc", "jquick_rbc", 8, 16, 2e-5),
                sort_record("supermuc", "supermuc", "hypercube_rbc", 8, 16, 4e-5),
                sort_record("supermuc", "supermuc", "jquick_rbc", 12, 16, 5e-5),
                sort_record("supermuc", "supermuc", "hypercube_rbc", 12, 16, 6e-5)]
        out = tempfile.mkdtemp()
        path = os.path.join(out, "records.jsonl")
        write(path, recs)
        with open(report.generate([path], os.path.join(out, "report"))) as f:
            text = f.read()
        row = next(line for line in text.splitlines() if line.startswith("| stretch: JQuick"))
        self.assertIn("met at 1,", row)
        self.assertIn("1.25x (p=12, n/p=16)", row)
        self.assertTrue(row.rstrip().endswith("| not met |"), row)
        self.assertIn("met at 1 of 2 points", text)
        # The same p's other pairings beside it: JQuick on q (5e-5 / 2e-5) and hypercube
        # quicksort on p itself (5e-5 / 6e-5), which the summary counts apart.
        self.assertIn("against hypercube quicksort on p itself (folding p - q PEs in): met at 1 of 1, 0.83x", row)
        table_row = next(line for line in text.splitlines() if line.startswith("| 12 | 16 |"))
        self.assertTrue(table_row.rstrip().endswith("| not met | 2.50x | 0.83x |"), table_row)
        power_of_two_row = next(line for line in text.splitlines() if line.startswith("| 2^3 | 16 |"))
        self.assertTrue(power_of_two_row.rstrip().endswith("| met (<= 1.0) |  |  |"), power_of_two_row)


class RoundsAndFilters(unittest.TestCase):
    def generate(self, recs, **options):
        out = tempfile.mkdtemp()
        path = os.path.join(out, "records.jsonl")
        write(path, recs)
        with open(report.generate([path], os.path.join(out, "report"), **options)) as f:
            return f.read()

    def test_rounds_give_the_median_of_their_times(self):
        recs = []
        for rnd, (j, h) in enumerate(((1.0, 2.0), (2.0, 4.0), (3.0, 1.0)), 1):
            recs += [dict(sort_record("a", "pa", "jquick_rbc", 4, 16, j), round=rnd),
                     dict(sort_record("a", "pa", "hypercube_rbc", 4, 16, h), round=rnd)]
        text = self.generate(recs)
        # Times: medians over rounds, 2.0 against 2.0. Ratio: the median of the rounds' own (0.5,
        # 0.5, 3.0), each taken within one run; the last round alone would say 3.00x, the ratio of
        # the medians 1.00x.
        self.assertIn("| 4 | 16 | 2 s | 4 | 2 s | 0.50x | met (<= 1.0) |", text)
        self.assertIn("| uniform | 4 | 16 | 2 s (1.00x) | 2 s | yes |", text)

    def test_excluded_builds_are_left_out(self):
        recs = [dict(sort_record("a", "pa", "jquick_rbc", 4, 16, 1.0), build="new"),
                dict(sort_record("a", "pa", "hypercube_rbc", 4, 16, 2.0), build="new"),
                dict(sort_record("a", "pa", "jquick_rbc", 4, 16, 9.0), build="old")]
        self.assertIn("| 4 | 16 | 9 s | 4 | 2 s | 4.50x | not met |", self.generate(recs))
        text = self.generate(recs, exclude=[("build", "old")])
        self.assertIn("| 4 | 16 | 1 s | 4 | 2 s | 0.50x | met (<= 1.0) |", text)
        self.assertIn("left out: build = old", text)

    def test_a_later_record_gives_the_point_its_time_and_its_algorithm(self):
        def coll(impl, algorithm, seconds):
            return {"benchmark": "collectives", "backend": "smpi", "platform": "a",
                    "platform_params": {"name": "a", "topology": "a", "cores_per_node": 16}, "rev": "test",
                    "p": 24, "variant": "bcast", "implementation": impl, "algorithm": algorithm, "n": 1,
                    "median_s": seconds, "min_s": seconds, "max_s": seconds, "warmup": 0, "repetitions": 1,
                    "calibration": "pa"}
        recs = [coll("rbc", "rbc binomial tree", 3e-6), coll("mpi", "library default", 2e-6),
                coll("rbc", "rbc 4-nomial tree", 2.2e-6), coll("mpi", "library default", 2e-6)]
        text = self.generate(recs)
        self.assertIn("| bcast | 24 | 1 | 4-nomial tree | 2.2 us | 2 us | 1.10x | met |", text)
        self.assertNotIn("binomial tree", text)

    def test_a_profile_named_calibration_profile_groups_as_calibration(self):
        recs = [sort_record("a", "pa", "jquick_rbc", 4, 16, 1.0), sort_record("a", "pa", "hypercube_rbc", 4, 16, 2.0)]
        for r in recs:
            r["calibration_profile"] = r.pop("calibration")
        recs += [sort_record("b", "pb", "jquick_rbc", 4, 16, 1.0), sort_record("b", "pb", "hypercube_rbc", 4, 16, 2.0)]
        text = self.generate(recs)
        self.assertIn("a platform, calibration pa", text)
        self.assertNotIn("a platform, uncalibrated", text)


class RealMachines(unittest.TestCase):
    def test_real_runs_name_the_library_and_the_machine_cores(self):
        def real(library, cores, impl, seconds):
            r = sort_record("node", None, impl, 4, 16, seconds)
            r.pop("calibration")
            r.update(backend="mpi", mpi_library=library,
                     platform_params={"name": "node", "host_cores": cores, "oversubscribed": False})
            return r
        recs = [real("Open MPI v4.1.6", 16, "jquick_rbc", 1.0), real("Open MPI v4.1.6", 16, "hypercube_rbc", 2.0),
                real("Open MPI v4.1.4", 2, "jquick_rbc", 3.0), real("Open MPI v4.1.4", 2, "hypercube_rbc", 2.0)]
        text = PlatformsApart.generate(self, recs)
        self.assertIn("# Open MPI v4.1.6 on node (16 cores)\n", text)
        self.assertIn("# Open MPI v4.1.4 on node (2 cores)\n", text)

    def test_pingpong_splits_into_envelope_bytes_and_own_work(self):
        recs = [p2p("rbc", 1.5e-6), p2p("mpi", 1.0e-6), p2p("mpi_wire", 1.2e-6)]
        text = PlatformsApart.generate(self, recs)
        self.assertIn("envelope's bytes (wire / mpi)", text)
        row = next(line for line in text.splitlines() if line.startswith("| 2 | 8 |"))
        self.assertIn("| 1.50x | not met | 1.2 us | 1.20x | 1.25x |", row)

    def test_pingpong_on_the_handle_beside_a_split(self):
        recs = [p2p("rbc", 1.05e-6), p2p("rbc_enveloped", 1.5e-6), p2p("mpi", 1.0e-6), p2p("mpi_wire", 1.2e-6)]
        text = PlatformsApart.generate(self, recs)
        self.assertIn("whose user messages travel bare", text)
        self.assertIn("rbc's own work (split / wire)", text)
        row = next(line for line in text.splitlines() if line.startswith("| 2 | 8 |"))
        self.assertIn("| 1.05x | met | 1.50x | 1.2 us | 1.20x | 1.25x |", row)


if __name__ == "__main__":
    unittest.main()
