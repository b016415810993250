# Sourced by bin/conveyor and the benches: sets CONVEYOR_JVM_FLAGS, the JVM flags a node runs with, unless it is
# set already (even empty: the JVM's defaults). On two CPUs or fewer, C1 alone (-XX:TieredStopAtLevel=1): the C2
# compiler's thread takes half a core while the node is young (docs/decisions.md, "The launcher carries the JIT
# flag"); with more, or when the count is unknown, the JVM's defaults. The count is the CPUs this process may use
# (nproc, else getconf), or fewer when a cgroup's CPU quota says so (a container), as the JVM counts them.
conveyor_cpus() {
  local n quota period
  n=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)
  if [[ -r /sys/fs/cgroup/cpu.max ]] && read -r quota period < /sys/fs/cgroup/cpu.max && [[ $quota =~ ^[0-9]+$ ]] \
      && (( period > 0 )); then
    quota=$(( (quota + period - 1) / period ))
    if (( quota < n || n == 0 )); then
      n=$quota
    fi
  fi
  echo "$n"
}
if [[ -z ${CONVEYOR_JVM_FLAGS+set} ]]; then
  CONVEYOR_JVM_FLAGS=""
  conveyor_cpu_count=$(conveyor_cpus)
  if (( conveyor_cpu_count > 0 && conveyor_cpu_count <= 2 )); then
    CONVEYOR_JVM_FLAGS="-XX:TieredStopAtLevel=1"
  fi
fi
