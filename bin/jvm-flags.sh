# Sourced by bin/conveyor and the benches: sets CONVEYOR_JVM_FLAGS, the JVM flags a node runs with, unless it is
# set already (even empty: the JVM's defaults). On two cores or fewer, C1 alone (-XX:TieredStopAtLevel=1): the
# C2 compiler's thread takes half a core while the node is young (docs/decisions.md, "The launcher carries the JIT
# flag"); with more cores, the JVM's defaults.
if [[ -z ${CONVEYOR_JVM_FLAGS+set} ]]; then
  CONVEYOR_JVM_FLAGS=""
  if (( $(nproc 2>/dev/null || echo 1) <= 2 )); then
    CONVEYOR_JVM_FLAGS="-XX:TieredStopAtLevel=1"
  fi
fi
