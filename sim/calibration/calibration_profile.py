"""Calibration profiles: what a real machine's MPI costs, in a form the simulator applies.

A profile is one JSON file (schema "janus-calibration/1", docs/calibration.md):

  name, machine, mpi {library, version}, date, how   what was measured where, and how
  platform {name, params}                            the generated platform that models it
  parameters {NAME: {value, unit, source}}           every fitted or published parameter
  samples [...]                                      the raw measurements behind the fits

`--calibration PROFILE` (a path or a built-in name from sim/calibration/profiles/) on the
runner, the benchmarks and the demo turns the parameters into SMPI options, platform
parameters and the environment of the charge hooks (core/cost, charge_preload.so).
"""

import json
import math
import os

HERE = os.path.dirname(os.path.realpath(__file__))
BUILTIN_DIR = os.path.join(HERE, "profiles")
SCHEMA = "janus-calibration/1"

# Parameters and what their value must look like.
PIECEWISE = ("os", "or", "ois")                       # [[min_bytes, seconds, seconds_per_byte], ...]
SECONDS = ("iprobe", "test")                          # one positive number
# Optional, one positive number: smpi/wtime (per MPI_Wtime call) and the charge of making one
# datatype (charge_preload.so, at MPI_Type_commit).
OPTIONAL_SECONDS = ("wtime", "type_create")
LINK = ("node_alpha", "node_bw", "alpha", "bw")       # platform parameters (s, B/s)
# Optional, [[min_bytes, factor], ...]: the links' bandwidth is multiplied by the factor of the
# segment a message's size falls in (1 below the first). SMPI applies os and or to a blocking
# message only below smpi/send-is-detached-thresh (64 KiB), so above it the link alone has to
# carry what the copies cost; this lets it do so without slowing the smaller messages.
BW_FACTOR = "bw_factor"
# Optional, the same form for the links' latency (a rendezvous' handshake).
LAT_FACTOR = "lat_factor"
CREATION = ("comm_create_group", "comm_split", "comm_dup", "comm_free")  # [A, B(, C)]: A + B log2 p + C p
# compute_<k>: [c0, c1] (c0 + c1 f(n)) or [[n, c0, c1], ...] from n = 0 (c0 + c1 (f(n) - f(start))
# in the last segment starting at or below n); message, immediate_message, collective_message,
# communicator and collective are RBC's own software work (core/cost). A profile without
# immediate_message or collective_message charges those messages (a blocking call's, an exchanging
# collective's run at once) as compute_message, as every profile did before they were apart.
KERNELS = ("sort", "partition", "select", "merge", "copy", "shuffle", "message", "immediate_message",
           "collective_message", "communicator", "collective", "reduce", "continuation")
MESSAGE_PATHS = ("immediate_message", "collective_message")
REQUIRED = PIECEWISE + SECONDS + ("node_alpha", "node_bw")

SELECTORS = ("default", "ompi", "mpich", "mvapich2", "impi", "automatic")


class ProfileError(Exception):
    pass


def builtin_names():
    if not os.path.isdir(BUILTIN_DIR):
        return []
    return sorted(f[:-5] for f in os.listdir(BUILTIN_DIR) if f.endswith(".json"))


def resolve(spec):
    """Path of a profile given as a path or a built-in name."""
    if os.path.isfile(spec):
        return os.path.abspath(spec)
    path = os.path.join(BUILTIN_DIR, spec + ".json")
    if os.path.isfile(path):
        return path
    raise ProfileError(f"calibration profile '{spec}' is neither a file nor a built-in "
                       f"(built-ins: {', '.join(builtin_names()) or 'none'})")


def _number(name, x, positive=False):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0 \
            or (positive and x <= 0):
        raise ProfileError(f"parameter {name}: {x!r} is not a {'positive' if positive else 'non-negative'} number")
    return float(x)


def _segments(name, v, want, segment):
    """The segments of a piecewise value (`want`: its form; `segment`: one segment's), each a list
    of segment's length starting at a larger size than the one before; raises ProfileError."""
    width = segment.count(",") + 1
    if not isinstance(v, list) or not v:
        raise ProfileError(f"parameter {name}: want {want}")
    last = -1
    for seg in v:
        if not isinstance(seg, list) or len(seg) != width:
            raise ProfileError(f"parameter {name}: segment {seg!r} is not {segment}")
        lo = int(_number(name, seg[0]))
        if lo <= last:
            raise ProfileError(f"parameter {name}: segments must start at increasing sizes")
        last = lo
    return v


def _cost_segments(name, v, want, segment, zero):
    """Segments of two costs each (a constant and a slope), the first starting at `zero`."""
    for seg in _segments(name, v, want, segment):
        _number(name, seg[1])
        _number(name, seg[2])
    if v[0][0] != 0:
        raise ProfileError(f"parameter {name}: the first segment must start at {zero}")


