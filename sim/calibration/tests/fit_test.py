"""The fits behind ./janus calibrate recover known parameters from synthetic measurements."""

import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import calibrate  # noqa: E402
import calibration_profile as cp  # noqa: E402


def rec(kind, samples, **fields):
    return dict(kind=kind, samples=samples, **fields)


OS, OR, ALPHA, BW = 2e-7, 1e-7, 3e-7, 5e9


def link_records():
    """Noise-free ping-pongs, overheads and probe costs of a link with OS, OR, ALPHA and BW."""
    records = [rec("pingpong", [OS + OR + ALPHA + s / BW] * 3, bytes=s) for s in (0, 8, 1024, 65536)]
    for s in (0, 256, 1024):
        records += [rec("overhead", [OS], op="send", bytes=s), rec("overhead", [OS], op="isend", bytes=s),
                    rec("overhead", [OR], op="recv", bytes=s)]
    return records + [rec("iprobe", [5e-8]), rec("test", [2e-8])]


class Fits(unittest.TestCase):
    def test_least_squares_recovers_a_line(self):
        a, b = calibrate.least_squares([1, 2, 3, 4], [3, 5, 7, 9])
        self.assertAlmostEqual(a, 1)
        self.assertAlmostEqual(b, 2)

    def test_relative_fit_never_negative(self):
        a, b = calibrate.relative_fit([1, 10, 100], [5.0, 4.0, 3.0])
        self.assertGreaterEqual(a, 0)
        self.assertGreaterEqual(b, 0)

    def test_piecewise_segments(self):
        # A step after 8 bytes (Open MPI's path for the smallest messages), then one at 512.
        points = {0: 8e-8, 8: 9e-8, 64: 2.5e-7, 256: 2.5e-7 + 192e-11, 512: 1e-6, 1024: 1e-6 + 512e-11,
                  8192: 5.0}
        segs = calibrate.fit_piecewise(points)
        self.assertEqual([s[0] for s in segs], [0, 9, 512])
        self.assertAlmostEqual(cp.piecewise_at(segs, 8), 9e-8, delta=1e-9)
        self.assertAlmostEqual(cp.piecewise_at(segs, 64), 2.5e-7, delta=1e-9)
        self.assertAlmostEqual(segs[1][2], 1e-11, delta=1e-13)
        self.assertAlmostEqual(segs[2][2], 1e-11, delta=1e-13)
        # sizes at or above the eager limit are left out
        self.assertLess(cp.piecewise_at(segs, 8192), 1e-5)

    def test_profile_from_synthetic_measurements(self):
        os_, or_, alpha, bw = 2e-7, 1e-7, 3e-7, 5e9
        records = []
        for s in (0, 8, 1024, 65536, 1 << 20):
            t = os_ + or_ + alpha + s / bw
            records.append(rec("pingpong", [t, t * 1.01, t * 0.99], bytes=s))
        for s in (0, 256, 1024):
            records += [rec("overhead", [os_], op="send", bytes=s), rec("overhead", [os_], op="isend", bytes=s),
                        rec("overhead", [or_], op="recv", bytes=s)]
        records += [rec("iprobe", [5e-8]), rec("test", [2e-8])]
        for n in (1, 256, 65536):
            records.append(rec("kernel", [1e-7 + 4e-9 * n * math.log2(n)], op="sort", n=n))
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        self.assertAlmostEqual(params["node_alpha"]["value"], alpha, delta=0.05 * alpha)
        self.assertAlmostEqual(params["node_bw"]["value"], bw, delta=0.05 * bw)
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params}
        for n in (1, 16, 256, 4096, 65536, 1 << 20):
            t = 1e-7 + 4e-9 * n * math.log2(n)
            self.assertAlmostEqual(cp.kernel_seconds(profile, "sort", n), t, delta=0.02 * t)
        cp.validate(profile)

    def test_kernel_costs_go_through_every_measured_size(self):
        # A comparison sort's small inputs cost more per element than one formula says.
        measured = {1: 3e-9, 16: 1.4e-7, 256: 6.1e-6, 4096: 5.2e-5, 65536: 9.4e-4}
        records = [rec("kernel", [t], op="sort", n=n) for n, t in measured.items()]
        records += [rec("kernel", [2e-8 + 1.2e-9 * n], op="merge", n=n) for n in (1, 256, 4096)]
        segments = calibrate.joined_segments("sort", sorted(measured.items()))
        self.assertEqual([s[0] for s in segments], [0, 16, 256, 4096])
        self.assertTrue(all(s[1] >= 0 and s[2] >= 0 for s in segments))
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "",
                   "parameters": {"compute_sort": {"value": segments, "source": "x"}}}
        for n, t in measured.items():
            self.assertAlmostEqual(cp.kernel_seconds(profile, "sort", n), t, delta=1e-6 * t)
        self.assertGreater(cp.kernel_seconds(profile, "sort", 1 << 20), 9.4e-4)
        self.assertEqual(cp.environment(profile)["JANUS_COST_SORT"].count(";"), 3)
        # Slopes never go negative (noise): the segment stays flat.
        flat = calibrate.joined_segments("copy", [(16, 2e-8), (256, 1e-8), (4096, 5e-7)])
        self.assertEqual(flat[0][2], 0.0)
        params, _ = calibrate.fit_profile(records + [rec("pingpong", [3e-7] * 3, bytes=s) for s in (0, 1024)] +
                                          [rec("overhead", [1e-7], op=o, bytes=0) for o in ("send", "isend", "recv")] +
                                          [rec("iprobe", [5e-8]), rec("test", [2e-8])], 2, "Open MPI", "4.1", "")
        self.assertEqual(len(params["compute_merge"]["value"]), 2)
        self.assertEqual(params["coll_selector"]["value"], "ompi")

    def test_long_messages_get_the_link_bandwidth(self):
        # Shared memory: below the detached limit the copies are the overheads' per-byte costs and
        # the link adds almost nothing; SMPI charges no os / or to a blocking message from 64 KiB
        # on, so there the link alone must take what the copies cost (6 GB/s here).
        os_c, os_b, or_c, or_b, alpha, long_bw = 2e-7, 1e-10, 1e-7, 2e-11, 1e-7, 6e9
        records = []
        for s in (0, 8, 64, 1024, 4096, 16384):
            t = os_c + os_b * s + or_c + or_b * s + alpha
            records.append(rec("pingpong", [t, t, t], bytes=s))
        handshake = 2e-6  # a rendezvous' extra round trip
        for s in (65536, 1 << 20, 4 << 20):
            t = alpha + handshake + s / long_bw
            records.append(rec("pingpong", [t, t, t], bytes=s))
        for s in (0, 256, 1024, 2048):
            records += [rec("overhead", [os_c + os_b * s], op="send", bytes=s),
                        rec("overhead", [os_c + os_b * s], op="isend", bytes=s),
                        rec("overhead", [or_c + or_b * s], op="recv", bytes=s)]
        records += [rec("iprobe", [5e-8]), rec("test", [2e-8])]
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        bw = params["node_bw"]["value"]
        self.assertGreater(bw, 50e9)  # the eager range's per-byte cost stays in the overheads
        (start, factor), = params["bw_factor"]["value"]
        (lat_start, lat), = params["lat_factor"]["value"]
        self.assertEqual((start, lat_start), (calibrate.DETACHED_LIMIT, calibrate.DETACHED_LIMIT))
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params}
        for s in (65536, 1 << 20, 4 << 20):
            real = alpha + handshake + s / long_bw
            self.assertAlmostEqual(params["node_alpha"]["value"] * lat + s / (bw * factor), real, delta=0.02 * real)
            self.assertAlmostEqual(cp.pingpong_seconds(profile, s), real, delta=0.02 * real)
        # The overheads stop growing with size where SMPI would apply them to long isends.
        for name in ("os", "ois", "or"):
            last = params[name]["value"][-1]
            self.assertEqual((last[0], last[2]), (calibrate.DETACHED_LIMIT, 0.0))
        cp.validate(profile)
        cfg = cp.smpi_cfg(profile)
        self.assertIn("--cfg=network/model:SMPI", cfg)
        # SMPI looks factors up at size + 16 and applies a threshold's factor above it.
        self.assertIn(f"--cfg=smpi/bw-factor:65551:{factor!r};0:1.0", cfg)
        self.assertIn(f"--cfg=smpi/lat-factor:65551:{lat!r};0:1.0", cfg)

    def test_latency_step_in_the_eager_range(self):
        # Open MPI's shared memory sends up to 256 B inline; from 257 B the latency doubles.
        alpha, beta = 1.5e-7, 1 / 6e9
        sizes = [0, 8, 64, 128, 256, 257, 320, 384, 512, 1024, 2048, 4096, 16384]
        stepped = {s: (alpha if s <= 256 else 2.2 * alpha) + beta * s for s in sizes}
        weights = {s: 1 / (stepped[s] + 2e-7) ** 2 for s in sizes}
        a, b, step = calibrate.fit_link(stepped, weights)
        self.assertAlmostEqual(a, alpha, delta=1e-10)
        self.assertAlmostEqual(b, beta, delta=1e-13)
        self.assertEqual(step[0], 257)
        self.assertAlmostEqual(step[1], 2.2, delta=1e-6)
        # A straight line gets no step, and neither does a step of noise.
        line = {s: alpha + beta * s for s in sizes}
        self.assertIsNone(calibrate.fit_link(line, weights)[2])
        noisy = {s: t * (1.03 if i % 2 else 0.97) for i, (s, t) in enumerate(sorted(line.items()))}
        self.assertIsNone(calibrate.fit_link(noisy, weights)[2])
        # In a whole profile the step is a latency factor below the rendezvous one.
        os_c, or_c = 2e-7, 1e-7
        records = [rec("pingpong", [os_c + or_c + t] * 3, bytes=s) for s, t in stepped.items()]
        for s in (0, 256, 1024, 2048):
            records += [rec("overhead", [os_c], op="send", bytes=s), rec("overhead", [os_c], op="isend", bytes=s),
                        rec("overhead", [or_c], op="recv", bytes=s)]
        records += [rec("iprobe", [5e-8]), rec("test", [2e-8])]
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        self.assertEqual(params["lat_factor"]["value"][0][0], 257)
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params}
        cp.validate(profile)
        for s in (256, 257, 1024):
            real = os_c + or_c + stepped[s]
            self.assertAlmostEqual(cp.pingpong_seconds(profile, s), real, delta=0.02 * real)
        self.assertIn(f"272:{params['lat_factor']['value'][0][1]!r};0:1.0", " ".join(cp.smpi_cfg(profile)))

    def test_no_factor_where_the_link_explains_long_messages(self):
        alpha = 1e-7
        self.assertEqual(calibrate.long_message_factors({1 << 20: alpha + (1 << 20) / 4.1e9}, alpha, 1 / 4e9),
                         (None, None))
        # Long messages faster than the eager link (a single-copy transport) get a factor above 1.
        lat, bw = calibrate.long_message_factors({1 << 20: alpha + (1 << 20) / 10e9}, alpha, 1 / 4e9)
        self.assertIsNone(lat)
        self.assertAlmostEqual(bw, 2.5, delta=0.01)
        self.assertEqual(calibrate.long_message_factors({}, alpha, 1e-10), (None, None))
        # One size: no handshake can be told apart from the bandwidth; only the bandwidth moves.
        lat, bw = calibrate.long_message_factors({1 << 20: alpha + (1 << 20) / 5e9}, alpha, 1e-11)
        self.assertIsNone(lat)
        self.assertAlmostEqual(bw, 1e-11 * 5e9, delta=1e-3)

    def test_send_overhead_is_not_the_receivers_drain_rate(self):
        # Back-to-back blocking sends of 512 B and more wait for the receiver (shared memory's
        # buffers are full): 4x the isend. Fitted as os, that would make every simulated ping-pong
        # of those sizes slower than the real one; the send costs its caller what an isend does.
        records = [rec("pingpong", [3e-7 + s * 3e-10] * 3, bytes=s) for s in (0, 8, 256, 1024, 4096)]
        for s in (0, 256, 512, 1024, 2048):
            isend = 8e-8 + 6e-11 * s
            send = isend if s < 512 else 4 * isend
            records += [rec("overhead", [send], op="send", bytes=s), rec("overhead", [isend], op="isend", bytes=s),
                        rec("overhead", [3e-8], op="recv", bytes=s)]
        records += [rec("iprobe", [5e-8]), rec("test", [2e-8])]
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        for s in (256, 1024, 2048):
            self.assertAlmostEqual(cp.piecewise_at(params["os"]["value"], s), 8e-8 + 6e-11 * s, delta=1e-9)
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params}
        for s in (256, 1024, 4096):
            self.assertAlmostEqual(cp.pingpong_seconds(profile, s), 3e-7 + s * 3e-10, delta=0.1 * (3e-7 + s * 3e-10))

    def test_bad_bandwidth_factors_are_refused(self):
        base = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "",
                "parameters": {n: {"value": [[0, 1e-7, 0.0]], "source": "x"} for n in cp.PIECEWISE}}
        base["parameters"].update({n: {"value": 1e-7, "source": "x"} for n in ("iprobe", "test", "node_alpha")})
        base["parameters"]["node_bw"] = {"value": 1e10, "source": "x"}
        cp.validate(base)
        self.assertNotIn("--cfg=network/model:SMPI", cp.smpi_cfg(base))
        for name in ("bw_factor", "lat_factor"):
            for bad in ([], [[65536, 0.0]], [[65536, 0.5], [1024, 0.5]], [[65536]], "0.5"):
                base["parameters"][name] = {"value": bad, "source": "x"}
                with self.assertRaises(cp.ProfileError):
                    cp.validate(base)
            base["parameters"].pop(name)

    def test_rbc_message_charge_from_alternating_trials(self):
        # The machine's load changes between trials (MPI's own ping-pong from 0.2 to 2 us); RBC's
        # trials, taken right after, add 150 ns to each. The charge is that 150 ns, not a
        # difference of medians taken at different loads.
        records = link_records() + [rec("wtime", [3e-8, 2.5e-8, 9e-8]), rec("type_create", [1.6e-7])]
        loads = [2e-7, 2e-6, 3e-7, 1.5e-6, 2e-7]
        for s in (0, 8, 64):
            records.append(rec("rbc_pingpong_mpi", loads, bytes=s))
            records.append(rec("rbc_pingpong", [x + 1.5e-7 for x in loads], bytes=s))
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        c0, c1 = params["compute_message"]["value"]
        self.assertAlmostEqual(c0, 1.5e-7, delta=1e-9)
        self.assertAlmostEqual(c1, 0.0, delta=1e-12)
        self.assertAlmostEqual(params["wtime"]["value"], 3e-8, delta=1e-12)
        self.assertAlmostEqual(params["type_create"]["value"], 1.6e-7, delta=1e-12)
        cp.validate({"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params})
        # Where exchanges were measured they decide (RBC's work per message in the pattern the
        # sorts and collectives use), against MPI's exchange of the same wire bytes.
        for s in (0, 8, 64):
            records.append(rec("rbc_exchange_mpi", loads, bytes=s, wire_bytes=s + 56))
            records.append(rec("rbc_exchange", [x + 2.5e-7 for x in loads], bytes=s))
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        self.assertAlmostEqual(params["compute_message"]["value"][0], 2.5e-7, delta=1e-9)
        self.assertIn("exchange", params["compute_message"]["source"])
        self.assertIn("payload + 56 B envelope", params["compute_message"]["source"])

    def test_rbc_message_charge_against_the_simulated_mpi_exchange(self):
        # Real MPI's exchange costs 1.0 us at every load-free trial; the twin simulates it at
        # 0.7 us (SMPI charges an exchange a ping-pong's latency) and 0.7 us + 1 ns per byte.
        # RBC's real exchange adds 0.2 us + 0.1 ns per byte to MPI's. Against the simulated
        # exchange the charge carries both: 0.5 us and 0.1 ns per byte.
        mpi = [1.0e-6, 1.0e-6, 1.0e-6]
        by = {"rbc_exchange": [], "rbc_exchange_mpi": []}
        simulated = {}
        for b in (0, 8, 64, 1024):
            real_mpi = [x + 1e-9 * b for x in mpi]
            by["rbc_exchange_mpi"].append(rec("rbc_exchange_mpi", real_mpi, bytes=b, wire_bytes=b + 56))
            by["rbc_exchange"].append(rec("rbc_exchange", [x + 2e-7 + 1e-10 * b for x in real_mpi], bytes=b))
            simulated[b] = 0.7e-6 + 1e-9 * b
        against_real = calibrate.fit_message(by, {}, 2)
        self.assertAlmostEqual(against_real["value"][0], 2e-7, delta=1e-12)
        against_sim = calibrate.fit_message(by, {}, 2, simulated)
        c0, c1 = against_sim["value"]
        self.assertAlmostEqual(c0, 5e-7, delta=1e-12)
        self.assertAlmostEqual(c1, 1e-10, delta=1e-15)
        self.assertIn("SMPI twin", against_sim["source"])
        # A size the twin did not simulate is left out, not fitted against the real exchange.
        del simulated[1024]
        self.assertIn("0, 8, 64 B", calibrate.fit_message(by, {}, 2, simulated)["source"])

    def test_immediate_message_charge_from_the_blocking_ping_pong(self):
        # RBC's blocking ping-pong adds 60 ns + 0.05 ns per payload byte to MPI's of the same wire
        # bytes, whatever the load of each trial; its nonblocking exchange adds 250 ns. Each path
        # gets its own charge, and a profile without the blocking samples gets none for it.
        loads = [2e-7, 2e-6, 3e-7, 1.5e-6, 2e-7]
        records = link_records()
        for b in (0, 8, 64, 1024):
            records.append(rec("rbc_blocking_pingpong_mpi", [x + 1e-9 * b for x in loads], bytes=b,
                               wire_bytes=b + 56))
            records.append(rec("rbc_blocking_pingpong", [x + 1e-9 * b + 6e-8 + 5e-11 * b for x in loads], bytes=b))
            records.append(rec("rbc_exchange_mpi", loads, bytes=b, wire_bytes=b + 56))
            records.append(rec("rbc_exchange", [x + 2.5e-7 for x in loads], bytes=b))
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        c0, c1 = params["compute_immediate_message"]["value"]
        self.assertAlmostEqual(c0, 6e-8, delta=1e-12)
        self.assertAlmostEqual(c1, 5e-11, delta=1e-15)
        self.assertIn("blocking ping-pong", params["compute_immediate_message"]["source"])
        self.assertIn("payload + 56 B envelope", params["compute_immediate_message"]["source"])
        self.assertAlmostEqual(params["compute_message"]["value"][0], 2.5e-7, delta=1e-12)
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params}
        cp.validate(profile)
        env = cp.environment(profile)
        self.assertEqual(env["JANUS_COST_IMMEDIATE_MESSAGE"], f"0:{c0!r},{c1!r}")
        self.assertNotEqual(env["JANUS_COST_IMMEDIATE_MESSAGE"], env["JANUS_COST_MESSAGE"])
        # An older profile (no blocking samples) charges the blocking path as any message.
        del params["compute_immediate_message"]
        env = cp.environment(profile)
        self.assertEqual(env["JANUS_COST_IMMEDIATE_MESSAGE"], env["JANUS_COST_MESSAGE"])
        self.assertEqual(env["JANUS_COST_COLLECTIVE_MESSAGE"], env["JANUS_COST_MESSAGE"])
        self.assertIsNone(calibrate.fit_immediate_message(calibrate.by_kind(link_records()), 2))
        self.assertIsNone(calibrate.fit_collective_message(calibrate.by_kind(link_records()), 2))

    def test_collective_message_charge_leaves_out_the_calls_bookkeeping(self):
        # A barrier and allgathers on two ranks (one exchange each) take 150 ns + 0.1 ns per
        # payload byte more than MPI's exchange of the same wire bytes; 40 ns of that is the call's
        # own bookkeeping, which compute_collective charges already.
        loads = [3e-7, 1e-6, 4e-7]
        records = link_records() + [rec("rbc_collective", [4e-8, 4e-8, 4e-8], p=1)]
        for b in (0, 8, 1024):
            records.append(rec("rbc_collective_exchange_mpi", loads, bytes=b, wire_bytes=b + 56))
            records.append(rec("rbc_collective_exchange", [x + 1.5e-7 + 1e-10 * b for x in loads], bytes=b))
        params, _ = calibrate.fit_profile(records, 2, "Open MPI", "4.1", "")
        c0, c1 = params["compute_collective_message"]["value"]
        self.assertAlmostEqual(c0, 1.1e-7, delta=1e-12)
        self.assertAlmostEqual(c1, 1e-10, delta=1e-15)
        self.assertAlmostEqual(params["compute_collective"]["value"][0], 4e-8, delta=1e-15)
        self.assertIn("bookkeeping (40 ns", params["compute_collective_message"]["source"])
        profile = {"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params}
        cp.validate(profile)
        self.assertEqual(cp.environment(profile)["JANUS_COST_COLLECTIVE_MESSAGE"], f"0:{c0!r},{c1!r}")

    def test_pool_charge_per_completed_operation(self):
        loads = [5e-7, 3e-6, 6e-7]
        records = [rec("pool_exchange", [x + 1.6e-7 for x in loads], bytes=8, operations=2),
                   rec("pool_exchange_rbc", loads, bytes=8)]
        by = {r["kind"]: [r] for r in records}
        self.assertIsNone(calibrate.fit_message(by, {}, 2))
        params, _ = calibrate.fit_profile(records + link_records(), 2, "Open MPI", "4.1", "")
        self.assertAlmostEqual(params["compute_continuation"]["value"][0], 8e-8, delta=1e-12)
        cp.validate({"schema": cp.SCHEMA, "name": "t", "machine": {}, "mpi": {}, "date": "", "parameters": params})

    def test_split_charge_is_a_lone_split_minus_the_clock(self):
        loop = rec("rbc_split", [6e-8] * 5, p=2)
        alone = rec("rbc_split_alone", [8e-8, 1.2e-7, 1.3e-7, 1.25e-7, 9e-8], p=2)
        empty = rec("rbc_split_alone_empty", [2e-8, 2.2e-8, 2.5e-8, 2.2e-8, 3e-8], p=2)
        params, _ = calibrate.fit_profile([loop, alone, empty] + link_records(), 2, "Open MPI", "4.1", "")
        self.assertAlmostEqual(params["compute_communicator"]["value"][0], 1.2e-7 - 2.2e-8, delta=1e-12)
        self.assertIn("alone", params["compute_communicator"]["source"])
        # Older profiles hold only the loop of splits.
        params, _ = calibrate.fit_profile([loop] + link_records(), 2, "Open MPI", "4.1", "")
        self.assertAlmostEqual(params["compute_communicator"]["value"][0], 6e-8, delta=1e-12)

    def test_creation_charge_is_real_minus_simulated(self):
        real = {("create_group", p): 2e-6 + 1e-6 * math.log2(p) for p in (2, 4, 8)}
        sim = {k: 0.5e-6 for k in real}
        params = calibrate.fit_creation(real, sim, 8)
        a, b = params["comm_create_group"]["value"]
        self.assertAlmostEqual(a, 1.5e-6, delta=1e-9)
        self.assertAlmostEqual(b, 1e-6, delta=1e-9)


class Launchers(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.pop("JANUS_MPIRUN", None)

    def tearDown(self):
        if self.saved is not None:
            os.environ["JANUS_MPIRUN"] = self.saved

    def test_library_versions(self):
        self.assertEqual(calibrate.parse_library("ompi:version:full:4.1.4\n"), ("Open MPI", "4.1.4"))
        self.assertEqual(calibrate.parse_library("mpirun (Open MPI) 4.1.6\n\nReport bugs to x\n"),
                         ("Open MPI", "4.1.6"))
        self.assertEqual(calibrate.parse_library("MPICH Version:    \t4.0.2\nMPICH Release date: x\n"),
                         ("MPICH", "4.0.2"))
        # Hydra names its build first; the first "Version:" after it is the library's.
        self.assertEqual(calibrate.parse_library("HYDRA build details:\n    Version:  4.0.2\n"
                                                 "    Release Date: Thu Apr 7\n"), ("MPICH", "4.0.2"))
        self.assertIsNone(calibrate.parse_library("something else\n"))

    def test_mpich_launcher_has_no_open_mpi_options(self):
        cmd = calibrate.default_launcher(2, "mpich")
        self.assertIn("-n", cmd)
        self.assertFalse(any(c.startswith("--mca") or c == "--allow-run-as-root" for c in cmd))
        self.assertEqual(calibrate.isolation_options("mpich", "/tmp/x"), [])
        self.assertIn("--mca", calibrate.default_launcher(2, "openmpi"))
        self.assertIn("/tmp/x", calibrate.isolation_options("openmpi", "/tmp/x"))

    def test_one_build_where_the_libraries_share_a_configuration(self):
        calls = []
        real = calibrate.bazel_bin
        calibrate.bazel_bin = lambda targets, mpi="openmpi": calls.append((list(targets), mpi)) or f"/out/{mpi}"
        try:
            self.assertEqual(calibrate.bazel_bins(["//a:smpi"], ["//a:mpi"], "openmpi"), ("/out/openmpi",) * 2)
            self.assertEqual(calls, [(["//a:smpi", "//a:mpi"], "openmpi")])
            calls.clear()
            self.assertEqual(calibrate.bazel_bins(["//a:smpi"], ["//a:mpi"], "mpich"), ("/out/openmpi", "/out/mpich"))
            self.assertEqual(calls, [(["//a:smpi"], "openmpi"), (["//a:mpi"], "mpich")])
        finally:
            calibrate.bazel_bin = real

    def test_custom_launcher_gets_no_library_options(self):
        os.environ["JANUS_MPIRUN"] = "mpiexec -genv OMP_NUM_THREADS 1"
        self.assertEqual(calibrate.default_launcher(4, "openmpi"), ["mpiexec", "-genv", "OMP_NUM_THREADS", "1", "-np", "4"])
        self.assertEqual(calibrate.isolation_options("openmpi", "/tmp/x"), [])


if __name__ == "__main__":
    unittest.main()
