"""./janus validate's machine check: this machine now against the profile's own measurements."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import validate  # noqa: E402


def rec(kind, seconds, **fields):
    return dict(kind=kind, samples=[seconds * 0.9, seconds, seconds * 1.5], **fields)


PROFILE = [rec("pingpong", 1.0e-7, bytes=8), rec("pingpong", 3.0e-7, bytes=1024),
           rec("comm", 4.0e-6, op="create_group", p=2), rec("comm", 4.0e-6, op="create_group", p=1),
           rec("rbc_split", 1.0e-7, p=2)]


class MachineCheck(unittest.TestCase):
    def test_rows_compare_medians_of_the_same_probe(self):
        now = [rec("pingpong", 1.5e-7, bytes=8), rec("pingpong", 3.3e-7, bytes=1024),
               rec("comm", 2.0e-6, op="create_group", p=2), rec("comm", 9.0e-6, op="create_group", p=1),
               rec("coll", 1.0e-7, op="bcast", bytes=8, p=2)]
        rows = {r["probe"]: r for r in validate.drift(PROFILE, now, 2)}
        # Only probes both hold: no split, bcast or RBC split here (one side lacks each).
        self.assertEqual(sorted(rows), ["MPI ping-pong 1 KiB", "MPI ping-pong 8 B", "MPI_Comm_create_group p=2"])
        self.assertAlmostEqual(rows["MPI ping-pong 8 B"]["ratio"], 1.5)
        self.assertFalse(rows["MPI ping-pong 8 B"]["within_25"])
        self.assertTrue(rows["MPI ping-pong 1 KiB"]["within_25"])
        # p = np is compared, not p = 1 (which drifted 2.25x and must not show).
        self.assertAlmostEqual(rows["MPI_Comm_create_group p=2"]["ratio"], 0.5)

    def test_summary_names_what_drifted_and_what_to_do(self):
        rows = validate.drift(PROFILE, [rec("pingpong", 1.5e-7, bytes=8), rec("rbc_split", 1.1e-7, p=2)], 2)
        text = validate.drift_summary(rows, True, 2)
        self.assertIn("1 of 2 probes within", text)
        self.assertIn("MPI ping-pong 8 B 1.50x", text)
        self.assertIn("./janus calibrate --np 2", text)
        steady = validate.drift_summary(validate.drift(PROFILE, [rec("rbc_split", 1.1e-7, p=2)], 2), True, 2)
        self.assertEqual(steady, "1 of 1 probes within +-25% of the profile's own measurements")

    def test_no_check_is_said_as_such(self):
        self.assertIn("--sim-only", validate.drift_summary([], False, 2))
        self.assertIn("published profile", validate.drift_summary(validate.drift([], PROFILE, 2), True, 2))

    def test_table_shows_the_probes(self):
        rows = validate.drift(PROFILE, [rec("pingpong", 1.5e-7, bytes=8)], 2)
        context = {"profile": "p", "date": "d", "real": "r", "simulated": "s",
                   "machine_check": validate.drift_summary(rows, True, 2)}
        table = validate.render_table([], context, rows)
        self.assertIn("| MPI ping-pong 8 B | 0.1 | 0.15 | 1.50 | no |", table)
        self.assertIn("machine against the profile: 0 of 1 probes", table)


class Summary(unittest.TestCase):
    def test_groups_count_within_and_span_ratios(self):
        def row(ratio, **key):
            return {"key": [[k, v] for k, v in key.items()], "ratio": ratio,
                    "within_25": None if ratio is None else abs(ratio - 1) <= 0.25}
        rows = [row(0.5, benchmark="sort", n_per_pe=1), row(0.9, benchmark="sort", n_per_pe=256),
                row(1.1, benchmark="sort", n_per_pe=4096), row(2.0, benchmark="collectives", n=1),
                row(1.0, benchmark="comm_create", p=2), row(0.8, benchmark="split_bcast", k=10),
                row(None, benchmark="sort", n_per_pe=65536)]
        got = {name: (ok, n, lo, hi) for name, ok, n, lo, hi in validate.group_summary(rows)}
        self.assertEqual(got["sort, n/p <= 256"], (1, 2, 0.5, 0.9))
        self.assertEqual(got["sort, n/p > 256"], (1, 1, 1.1, 1.1))
        self.assertEqual(got["collectives, n = 1"], (0, 1, 2.0, 2.0))
        self.assertEqual(got["creation, split + broadcasts"], (2, 2, 0.8, 1.0))
        printable = [dict(r, point="x", real_s=1.0, simulated_s=r["ratio"]) for r in rows]
        table = validate.render_table(printable, {"profile": "t", "date": "d", "real": "r", "simulated": "s",
                                                  "machine_check": "m"})
        self.assertIn("| sort, n/p <= 256 | 1 of 2 | 0.50 - 0.90 |", table)


class SplitRuns(unittest.TestCase):
    """--real-only on a node without SimGrid, --sim-only here: the records in between."""

    def write(self, rows):
        import json
        import tempfile
        handle, path = tempfile.mkstemp(suffix=".jsonl")
        with os.fdopen(handle, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        self.addCleanup(os.remove, path)
        return path

    def row(self, real, simulated):
        return {"key": [["benchmark", "sort"]], "point": "sort", "real_s": real, "simulated_s": simulated,
                "ratio": None if simulated is None else simulated / real, "profile": "t", "np": 16}

    def test_real_only_records_need_no_simulated_time(self):
        path = self.write([self.row(2e-6, None)])
        self.assertEqual(validate.check_records(path, need_sim=False), [])
        self.assertIn("no simulated time", validate.check_records(path)[0])

    def test_real_time_still_required_of_real_only_records(self):
        path = self.write([self.row(None, None)])
        self.assertIn("no real time", validate.check_records(path, need_sim=False)[0])

    def test_bundle_must_hold_every_program(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for name in ("calibrate_mpi", "sort_mpi"):
                with open(os.path.join(d, name), "w") as f:
                    f.write("#!/bin/sh\n")
                os.chmod(os.path.join(d, name), 0o755)
            program = validate.bundled_programs(d, ["sort"])
            self.assertEqual(program("sort"), os.path.join(d, "sort_mpi"))
            self.assertEqual(program("calibrate"), os.path.join(d, "calibrate_mpi"))
            with self.assertRaises(validate.calibrate.CalibrationError) as caught:
                validate.bundled_programs(d, ["sort", "collectives"])
            self.assertIn("collectives_mpi", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
