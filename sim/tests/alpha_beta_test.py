"""The platform knobs mean what they say, in simulated time.

With SMPI's correction factors off (the runner's default pure alpha-beta model) and compute not
charged, a ping-pong of l bytes between two nodes h hops apart takes h * alpha + l * beta one way
(within 1%), for every platform and for intra-node pairs (node_alpha + l / node_bw); and on the
SuperMUC-like machine many concurrent inter-island flows get 1/pruning of the intra-island bandwidth.

SMPI 3.32 charges every message 16 bytes more than its payload (measured: 16 ns at 1 GB/s, 3.2 ns at
5 GB/s, at any latency), so the test uses latencies of at least 0.7 us, where that stays below 1%.

Runs the real runner (sim/runner) on the netcheck SMPI program; usage: alpha_beta_test.py NETCHECK_SO
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(ROOT, "sim", "runner")
sys.path.insert(0, os.path.join(ROOT, "platforms"))

import platformgen  # noqa: E402

PROGRAM = None
SIZES = [0, 1024, 65536, 1 << 20, 16 << 20]


def simulate(platform, params, np, program_args, extra=()):
    """Runs the runner; returns (RESULT lines as dicts, runner JSON record)."""
    cmd = [sys.executable, RUNNER, PROGRAM, "--platform", platform, "--np", str(np), "--deterministic",
           "--heartbeat", "0", "--timeout", "120", "--json", "-",
           # MPI_Wtime itself costs 10 ns of simulated time by default; keep it out of the clock
           "--cfg=smpi/wtime:0"]
    for key, value in params.items():
        cmd += ["-p", f"{key}={value}"]
    cmd += list(extra) + ["--"] + program_args
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"runner failed ({proc.returncode}):\n{proc.stderr[-3000:]}\n{proc.stdout[-2000:]}")
    results, json_text = [], []
    in_json = False
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            fields = dict(item.split("=", 1) for item in line.split()[2:])
            results.append({k: float(v) for k, v in fields.items()})
        elif line == "{":
            in_json = True
        if in_json:
            json_text.append(line)
    return results, json.loads("\n".join(json_text))


class PingPong(unittest.TestCase):
    def check(self, platform, params, np, peer, node_a, node_b, expect_hops):
        built = platformgen.build(platform, {k: str(v) for k, v in params.items()}, np)
        self.assertEqual(built.hops(node_a, node_b), expect_hops, "documented hop count")
        results, record = simulate(platform, params, np, ["pingpong", str(peer)] + [str(s) for s in SIZES])
        self.assertEqual(record["status"], "ok")
        self.assertEqual(len(results), len(SIZES))
        if node_a == node_b:
            alpha, bw = built.values["node_alpha"], built.values["node_bw"]
            hops = 1
        else:
            alpha, bw = built.values["alpha"], built.values["bw"]
            hops = expect_hops
        for res in results:
            expected = hops * alpha + res["bytes"] / bw
            error = abs(res["oneway"] - expected) / expected
            print(f"{platform} {params} ranks 0-{peer} hops {hops} l={int(res['bytes'])}: "
                  f"simulated {res['oneway']:.6e} s, model {expected:.6e} s, error {100 * error:.3f}%")
            self.assertLess(error, 0.01, f"{platform}: l={res['bytes']} simulated {res['oneway']} vs {expected}")
        return results

    def test_flat_cluster(self):
        self.check("cluster", {"nodes": 4, "cores": 1, "alpha": "2us", "bw": "4GBps"}, 4, 3, 0, 3, 2)

    def test_same_node_uses_node_alpha_and_node_bw(self):
        self.check("cluster", {"nodes": 2, "cores": 4, "node_alpha": "0.7us", "node_bw": "3GBps"}, 4, 3, 0, 0, 0)

    def test_supermuc_same_leaf_same_island_other_island(self):
        params = {"islands": 2, "cores": 1, "alpha": "1.5us", "beta": "0.25ns"}
        self.check("supermuc", params, 1024, 1, 0, 1, 2)
        self.check("supermuc", params, 1024, 16, 0, 16, 4)
        self.check("supermuc", params, 1024, 600, 0, 600, 6)

    def test_supermuc_default_cores_pack_16_ranks_per_node(self):
        # rank 16 is the first rank of node 1, under the same leaf switch as node 0
        self.check("supermuc", {"alpha": "1us"}, 32, 16, 0, 1, 2)

    def test_juqueen_torus_hops(self):
        params = {"dims": "4x4x4x4x2", "cores": 1, "alpha": "2us", "bw": "2GBps"}
        self.check("juqueen", params, 512, 1, 0, 1, 1)
        # rank 511 has coordinates (3,3,3,3,1): one hop back around each ring
        self.check("juqueen", params, 512, 511, 0, 511, 5)
        # rank 2 + 4*2 + 16*2 + 64*2 = 170 is (2,2,2,2,0): two hops in each of four rings
        self.check("juqueen", params, 512, 170, 0, 170, 8)

    def test_generic_fattree_and_torus(self):
        self.check("fattree", {"topo": "2;4,4;1,4;1,1", "cores": 1, "alpha": "1us"}, 16, 5, 0, 5, 4)
        self.check("torus", {"dims": "5x5", "cores": 1, "alpha": "3us"}, 25, 12, 0, 12, 4)

    def test_overhead_is_paid_by_sender_and_receiver(self):
        built = platformgen.build("cluster", {"nodes": "2", "cores": "1", "overhead": "1us"}, 2)
        results, _ = simulate("cluster", {"nodes": 2, "cores": 1, "overhead": "1us"}, 2, ["pingpong", "1", "1024"])
        expected = 2 * built.values["alpha"] + 1024 / built.values["bw"] + 2e-6
        self.assertLess(abs(results[0]["oneway"] - expected) / expected, 0.01)


class Pruning(unittest.TestCase):
    BYTES = 128 << 10

    def flows(self, pruning):
        params = {"islands": 2, "cores": 1, "pruning": pruning, "alpha": "1us", "bw": "5GBps"}
        built = platformgen.build("supermuc", {k: str(v) for k, v in params.items()}, 1024)
        # all 512 nodes of each island send to the next leaf switch of their own island ...
        intra, _ = simulate("supermuc", params, 1024, ["shift", str(self.BYTES), "16", "512"])
        # ... or all at once to the same node position in the other island
        inter, _ = simulate("supermuc", params, 1024, ["shift", str(self.BYTES), "512", "1024"])
        alpha = built.values["alpha"]
        intra_bw = self.BYTES / (intra[0]["time"] - 4 * alpha)
        inter_bw = self.BYTES / (inter[0]["time"] - 6 * alpha)
        print(f"pruning {pruning}: 512+512 concurrent flows of {self.BYTES} B: intra-island "
              f"{intra[0]['time']:.6e} s ({intra_bw / 1e9:.4f} GB/s per flow), inter-island "
              f"{inter[0]['time']:.6e} s ({inter_bw / 1e9:.4f} GB/s per flow), ratio {intra_bw / inter_bw:.4f}")
        self.assertLess(abs(intra_bw - built.values["bw"]) / built.values["bw"], 0.01,
                        "intra-island flows run at full link bandwidth (non-blocking island)")
        return intra_bw / inter_bw

    def test_four_to_one(self):
        self.assertAlmostEqual(self.flows(4), 4.0, delta=0.04)

    def test_pruning_parameter(self):
        self.assertAlmostEqual(self.flows(2), 2.0, delta=0.02)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: alpha_beta_test.py NETCHECK_SMPI_SO [unittest args]")
    PROGRAM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
