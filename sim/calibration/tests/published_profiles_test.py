"""The built-in supermuc and juqueen profiles are what published_profiles.py builds.

The generator holds the sources of every value; a profile edited by hand, or a generator changed
without writing the profiles again, would let the two disagree silently.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import calibration_profile as cp  # noqa: E402
import published_profiles  # noqa: E402


def committed(name):
    with open(os.path.join(os.path.dirname(HERE), "profiles", name + ".json")) as f:
        return json.load(f)


class PublishedProfiles(unittest.TestCase):
    def test_committed_profiles_are_the_generators(self):
        for build in (published_profiles.supermuc, published_profiles.juqueen):
            built = json.loads(json.dumps(build()))
            with self.subTest(profile=built["name"]):
                self.assertEqual(committed(built["name"]), built,
                                 "run python3 sim/calibration/published_profiles.py and commit profiles/")

    def test_profiles_are_valid(self):
        for name in ("supermuc", "juqueen"):
            with self.subTest(profile=name):
                cp.validate(committed(name), name)

    def test_overheads_have_no_step_the_measured_node_does_not_show(self):
        # Below the rendezvous limit a call's cost grows with its bytes; the old profiles jumped
        # from 0.2 to 1.75 us at 512 B, which no per-call measurement showed.
        for name in ("supermuc", "juqueen"):
            for key in ("os", "or", "ois"):
                segments = committed(name)["parameters"][key]["value"]
                with self.subTest(profile=name, parameter=key):
                    for (nxt, _, _) in segments[1:]:
                        if nxt >= cp.DETACHED_LIMIT:
                            break
                        before, at = cp.piecewise_at(segments, nxt - 1), cp.piecewise_at(segments, nxt)
                        self.assertLess(at, 2 * before, f"a step at {nxt} B")


if __name__ == "__main__":
    unittest.main()