def validate(profile, where="profile"):
    """Raises ProfileError unless `profile` is a well-formed profile; returns it."""
    if not isinstance(profile, dict) or profile.get("schema") != SCHEMA:
        raise ProfileError(f"{where}: not a Janus calibration profile (schema must be '{SCHEMA}')")
    for key in ("name", "machine", "mpi", "date", "parameters"):
        if key not in profile:
            raise ProfileError(f"{where}: missing '{key}'")
    params = profile["parameters"]
    if not isinstance(params, dict):
        raise ProfileError(f"{where}: 'parameters' must be an object")
    for name in REQUIRED:
        if name not in params:
            raise ProfileError(f"{where}: missing parameter '{name}'")
    for name, entry in params.items():
        if not isinstance(entry, dict) or "value" not in entry or not str(entry.get("source") or "").strip():
            raise ProfileError(f"{where}: parameter '{name}' needs a value and a source")
        v = entry["value"]
        if name.startswith("compute_") and name[len("compute_"):] not in KERNELS:
            raise ProfileError(f"parameter {name}: unknown kernel (kernels: {', '.join(KERNELS)})")
        if name in PIECEWISE:
            _cost_segments(name, v, "[[min_bytes, seconds, seconds_per_byte], ...]", "[min_bytes, s, s/byte]", "0 bytes")
        elif name in SECONDS or name in OPTIONAL_SECONDS:
            # Never 0: a polling loop would livelock with the clock standing still.
            _number(name, v, positive=True)
        elif name in LINK:
            _number(name, v, positive=True)
        elif name.startswith("compute_") and v and isinstance(v[0], list):
            _cost_segments(name, v, "[[n, c0, c1], ...]", "[n, c0, c1]", "n = 0")
        elif name in CREATION or name.startswith("compute_"):
            lengths = (2, 3) if name in CREATION else (2,)
            if not isinstance(v, list) or len(v) not in lengths:
                raise ProfileError(f"parameter {name}: want " + ("[A, B] or [A, B, C]" if name in CREATION else "[c0, c1]")
                                   + " (seconds)")
            for x in v:
                _number(name, x)
        elif name in (BW_FACTOR, LAT_FACTOR):
            for seg in _segments(name, v, "[[min_bytes, factor], ...]", "[min_bytes, factor]"):
                _number(name, seg[1], positive=True)
        elif name == "coll_selector":
            if v not in SELECTORS:
                raise ProfileError(f"parameter coll_selector: '{v}' is not one of {', '.join(SELECTORS)}")
        elif name == "collectives":
            if not isinstance(v, dict) or not all(isinstance(a, str) and a for a in v.values()):
                raise ProfileError("parameter collectives: want {collective: algorithm}")
    return profile


def load(spec):
    path = resolve(spec)
    try:
        with open(path) as f:
            profile = json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        raise ProfileError(f"cannot read calibration profile {path}: {err}") from None
    validate(profile, path)
    profile["_path"] = path
    return profile


def value(profile, name, default=None):
    entry = profile["parameters"].get(name)
    return default if entry is None else entry["value"]


def _piecewise_cfg(segments):
    return ";".join(f"{int(lo)}:{c!r}:{b!r}" for lo, c, b in segments)


def piecewise_at(segments, size):
    """Value of a piecewise overhead at `size` bytes (the segment with the largest start <= size)."""
    chosen = segments[0]
    for seg in segments:
        if seg[0] <= size:
            chosen = seg
    return chosen[1] + chosen[2] * size


# SMPI's smpi/send-is-detached-thresh (its default, which calibrated runs keep unless they ask for
# rendezvous sends): os and or reach a blocking message only below it.
DETACHED_LIMIT = 65536


# SMPI (3.32) looks a message's network factors up at its size plus 16 bytes, and a factor
# listed at threshold T applies above T: a factor at 257 reached messages of 242 bytes and more,
# one at 1025 those of 1010 and more (measured; //sim/calibration:calibrated_model_test guards it).
SMPI_FACTOR_SIZE_OFFSET = 16


def smpi_factor_threshold(first_bytes):
    """SMPI's threshold for a profile factor that applies from `first_bytes` bytes on."""
    first_bytes = int(first_bytes)
    return first_bytes + SMPI_FACTOR_SIZE_OFFSET - 1 if first_bytes > 0 else 0


def factor_at(profile, name, size):
    """A piecewise factor (BW_FACTOR, LAT_FACTOR) at `size` bytes: 1 below its first segment."""
    factor = 1.0
    for lo, f in value(profile, name, []):
        if lo <= size:
            factor = f
    return factor


def pingpong_seconds(profile, size, alpha="node_alpha", bw="node_bw"):
    """The profile's own model of a blocking half round trip of `size` bytes on one link."""
    t = (value(profile, alpha) * factor_at(profile, LAT_FACTOR, size)
         + size / (value(profile, bw) * factor_at(profile, BW_FACTOR, size)))
    if size < DETACHED_LIMIT:
        t += piecewise_at(value(profile, "os"), size) + piecewise_at(value(profile, "or"), size)
    return t


