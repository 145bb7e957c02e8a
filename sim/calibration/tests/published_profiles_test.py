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

    def test_profiles_are_valid_and_every_value_has_a_source(self):
        for name in ("supermuc", "juqueen"):
            profile = committed(name)
            cp.validate(profile, name)
            for key, param in profile["parameters"].items():
                with self.subTest(profile=name, parameter=key):
                    self.assertTrue(param["source"].strip())

    def test_overheads_have_no_step_the_measured_node_does_not_show(self):
        # Below the rendezvous limit a call's cost grows with its bytes; the old profiles jumped
        # from 0.2 to 1.75 us at 512 B, which no per-call measurement showed.
        for name in ("supermuc", "juqueen"):
            for key in ("os", "or", "ois"):
                segments = committed(name)["parameters"][key]["value"]
                with self.subTest(profile=name, parameter=key):
                    for (start, c, slope), (nxt, c_next, _) in zip(segments, segments[1:]):
                        if nxt >= cp.DETACHED_LIMIT:
                            break
                        end_of_segment = c + slope * (nxt - start)
                        self.assertLess(c_next, 2 * end_of_segment, f"a step at {nxt} B")


if __name__ == "__main__":
    unittest.main()
