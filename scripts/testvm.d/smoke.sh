# Guest job for `scripts/testvm smoke` (runs under /bin/sh in the guest, with the environment the init wrote).
# Proves the pieces the guest tests rely on: rxe0, RDMA traffic over it, the nvmet target over TCP and RDMA, and Java.
fails=0
check() { # name, command...
  name=$1; shift
  rm -f /tmp/check.note
  t0=$(date +%s)
  if "$@" > /tmp/check.log 2>&1; then
    echo "  ok   $name ($(( $(date +%s) - t0 )) s)"
    [ -f /tmp/check.note ] && sed 's/^/       /' /tmp/check.note
  else
    echo "  FAIL $name (exit $?)"; sed 's/^/       /' /tmp/check.log | tail -n 25
    fails=$((fails + 1))
  fi
}

rxe_listed() { ibv_devices | tee /dev/stderr | grep -qw rxe0; }

gid_index() { # the IPv4-mapped RoCE GID of rxe0 port 1
  for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
    case "$(cat "$g")" in *0000:ffff:*) echo "${g##*/}"; return 0 ;; esac
  done
  return 1
}

write_bw_loopback() { # ib_write_bw server and client in this guest, over rxe0 to its own address
  gid=$(gid_index) || { echo "no IPv4-mapped GID on rxe0"; return 1; }
  timeout 120 ib_write_bw -d rxe0 -x "$gid" -s 65536 -n 200 -F > /tmp/bw-server.log 2>&1 &
  server=$!
  sleep 2
  timeout 120 ib_write_bw -d rxe0 -x "$gid" -s 65536 -n 200 -F "$RDMA4J_TESTVM_ADDR" > /tmp/bw-client.log 2>&1; rc=$?
  cat /tmp/bw-client.log
  # The result table: the "#bytes ... BW average[MB/sec]" header and the line after it (emulated rxe: correctness, not speed).
  grep -A1 '#bytes' /tmp/bw-client.log > /tmp/check.note
  wait $server; src=$?
  echo "--- server:"; cat /tmp/bw-server.log
  [ $rc = 0 ] && [ $src = 0 ]
}

discover() { # transport
  [ -n "$RDMA4J_NVMET_NQN" ] || { echo "the init did not configure nvmet"; return 1; }
  timeout 60 nvme discover -t "$1" -a "$RDMA4J_TESTVM_ADDR" -s 4420 | tee /dev/stderr | grep -q "subnqn: *$RDMA4J_NVMET_NQN"
}

connect_write_read() { # the kernel initiator writes 1 MiB to namespace 1 over TCP and reads it back
  timeout 60 nvme connect -t tcp -a "$RDMA4J_TESTVM_ADDR" -s 4420 -n "$RDMA4J_NVMET_NQN" || return 1
  sleep 1
  # With native multipath (Debian's kernel) the disk hangs off the subsystem, else off the controller.
  dev=
  for d in /sys/class/nvme-subsystem/nvme-subsys* /sys/class/nvme/nvme*; do
    [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$RDMA4J_NVMET_NQN" ] || continue
    for n in "$d"/nvme*n1; do [ -e "$n" ] && dev=/dev/${n##*/} && break 2; done
  done
  ok=1
  if [ -b "$dev" ]; then
    head -c 1048576 /dev/urandom > /tmp/pattern
    dd if=/tmp/pattern of="$dev" bs=64k oflag=direct status=none &&
    dd if="$dev" of=/tmp/back bs=64k count=16 iflag=direct status=none &&
    cmp /tmp/pattern /tmp/back || ok=0
  else
    echo "no block device for $RDMA4J_NVMET_NQN after connect"; ls /sys/class/nvme/ /dev/nvme* 2>&1; ok=0
  fi
  nvme disconnect -n "$RDMA4J_NVMET_NQN"
  [ $ok = 1 ]
}

echo "testvm-guest smoke: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2/1024) " MiB" }' /proc/meminfo)"
check "ibv_devices lists rxe0" rxe_listed
check "ib_write_bw loopback over rxe0 (64 KiB x 200)" write_bw_loopback
check "nvme discover -t tcp -a $RDMA4J_TESTVM_ADDR -s 4420" discover tcp
check "nvme discover -t rdma -a $RDMA4J_TESTVM_ADDR -s 4420" discover rdma
check "nvme connect over TCP, 1 MiB written and read back" connect_write_read
java_version() { java -version 2>&1 | tee /tmp/check.note; }
check "java -version" java_version
echo "testvm-guest smoke: $fails failed"
[ $fails = 0 ]
