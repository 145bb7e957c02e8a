#!/usr/bin/env bash
# Runs one program on N ranks with either backend, and turns a run that does not finish in
# time into a failure that says "hang".
#   run_ranks.sh --backend mpi|smpi --np N [--timeout S] [--platform FILE] [--rendezvous]
#                [--pack K] [--mpi openmpi|mpich] [--launcher PATH] PROGRAM [ARGS...]
# The real MPI's launcher (backend mpi), first match wins: --mpi/--launcher; the environment's
# JANUS_MPI_FLAVOR/JANUS_MPI_LAUNCHER; mpi_launcher.env, which the build writes for the MPI it
# linked (sim/BUILD.bazel; Bazel tests carry it in their runfiles); else the flavour of the MPI
# library the program is linked against, with Debian's launcher for it. A program linked against
# one MPI family is never started by the other's launcher: that is an error, not a hang.
# --rendezvous (SMPI only): every send waits for its receiver (smpi/send-is-detached-thresh:0).
# SimGrid 3.32 removes each finished eager (detached) send from a list by linear search, which
# makes runs with many concurrent small sends quadratic (docs/scale.md); it also proves that the
# program never relies on MPI buffering its sends.
# --pack K (SMPI only): ranks K r .. K r + K - 1 on host node-r, as a cluster packs them (the
# platform's hosts must be named node-0, node-1, ...); without it smpirun puts rank i on the
# platform's i-th host.
set -euo pipefail

backend="" np="" limit=300 platform="" smpi_extra=() pack=0
flavor="${JANUS_MPI_FLAVOR:-}" launcher="${JANUS_MPI_LAUNCHER:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --rendezvous) smpi_extra+=(--cfg=smpi/send-is-detached-thresh:0); shift ;;
    --pack) pack="$2"; shift 2 ;;
    --mpi) flavor="$2"; shift 2 ;;
    --launcher) launcher="$2"; shift 2 ;;
    --) shift; break ;;
    -*) echo "run_ranks.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "run_ranks.sh: no program given" >&2; exit 2; }
[[ "$np" =~ ^[1-9][0-9]*$ ]] || { echo "run_ranks.sh: --np must be a positive integer, got '$np'" >&2; exit 2; }
program="$1"; shift

# Open MPI puts its session directory (with Unix sockets, whose paths are short) under TMPDIR.
scratch=$(mktemp -d /tmp/janus.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch"

# The MPI family a program is linked against, from its dynamic section: "openmpi", "mpich"
# (MPICH and its derivatives: libmpich, or libmpi.so.12 as in Intel MPI) or "" if unknown.
linked_flavor() {
  local needed
  needed=$(LC_ALL=C readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') || true
  if grep -q '^libmpich' <<<"$needed" || grep -qx 'libmpi\.so\.12' <<<"$needed"; then
    echo mpich
  elif grep -q '^libmpi\.so\.[0-9]' <<<"$needed"; then
    echo openmpi
  fi
}

choose_launcher() {
  local file key value
  # The build's launcher file names a flavour and its launcher together: used only when neither
  # was given.
  for file in "$(dirname "$0")/mpi_launcher.env" \
              "${TEST_SRCDIR:+$TEST_SRCDIR/${TEST_WORKSPACE:-janus}/sim/mpi_launcher.env}"; do
    [[ -z "$flavor" && -z "$launcher" && -n "$file" && -f "$file" ]] || continue
    while IFS='=' read -r key value; do
      case "$key" in
        JANUS_MPI_FLAVOR) flavor="$value" ;;
        JANUS_MPI_LAUNCHER) launcher="$value" ;;
      esac
    done <"$file"
    break
  done
  local linked
  linked=$(linked_flavor "$program")
  [[ -n "$flavor" ]] || flavor="${linked:-openmpi}"
  if [[ -n "$linked" && "$linked" != "$flavor" ]]; then
    echo "run_ranks.sh: $program is linked against $linked but the launcher chosen is $flavor's" \
         "(${launcher:-default}); build and run with the same MPI" >&2
    exit 2
  fi
  case "$flavor" in
    openmpi) : "${launcher:=$(command -v mpirun.openmpi || echo mpirun)}" ;;
    mpich) : "${launcher:=$(command -v mpiexec.mpich || echo mpiexec)}" ;;
    *) echo "run_ranks.sh: --mpi must be openmpi or mpich, got '$flavor'" >&2; exit 2 ;;
  esac
}

case "$backend" in
  mpi)
    choose_launcher
    if [[ $flavor == openmpi ]]; then
      # Inside Bazel's sandbox every mpirun has the same PID, hence the same job id; keep all of
      # Open MPI's shared-memory files in this run's own directory so concurrent tests never meet.
      export PMIX_MCA_gds=hash
      cmd=("$launcher" --allow-run-as-root --oversubscribe --bind-to none -np "$np"
           --mca btl self,vader --mca btl_vader_single_copy_mechanism none
           --mca btl_vader_backing_directory "$scratch" --mca shmem_mmap_backing_file_base_dir "$scratch"
           "$program" "$@")
    else
      # Hydra (MPICH, Intel MPI, MVAPICH) runs more ranks than cores and as root without options.
      cmd=("$launcher" -n "$np" "$program" "$@")
    fi
    ;;
  smpi)
    [[ -n "$platform" ]] || { echo "run_ranks.sh: smpi needs --platform" >&2; exit 2; }
    if [[ "$pack" != 0 ]]; then
      [[ "$pack" =~ ^[1-9][0-9]*$ ]] || { echo "run_ranks.sh: --pack must be a positive integer, got '$pack'" >&2; exit 2; }
      for ((r = 0; r < np; r++)); do echo "node-$((r / pack))"; done >"$scratch/hostfile"
      smpi_extra+=(-hostfile "$scratch/hostfile")
    fi
    cmd=(smpirun -np "$np" -platform "$platform" -no-privatize
         --cfg=contexts/guard-size:0 --cfg=contexts/stack-size:1024
         --cfg=smpi/simulate-computation:no "${smpi_extra[@]}"
         --log=root.thres:warning --log=ker_engine.thres:info
         "$program" "$@")
    ;;
  *) echo "run_ranks.sh: --backend must be mpi or smpi, got '$backend'" >&2; exit 2 ;;
esac

echo "+ ${cmd[*]}"
log="$scratch/output.log"
set +e
timeout -k 10 "$limit" "${cmd[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [[ $status -eq 124 || $status -eq 137 ]]; then
  echo "HANG: $backend run on $np ranks did not finish within ${limit}s" >&2
fi
# SimGrid ends a simulation with exit code 0 after MPI_Abort and after a deadlock (listing the
# blocked actors); both are failures.
if [[ $backend == smpi ]] && grep -q "MPI_Abort was called" "$log"; then
  echo "ABORTED: a simulated rank called MPI_Abort" >&2
  [[ $status -ne 0 ]] || status=1
elif [[ $backend == smpi ]] && grep -q "Deadlock detected" "$log"; then
  echo "DEADLOCK: the simulated ranks listed above were blocked forever" >&2
  [[ $status -ne 0 ]] || status=1
fi
exit $status