def creation_seconds(profile, op, p):
    v = list(value(profile, op, [0.0, 0.0])) + [0.0]
    return v[0] + v[1] * math.log2(max(p, 1)) + v[2] * p


def size_term(kernel, n):
    """f(n) of a kernel's cost model (core/cost's size_term)."""
    if kernel == "sort":
        return n * math.log2(n) if n > 1 else 0.0
    return float(n)


def kernel_segments(v):
    """A compute_<k> value as segments [[n, c0, c1], ...]."""
    return v if v and isinstance(v[0], list) else [[0, v[0], v[1]]]


def kernel_seconds(profile, kernel, n):
    segments = kernel_segments(value(profile, "compute_" + kernel, [0.0, 0.0]))
    start, c0, c1 = [seg for seg in segments if seg[0] <= n][-1]
    return c0 + c1 * (size_term(kernel, n) - size_term(kernel, start))


def platform_params(profile):
    """Platform parameters (platformgen names -> text) the profile sets."""
    out = {}
    for name in LINK:
        v = value(profile, name)
        if v is not None:
            out[name] = f"{v!r}Bps" if name.endswith("bw") else f"{v!r}s"
    return out


def collective_cfg(profile):
    """SMPI collective options: explicit algorithms if the profile names them, else its selector."""
    algorithms = value(profile, "collectives")
    if algorithms:
        return [f"--cfg=smpi/{c}:{a}" for c, a in sorted(algorithms.items())]
    selector = value(profile, "coll_selector")
    return [f"--cfg=smpi/coll-selector:{selector}"] if selector else []


def smpi_cfg(profile):
    """SimGrid options for the profile's software costs (overheads, polling), deterministic mode."""
    opts = [f"--cfg=smpi/{name}:{_piecewise_cfg(value(profile, name))}" for name in PIECEWISE]
    opts += [f"--cfg=smpi/iprobe:{value(profile, 'iprobe')!r}", f"--cfg=smpi/test:{value(profile, 'test')!r}",
             # Probe and test costs stay fixed (SMPI would otherwise grow them in busy loops).
             "--cfg=smpi/grow-injected-times:no",
             "--cfg=smpi/simulate-computation:no"]
    if value(profile, "wtime") is not None:
        opts.append(f"--cfg=smpi/wtime:{value(profile, 'wtime')!r}")
    if value(profile, BW_FACTOR) or value(profile, LAT_FACTOR):
        # CM02 takes one factor for every size; SMPI's model (CM02 plus piecewise factors) takes
        # them by size. Its default factors are replaced: 1 wherever the profile names none.
        opts.append("--cfg=network/model:SMPI")
        for name, key in ((BW_FACTOR, "bw-factor"), (LAT_FACTOR, "lat-factor")):
            factors = value(profile, name) or []
            segments = factors if factors and factors[0][0] == 0 else [[0, 1.0]] + factors
            opts.append(f"--cfg=smpi/{key}:" + ";".join(f"{smpi_factor_threshold(lo)}:{f!r}"
                                                        for lo, f in reversed(segments)))
    return opts


def environment(profile):
    """Environment of the charge hooks: JANUS_CHARGE_* (preload), JANUS_COST_* (core/cost and the preload)."""
    env = {}
    for op in CREATION:
        v = value(profile, op)
        if v is not None:
            env["JANUS_CHARGE_" + op.upper()] = ",".join(repr(float(x)) for x in v)
    v = value(profile, "type_create")
    if v is not None:
        env["JANUS_CHARGE_TYPE_COMMIT"] = f"{float(v)!r},0"
    # The preload charges the library's own reductions for the algorithms this selector picks
    # (sim/calibration/reduction_model.hpp), at compute_reduce's cost.
    if not value(profile, "collectives") and value(profile, "coll_selector"):
        env["JANUS_CHARGE_COLL_SELECTOR"] = value(profile, "coll_selector")
    for k in KERNELS:
        v = value(profile, "compute_" + k)
        if v is None and k in MESSAGE_PATHS:
            v = value(profile, "compute_message")
        if v is not None:
            env["JANUS_COST_" + k.upper()] = ";".join(f"{int(n)}:{float(c0)!r},{float(c1)!r}"
                                                      for n, c0, c1 in kernel_segments(v))
    return env


def describe(profile):
    m = profile.get("mpi", {})
    return (f"calibration {profile['name']} ({profile.get('_path', '')}): {profile.get('machine', {}).get('description', '')}"
            f"; {m.get('library', '?')} {m.get('version', '')}; {profile.get('date', '')}").strip()


def summary(profile):
    """The JSON-able part of a profile a record carries (no samples)."""
    return {"name": profile["name"], "path": profile.get("_path"), "date": profile.get("date"),
            "mpi": profile.get("mpi"), "parameters": {k: v["value"] for k, v in profile["parameters"].items()}}
