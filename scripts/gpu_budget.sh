# Sourced by the GPU drivers (one command on the device machine may run 600 s): the call starts its clock
# here, and `cap LIMIT` prints LIMIT cut to what is left of BUDGET seconds (the driver's default, or the
# caller's BUDGET where less device time is left), at least 1, so every part's `timeout` fits the call.
T0=$(date +%s)
cap() {
  local left=$((T0 + BUDGET - $(date +%s)))
  if [ "$left" -lt "$1" ]; then echo $((left > 1 ? left : 1)); else echo "$1"; fi
}
