#!/bin/bash
# End-to-end run of ./rdma4j nvme and the checkpoint example against the test VM's kernel target, from the host:
#   ./rdma4j build && scripts/testvm serve --nvmet -- backends/nvmeof/src/test/scripts/cli-e2e.sh
# (serve forwards the guest's nvmet to 127.0.0.1 and sets RDMA4J_NVMET_TCP_HOST). Exit status 0 when every step behaved.
H=$RDMA4J_NVMET_TCP_HOST; N=${RDMA4J_NVMET_NQN:-nqn.2026-01.io.rdma4j:testvm}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../../.." && pwd)"; T=${TMPDIR:-/tmp}/rdma4j-nvme-e2e; mkdir -p "$T"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
CP="$ROOT/cli/target/rdma4j-cli.jar:$ROOT/cli/target/lib/*"
R() { "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$CP" io.rdma4j.cli.Main nvme "$@"; }
step() { echo; echo "### $*"; }
fail=0
step discover; R discover --tcp $H || fail=1
step identify; R identify --tcp $H --nqn $N || fail=1
head -c 3000000 /dev/urandom > $T/in.bin
step write; R write --tcp $H --nqn $N --nsid 1 --lba 2048 --in $T/in.bin || fail=1
step read; R read --tcp $H --nqn $N --nsid 1 --lba 2048 --length 3000320 --out $T/out.bin || fail=1
cmp -n 3000000 $T/in.bin $T/out.bin && echo "read back identical" || fail=1
step "read past the end (must fail, status named)"; R read --tcp $H --nqn $N --nsid 1 --lba 2097152 --length 4096 --out $T/x; rc=$?; echo "exit $rc"; [ $rc -ne 0 ] || fail=1
step "wrong NQN (must fail)"; R identify --tcp $H --nqn nqn.2026-01.io.rdma4j:nope; rc=$?; echo "exit $rc"; [ $rc -ne 0 ] || fail=1
head -c 1000001 /dev/urandom > $T/weights.bin; head -c 4096 /dev/urandom > $T/bias.bin
step checkpoint; R checkpoint --tcp $H --nqn $N --nsid 2 --lba 0 $T/weights.bin $T/bias.bin || fail=1
rm -rf $T/restored
step restore; R restore --tcp $H --nqn $N --nsid 2 --lba 0 --out $T/restored || fail=1
cmp $T/weights.bin $T/restored/weights.bin && cmp $T/bias.bin $T/restored/bias.bin && echo "restored files identical" || fail=1
step "restore where no checkpoint is (must fail)"; R restore --tcp $H --nqn $N --nsid 2 --lba 30000 --out $T/none; rc=$?; echo "exit $rc"; [ $rc -ne 0 ] || fail=1
step example; "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$ROOT/examples/target/classes:$CP" io.rdma4j.examples.NvmeCheckpoint $H $N 2 1000 || fail=1
echo; echo "CLI E2E: $([ $fail = 0 ] && echo PASSED || echo FAILED)"
exit $fail
