package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.FdWaiter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Completion queues with an fd wait object: a target that sleeps in the kernel still moves a peer's bytes (tcp). */
class WaitObjectTest {
    static final long SIZE = 8L << 20;
    static final long MARKER = 0x7a17L;
    static final long NO_WAKE_NANOS = 60_000_000_000L;

    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @Test
    void aTcpTargetAsleepOnItsQueueDescriptorIsWokenByIncomingBytes() throws Exception {
        try (InfoList infos = Libfabric.getinfo(Peer.hints("tcp"))) {
            Info info = infos.first();
            try (Peer initiator = new Peer(info, SIZE);
                    Peer target = new Peer(info, SIZE, false, true);
                    FdWaiter waiter = new FdWaiter(target.cq.waitFd())) {
                long peer = initiator.av.insert(target.ep.name());
                target.av.insert(initiator.ep.name());
                RemoteRegion remote = target.mr.remote();
                RmaTest.fill(initiator.buffer, SIZE, 5);
                // the target polls only after the kernel said its queue's endpoints have something: a descriptor
                // that did not announce the peer's bytes would leave it asleep for the full minute, and fail below
                CompletableFuture<int[]> targetSide = CompletableFuture.supplyAsync(() -> {
                    int waits = 0;
                    while (target.remoteData.isEmpty()) {
                        target.poll();
                        if (target.remoteData.isEmpty() && target.cq.tryWait()) {
                            waits++;
                            if (!waiter.await(NO_WAKE_NANOS)) {
                                return new int[] {waits, 0};
                            }
                        }
                    }
                    return new int[] {waits, 1};
                });
                long deadline = System.nanoTime() + 60_000_000_000L;
                post(initiator, () -> initiator.ep.write(initiator.mr, 0, SIZE, peer, remote, 0, 1), deadline);
                post(initiator, () -> initiator.ep.writeData(initiator.mr, 0, 8, MARKER, peer, remote, 0, 2), deadline);
                while (!initiator.contexts.contains(2L)) {
                    initiator.poll();
                    assertTrue(System.nanoTime() < deadline, "the initiator's writes did not complete in 60 s");
                }
                int[] r = targetSide.get(120, TimeUnit.SECONDS);
                assertEquals(1, r[1], "the target slept through the peer's bytes (" + r[0] + " waits)");
                assertTrue(r[0] > 0, "the target never blocked, so the wait was not exercised");
                assertEquals(MARKER, target.remoteData.get(0));
                RmaTest.verify(target.buffer, 0, SIZE, 5);
            }
        }
    }

    @Test
    void aQueueWithoutAWaitObjectSaysSoInsteadOfHandingOutADescriptor() {
        try (InfoList infos = Libfabric.getinfo(Peer.hints("tcp"));
                Peer p = new Peer(infos.first(), 4096)) {
            assertFalse(p.cq.hasWaitFd());
            var e = assertThrows(IllegalStateException.class, p.cq::waitFd);
            assertEquals("completion queue has no wait object: open it with waitFd true", e.getMessage());
            assertThrows(IllegalStateException.class, p.cq::tryWait);
        }
    }

    @Test
    void shmRefusesAnFdWaitObjectWithTheCallNamed() {
        try (InfoList infos = Libfabric.getinfo(Peer.hints("shm"))) {
            var e = assertThrows(FabricException.class, () -> new Peer(infos.first(), 4096, false, true));
            assertTrue(e.getMessage().contains("fi_cq_open(size=256, wait_obj=FI_WAIT_FD)"), e.getMessage());
        }
    }

    private static void post(Peer p, java.util.function.LongSupplier op, long deadline) {
        long rc;
        while ((rc = op.getAsLong()) == Endpoint.BACK_PRESSURED) {
            p.poll();
            assertTrue(System.nanoTime() < deadline, "still back-pressured after 60 s");
        }
        assertEquals(0, rc, "post failed: " + Libfabric.statusText(rc));
    }
}
