"""Guards the calibrated simulation against artefacts such as SMPI's 1e-4 s probe cost.

Simulates, on one 16-core node modelled by the built-in reference-16c profile, a ping-pong, a
probe-then-receive exchange and MPI_Comm_split at np=2, and compares each simulated time with
what the profile itself predicts. Simulated against modelled time: deterministic, no timing of
the host. Also checks that malformed profiles are refused.

usage: calibrated_model_test.py CALIBRATE_SMPI_SO CHARGE_PRELOAD_SO
"""

import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "sim", "calibration"))

import calibration_profile as cp  # noqa: E402

PROGRAM = None
PRELOAD = None
FACTOR = 2.0


def simulate(profile_path, sections, np=2):
    cmd = [sys.executable, os.path.join(ROOT, "sim", "runner"), PROGRAM, "--np", str(np), "--platform",
           "cluster", "-p", "nodes=1", "-p", "cores=16", "--calibration", profile_path, "--heartbeat", "0",
           "--timeout", "120", "--"] + sections + ["--quick"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ, JANUS_CHARGE_PRELOAD=PRELOAD))
    if proc.returncode != 0:
        raise AssertionError(f"simulation failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    records = [json.loads(line[len("JANUS_CALIB "):]) for line in proc.stdout.splitlines()
               if line.startswith("JANUS_CALIB ")]
    return records, proc.stdout


def pingpongs(records):
    """{bytes: median half round trip} of a simulation's ping-pong records."""
    return {r["bytes"]: statistics.median(r["samples"]) for r in records if r["kind"] == "pingpong"}


def medians(records):
    """{kind: median} of a simulation's records (one record per kind)."""
    return {r["kind"]: statistics.median(r["samples"]) for r in records}


class CalibratedModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.profile = cp.load("reference-16c")
        cls.records, cls.stdout = simulate(cls.profile["_path"], ["pingpong", "exchange", "comm"])
        cls.first = [r["samples"] for r in cls.records]

    def link(self, size):
        return cp.value(self.profile, "node_alpha") + size / (cp.value(self.profile, "node_bw")
                                                             * cp.factor_at(self.profile, cp.BW_FACTOR, size))

    def simulate_with(self, parameters, sections):
        """(profile, records): the profile with `parameters` ({name: value}; None removes one) set, simulated."""
        profile = copy.deepcopy(self.profile)
        for name, value in parameters.items():
            if value is None:
                profile["parameters"].pop(name, None)
            else:
                profile["parameters"][name] = {"value": value, "unit": "", "source": "test"}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "profile.json")
            with open(path, "w") as f:
                json.dump(profile, f)
            records, _ = simulate(path, sections)
        return profile, records

    def check(self, what, simulated, predicted):
        ratio = simulated / predicted
        self.assertLessEqual(ratio, FACTOR, f"{what}: simulated {simulated * 1e6:.3f} us is {ratio:.1f}x the "
                             f"profile's prediction {predicted * 1e6:.3f} us")
        self.assertGreaterEqual(ratio, 1 / FACTOR, f"{what}: simulated {simulated * 1e6:.3f} us is only "
                                f"{ratio:.2f}x the prediction {predicted * 1e6:.3f} us (a charge missing?)")

    def test_pingpong_matches_overheads_plus_link(self):
        pp = [r for r in self.records if r["kind"] == "pingpong"]
        self.assertTrue(pp)
        self.assertTrue(any(r["bytes"] >= cp.DETACHED_LIMIT for r in pp))
        for r in pp:
            s = r["bytes"]
            self.check(f"ping-pong {s} B", statistics.median(r["samples"]), cp.pingpong_seconds(self.profile, s))

    def test_long_messages_take_the_bandwidth_factor(self):
        # A calibrated shared-memory profile keeps the eager copies in os / or and slows the link
        # for long messages only; without the factor 1 MiB would take a tenth of the time.
        profile, records = self.simulate_with({"bw_factor": [[cp.DETACHED_LIMIT, 0.1]]}, ["pingpong"])
        by = pingpongs(records)
        for s, t in by.items():
            self.check(f"ping-pong {s} B with bw_factor 0.1 from 64 KiB", t, cp.pingpong_seconds(profile, s))
        plain = pingpongs(self.records)
        self.assertGreater(by[1 << 20], 5 * plain[1 << 20])
        self.assertEqual(by[8], plain[8])

    def test_latency_step_starts_where_the_profile_says(self):
        # A factor from 257 B on (Open MPI's inline limit is 256 B) must reach 257 B and not
        # 256 B, although SMPI looks factors up at the size plus 16 bytes.
        _, records = self.simulate_with({"lat_factor": [[257, 5.0]]}, ["pingpong"])
        by, plain = pingpongs(records), pingpongs(self.records)
        self.assertEqual(by[256], plain[256])
        step = 4.0 * cp.value(self.profile, "node_alpha")
        self.assertAlmostEqual(by[257] - plain[257], step, delta=0.01 * step)

    def test_probe_then_receive_costs_no_more_than_a_message(self):
        ex = [r for r in self.records if r["kind"] == "exchange"]
        self.assertEqual(len(ex), 2)
        for r in ex:
            s = r["bytes"]
            predicted = (cp.piecewise_at(cp.value(self.profile, "ois"), s) + self.link(s)
                         + cp.value(self.profile, "iprobe") + cp.piecewise_at(cp.value(self.profile, "or"), s))
            self.check(f"isend + probe + receive {s} B", statistics.median(r["samples"]), predicted)

    def test_split_costs_what_the_profile_measured(self):
        real = [r for r in self.profile["samples"] if r["kind"] == "comm" and r["op"] == "split" and r["p"] == 2]
        sim = [r for r in self.records if r["kind"] == "comm" and r["op"] == "split" and r["p"] == 2]
        self.assertTrue(real and sim)
        self.check("MPI_Comm_split p=2", statistics.median(sim[0]["samples"]), statistics.median(real[0]["samples"]))

    def test_same_command_same_simulated_times(self):
        again, _ = simulate(self.profile["_path"], ["pingpong", "exchange", "comm"])
        self.assertEqual([r["samples"] for r in again], self.first)

    def test_wtime_and_datatype_are_charged(self):
        # A profile that measured them: each MPI_Wtime call and each datatype commit costs what
        # it says (smpi/wtime; charge_preload's MPI_Type_commit), and nothing when unset.
        _, records = self.simulate_with({"wtime": 4e-8, "type_create": 3e-7}, ["probe"])
        by = medians(records)
        self.check("MPI_Wtime", by["wtime"], 4e-8)
        self.check("datatype create + commit + free", by["type_create"], 3e-7)
        without, _ = simulate(self.profile["_path"], ["probe"])
        uncharged = medians(without)
        self.assertLess(uncharged["type_create"], 3e-7 / FACTOR, "a commit is charged without type_create")

    def test_jquick_pool_charges_each_completed_operation(self):
        # An exchange through JQuick's pool completes two operations (a send, a receive and its
        # continuation): compute_continuation is charged twice, the same exchange through RBC
        # directly not at all.
        charge = 1e-6
        _, plain = self.simulate_with({"compute_continuation": [0.0, 0.0]}, ["rbc"])
        _, charged = self.simulate_with({"compute_continuation": [charge, 0.0]}, ["rbc"])
        before = medians(plain)
        after = medians(charged)
        self.assertAlmostEqual(after["pool_exchange"] - before["pool_exchange"], 2 * charge, delta=1e-9)
        self.assertEqual(after["pool_exchange_rbc"], before["pool_exchange_rbc"])

    def test_each_message_path_takes_its_own_charge(self):
        # A message posted through a request pays compute_message, a blocking rbc::send with no
        # operation in flight compute_immediate_message, and a message of an exchanging collective
        # run at once (a barrier or allgather on two ranks: one exchange) compute_collective_message.
        # Each ping-pong's half round trip and each exchange is one message per rank, so each
        # charge moves its own measurement by itself and leaves the others as they were.
        charge = 1e-6
        kernels = {"rbc_pingpong": "compute_message", "rbc_blocking_pingpong": "compute_immediate_message",
                   "rbc_collective_exchange": "compute_collective_message"}

        def by_size(records):
            return {(r["kind"], r.get("bytes")): statistics.median(r["samples"]) for r in records
                    if r["kind"] in kernels}

        zero = {name: [0.0, 0.0] for name in kernels.values()}
        before = by_size(self.simulate_with(zero, ["rbc"])[1])
        self.assertEqual(sorted(b for kind, b in before if kind == "rbc_blocking_pingpong"), [0, 8, 64, 256, 1024, 4096])
        self.assertEqual(sorted(b for kind, b in before if kind == "rbc_collective_exchange"), [0, 8, 1024])
        for charged in kernels.values():
            after = by_size(self.simulate_with(dict(zero, **{charged: [charge, 0.0]}), ["rbc"])[1])
            for (kind, b), seconds in before.items():
                moved = charge if kernels[kind] == charged else 0.0
                self.assertAlmostEqual(after[(kind, b)] - seconds, moved, delta=1e-9,
                                       msg=f"{kind} at {b} B with {charged} charged")

    def test_rbc_reductions_charge_the_operator(self):
        # On two ranks a reduce of 1024 doubles applies the operator once, at the root, to 8192
        # bytes: compute_reduce at 1 ns per byte adds 8.192 us to the call, nothing else does.
        _, plain = self.simulate_with({"compute_reduce": [0.0, 0.0]}, ["rbc"])
        _, charged = self.simulate_with({"compute_reduce": [0.0, 1e-9]}, ["rbc"])
        before = medians(plain)
        after = medians(charged)
        self.assertAlmostEqual(after["rbc_reduce"] - before["rbc_reduce"], 8192e-9, delta=1e-9)
        self.assertEqual(after["rbc_exchange"], before["rbc_exchange"])

    def test_library_reductions_charge_the_operator(self):
        # Under the ompi selector, on two ranks, 64 KiB: MPI_Reduce is linear (the root applies the
        # operator once to 65536 bytes), MPI_Scan linear (rank 1 once), MPI_Allreduce a segmented
        # ring (each rank once, to a block of 32768 bytes); compute_reduce at 1 ns per byte. The
        # broadcast and the gather apply nothing.
        base = {"coll_selector": "ompi", "collectives": None}
        _, plain = self.simulate_with(dict(base, compute_reduce=[0.0, 0.0]), ["coll"])
        _, charged = self.simulate_with(dict(base, compute_reduce=[0.0, 1e-9]), ["coll"])

        def at_64k(records):
            return {r["op"]: statistics.median(r["samples"]) for r in records
                    if r["kind"] == "coll" and r["p"] == 2 and r["bytes"] == 65536}

        before, after = at_64k(plain), at_64k(charged)
        for op, applied in (("reduce", 65536), ("scan", 65536), ("allreduce", 32768), ("bcast", 0), ("gather", 0)):
            self.assertAlmostEqual(after[op] - before[op], applied * 1e-9, delta=0.05 * applied * 1e-9 + 1e-9,
                                   msg=f"MPI's {op} of 64 KiB on two ranks")


