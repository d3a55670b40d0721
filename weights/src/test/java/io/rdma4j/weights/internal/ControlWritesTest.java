package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Control writes on real engines over libfabric shm: one that cannot go is dropped, as its contract says, but counted
 * and named; one after the subscriber's own lease lapsed goes over a fresh link.
 */
class ControlWritesTest {
    @Test
    void aWriteToAPublisherNobodyKnowsIsCountedAndNamed() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine engine = TransferEngine.builder()
                        .name("control-writes-" + ProcessHandle.current().pid())
                        .backend("libfabric")
                        .provider("shm")
                        .directory(dir.target(), Security.none())
                        .build()) {
            ControlWrites c = new ControlWrites(engine, engine.register(arena.allocate(8, 8)), "control");
            assertEquals(0, c.failures());
            assertNull(c.lastFailure());
            c.send("no-such-trainer", 0x1234);
            c.awaitSent();
            assertEquals(1, c.failures());
            assertTrue(c.lastFailure().startsWith("to no-such-trainer (tag 0x1234): "), c.lastFailure());
        }
    }

    /**
     * A directory on a clock the test moves expires the subscriber's lease (as after a stall) and not the publisher's:
     * both engines drop what they had with each other, and the control buffer looked up before names a link that is
     * gone. The next control write must still reach the publisher. Before it was looked up afresh, that write was
     * refused, counted as failed and lost (a confirmation lost so made a subscriber fail a version it had whole).
     */
    @Test
    void aWriteAfterTheSubscribersOwnLeaseLapsedGoesOverAFreshLink() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        AtomicLong skew = new AtomicLong();
        long pid = ProcessHandle.current().pid();
        try (DirectoryServer dir = DirectoryServer.builder()
                        .port(0)
                        .clock(() -> System.nanoTime() + skew.get())
                        .sweepInterval(Duration.ofMillis(100))
                        .start();
                Arena arena = Arena.ofShared();
                TransferEngine pub = TransferEngine.builder()
                        .name("lapse-pub-" + pid)
                        .backend("libfabric")
                        .provider("shm")
                        .directory(dir.target(), Security.none())
                        .lease(Duration.ofMinutes(5))
                        .build();
                TransferEngine sub = ShmEngines.engine("lapse-sub-" + pid, dir.target())) {
            LocalBuffer control = pub.register(arena.allocate(4096, 4096));
            pub.publish("control", control, Access.anyPeer());
            LocalBuffer in = sub.register(arena.allocate(4096, 4096));
            sub.publish("in", in, Access.anyPeer());
            LocalBuffer src = sub.register(arena.allocate(8, 8));
            LocalBuffer pubSrc = pub.register(arena.allocate(8, 8));
            ControlWrites c = new ControlWrites(sub, src, "control");
            c.send(pub.name(), 1);
            assertNotNull(pub.awaitTag(1, Duration.ofSeconds(10)), "the first control write did not arrive");
            RemoteBuffer subsView = sub.peer(pub.name()).buffer("control");
            RemoteBuffer pubsView = pub.peer(sub.name()).buffer("in");
            pub.write(pubSrc, 0, pubsView, 0, 8, TransferOptions.DEFAULT)
                    .future()
                    .get(10, TimeUnit.SECONDS);
            skew.addAndGet(Duration.ofSeconds(10).toNanos());
            // each side dropped its link to the other once a write over what it looked up before is refused
            awaitLost(sub, src, subsView);
            awaitLost(pub, pubSrc, pubsView);
            awaitAnnounced(sub, pub.name());
            c.send(pub.name(), 2);
            assertNotNull(
                    pub.awaitTag(2, Duration.ofSeconds(10)),
                    "the control write after the lapse did not arrive: " + c.lastFailure());
            assertEquals(0, c.failures(), c.lastFailure());
        }
    }

    private static void awaitLost(TransferEngine engine, LocalBuffer src, RemoteBuffer looked) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < end) {
            try {
                engine.write(src, 0, looked, 0, 8, TransferOptions.DEFAULT)
                        .future()
                        .get(10, TimeUnit.SECONDS);
            } catch (PeerLostException e) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(
                engine.name() + " never dropped its link to " + looked.peer().name());
    }

    /** Waits until {@code engine} announced itself again: the directory answers its lookups only then. */
    private static void awaitAnnounced(TransferEngine engine, String peer) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                engine.peer(peer).buffer("control");
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > end) {
                    throw new AssertionError(engine.name() + " was not announced again within 30 s", e);
                }
            }
            Thread.sleep(50);
        }
    }
}
