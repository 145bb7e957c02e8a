"""The benchmark record format: one JSON object per line, prefixed in program output."""

import json

PREFIX = "JANUS_BENCH "

# Fields every record has (bench/include/bench/harness.hpp writes them).
REQUIRED = ["benchmark", "backend", "platform", "platform_params", "rev", "p", "variant",
            "implementation", "warmup", "repetitions", "median_s", "min_s", "max_s"]
# Size field per benchmark (message size, n/p, or none for communicator creation).
SIZE_FIELD = {"collectives": "n", "p2p": "n", "split_bcast": "n", "sort": "n_per_pe", "merge": "n_per_pe"}
# A record that says why a measurement was not made ("skipped": reason, e.g. ticket #286's
# creation under SMPI, which has no intercommunicators) identifies the measurement, has no times.
IDENTITY = ["benchmark", "backend", "platform", "platform_params", "rev", "p", "variant",
            "implementation"]


def missing_fields(rec):
    if "skipped" in rec:
        missing = [k for k in IDENTITY if k not in rec]
        if not isinstance(rec["skipped"], str) or not rec["skipped"]:
            missing.append("skipped (the reason, a non-empty string)")
        if any(k in rec for k in ("median_s", "min_s", "max_s")):
            missing.append("no times in a skipped record")
        return missing
    missing = [k for k in REQUIRED if k not in rec]
    size = SIZE_FIELD.get(rec.get("benchmark"))
    if size and size not in rec:
        missing.append(size)
    if not missing:
        for k in ("median_s", "min_s", "max_s"):
            if not isinstance(rec[k], (int, float)) or rec[k] < 0:
                missing.append(f"{k} (a non-negative number)")
        if isinstance(rec["median_s"], (int, float)) and not (rec["min_s"] <= rec["median_s"] <= rec["max_s"]):
            missing.append("min_s <= median_s <= max_s")
        if not isinstance(rec["platform_params"], dict):
            missing.append("platform_params (an object)")
    return missing


def load(paths):
    """All records of the given .jsonl files; raises ValueError naming a malformed line."""
    out = []
    for path in paths:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{number}: not JSON: {err}") from None
                missing = missing_fields(rec)
                if missing:
                    raise ValueError(f"{path}:{number}: record lacks {', '.join(missing)}")
                out.append(rec)
    return out
