#!/bin/bash
# Runs one MPI rank in a UTS namespace of its own whose host name says which node it is on
# (rank / RANKS_PER_NODE), so that one machine's real MPI shows several nodes to
# MPI_Get_processor_name, as RBC's from_mpi reads them. Needs root (unshare -u). With it the
# paths of JQuick that need several nodes run under real MPI and sanitizers, for example:
#
#   mpirun --oversubscribe -np 12 -x RANKS_PER_NODE=4 core/jquick/tests/fake_nodes.sh \
#     bazel-bin/core/jquick/jquick_test_mpi --sizes=0,1,7,64,1000
#   mpiexec.mpich -np 7 -env RANKS_PER_NODE 4 core/jquick/tests/fake_nodes.sh ...
#
# Open MPI still moves the data through shared memory; MPICH, which places ranks by host name,
# through its network module (much slower when oversubscribed).
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
if [[ -z "$rank" ]]; then
  echo "fake_nodes.sh: no rank in the environment (OMPI_COMM_WORLD_RANK or PMI_RANK)" >&2
  exit 2
fi
per_node=${RANKS_PER_NODE:-4}
exec unshare -u bash -c 'hostname "fake-node-$1" && shift && exec "$@"' -- "$((rank / per_node))" "$@"
