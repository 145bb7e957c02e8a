"""sim/runner: clear errors for bad requests, deadlocks and timeouts, and a usable JSON record.

usage: runner_test.py NETCHECK_SMPI_SO NETCHECK_MPI_EXECUTABLE
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(ROOT, "sim", "runner")

SMPI_PROGRAM = None
MPI_PROGRAM = None


def run(*args, program=None, timeout=120):
    cmd = [sys.executable, RUNNER, program or SMPI_PROGRAM, "--heartbeat", "0"] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class Errors(unittest.TestCase):
    def test_unknown_platform_lists_valid_ones(self):
        proc = run("--platform", "supermuk", "--np", "4", "--", "barrier")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown platform 'supermuk'", proc.stderr)
        for name in ("supermuc", "juqueen", "cluster", "fattree", "torus"):
            self.assertIn(name, proc.stderr)

    def test_unknown_parameter_lists_valid_ones(self):
        proc = run("--platform", "juqueen", "-p", "islands=2", "--np", "4", "--", "barrier")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown parameter(s) islands for platform juqueen", proc.stderr)
        self.assertIn("dims", proc.stderr)

    def test_bad_parameter_value(self):
        proc = run("--platform", "cluster", "-p", "alpha=fast", "--np", "4", "--", "barrier")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("parameter alpha", proc.stderr)

    def test_more_ranks_than_cores(self):
        proc = run("--platform", "cluster", "-p", "nodes=2", "-p", "cores=4", "--np", "9", "--", "barrier")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("9 ranks do not fit", proc.stderr)
        self.assertIn("2 nodes x 4 cores = 8 slots", proc.stderr)

    def test_oversubscribe_wraps_ranks_around_nodes(self):
        proc = run("--platform", "cluster", "-p", "nodes=2", "-p", "cores=4", "--np", "9",
                   "--oversubscribe", "--deterministic", "--", "barrier")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("RESULT barrier ranks=9 failures=0", proc.stdout)

    def test_supermuc_has_at_most_18_islands(self):
        proc = run("--platform", "supermuc", "--np", str(18 * 512 * 16 + 1), "--", "barrier")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("islands must be 1..18", proc.stderr)

    def test_executable_is_not_an_smpi_program(self):
        proc = run("--np", "2", "--", "barrier", program=MPI_PROGRAM)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("is an executable", proc.stderr)

    def test_missing_np(self):
        proc = run("--", "barrier")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--np is required", proc.stderr)


class ProgramPath(unittest.TestCase):
    def test_a_path_through_a_symlink_is_resolved_when_given(self):
        # bazel-bin is such a symlink; a later build in another compilation mode re-points it.
        sys.path.insert(0, os.path.join(ROOT, "sim", "runner_lib"))
        import janus_runner  # noqa: E402

        with tempfile.TemporaryDirectory() as tmp:
            for build in ("opt", "fastbuild"):
                os.makedirs(os.path.join(tmp, build))
                with open(os.path.join(tmp, build, "libprog.so"), "w") as f:
                    f.write(build)
            link = os.path.join(tmp, "bazel-bin")
            os.symlink(os.path.join(tmp, "opt"), link)
            path = janus_runner.resolve_program(os.path.join(link, "libprog.so"), lambda _: None, suffix=False)
            os.remove(link)
            os.symlink(os.path.join(tmp, "fastbuild"), link)
            with open(path) as f:
                self.assertEqual(f.read(), "opt")


class Outcomes(unittest.TestCase):
    def test_deadlock_is_reported_with_the_stuck_ranks(self):
        with tempfile.TemporaryDirectory() as tmp:
            record_file = os.path.join(tmp, "run.json")
            proc = run("--np", "4", "--deterministic", "--json", record_file, "--", "deadlock")
            self.assertEqual(proc.returncode, 3, proc.stderr)
            self.assertIn("DEADLOCK", proc.stderr)
            with open(record_file) as f:
                record = json.load(f)
        self.assertEqual(record["status"], "deadlock")
        self.assertEqual(sorted(s["rank"] for s in record["stuck"]), ["0", "1", "2", "3"])

    def test_timeout_kills_a_livelocked_simulation(self):
        proc = run("--np", "2", "--timeout", "2", "--", "livelock")
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("TIMEOUT", proc.stderr)

    def test_json_record_of_a_good_run(self):
        proc = run("--platform", "supermuc", "-p", "alpha=1us", "--np", "64", "--deterministic",
                   "--json", "-", "--quiet", "--", "barrier")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        record = json.loads(proc.stdout)
        self.assertEqual(record["status"], "ok")
        self.assertEqual(record["np"], 64)
        self.assertEqual(record["platform"]["name"], "supermuc")
        self.assertEqual(record["platform"]["alpha_per_hop_s"], 1e-6)
        self.assertEqual(record["platform"]["path_hops"], {"same leaf switch": 2, "same island": 4})
        self.assertGreater(record["simulated_time_s"], 0)
        self.assertGreater(record["peak_rss_bytes"], 0)
        self.assertIn("--cfg=smpi/simulate-computation:no", record["command"])
        self.assertIn("--cfg=contexts/guard-size:0", record["command"])
        self.assertIn("summary: 64 ranks, status ok", proc.stderr)

    def test_deterministic_runs_are_identical_and_user_cfg_passes_through(self):
        times = []
        for _ in range(2):
            proc = run("--platform", "torus", "--np", "32", "--deterministic", "--json", "-", "--quiet",
                       "--cfg=smpi/barrier:ompi_basic_linear", "--", "barrier")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            record = json.loads(proc.stdout)
            self.assertIn("--cfg=smpi/barrier:ompi_basic_linear", record["command"])
            times.append(record["simulated_time_s"])
        self.assertEqual(times[0], times[1])

    def test_large_run_options_and_rendezvous(self):
        proc = run("--platform", "supermuc", "--np", "4096", "--rendezvous", "--dry-run", "--json", "-",
                   "--", "barrier")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        command = json.loads(proc.stdout)["command"]
        for option in ("-no-privatize", "--cfg=contexts/guard-size:0", "--cfg=smpi/allreduce:rdb",
                       "--cfg=smpi/send-is-detached-thresh:0", "--cfg=network/model:CM02"):
            self.assertIn(option, command)

    def test_sweep_prints_a_table(self):
        proc = run("--platform", "cluster", "--np", "2,8", "--deterministic", "--quiet", "--", "barrier")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("| ranks | status |", proc.stderr)
        self.assertIn("| 8 | ok |", proc.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: runner_test.py NETCHECK_SMPI_SO NETCHECK_MPI_EXECUTABLE")
    SMPI_PROGRAM = os.path.abspath(sys.argv.pop(1))
    MPI_PROGRAM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