class ProfileChecks(unittest.TestCase):
    def setUp(self):
        with open(cp.resolve("reference-16c")) as f:
            self.good = json.load(f)

    def refused(self, mutate, message):
        bad = copy.deepcopy(self.good)
        mutate(bad)
        with self.assertRaises(cp.ProfileError) as ctx:
            cp.validate(bad)
        self.assertIn(message, str(ctx.exception))

    def test_builtins_are_valid(self):
        for name in cp.builtin_names():
            cp.load(name)

    def test_zero_probe_cost_is_refused(self):
        self.refused(lambda p: p["parameters"]["iprobe"].update(value=0), "iprobe")

    def test_missing_parameter_is_refused(self):
        self.refused(lambda p: p["parameters"].pop("os"), "missing parameter 'os'")

    def test_parameter_without_source_is_refused(self):
        self.refused(lambda p: p["parameters"]["node_bw"].pop("source"), "value and a source")

    def test_parameter_with_empty_source_is_refused(self):
        self.refused(lambda p: p["parameters"]["node_bw"].update(source="  "), "value and a source")

    def test_negative_wtime_is_refused(self):
        self.refused(lambda p: p["parameters"].update(wtime={"value": -1e-8, "source": "x"}), "wtime")

    def test_unknown_selector_is_refused(self):
        self.refused(lambda p: p["parameters"].update(coll_selector={"value": "intel", "source": "x"}), "coll_selector")

    def test_unknown_name_lists_builtins(self):
        with self.assertRaises(cp.ProfileError) as ctx:
            cp.resolve("no-such-profile")
        self.assertIn("reference-16c", str(ctx.exception))


if __name__ == "__main__":
    PROGRAM, PRELOAD = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1])
