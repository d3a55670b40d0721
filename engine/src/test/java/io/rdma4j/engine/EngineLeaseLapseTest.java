package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.PeerEvent;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * An engine whose lease lapsed (as after a stall longer than it) keeps working with its peers once it announced again:
 * a directory on a clock the test moves expires one engine's short lease and not the other's long one; the peer drops
 * its connections with the lapsed engine, and the lapsed engine, told of its own departure, drops its own. Tagged
 * writes then reach their target both ways, byte for byte, over tcp. Without the drop on the lapsed side its tagged
 * writes land, but their notifications go to an inbox the peer no longer has: the tag never arrives (this test then
 * fails on b -> a).
 */
class EngineLeaseLapseTest {
    @Test
    void tagsReachBothWaysAfterOneEnginesLeaseLapsed() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        AtomicLong skew = new AtomicLong();
        try (DirectoryServer dir = DirectoryServer.builder()
                        .port(0)
                        .clock(() -> System.nanoTime() + skew.get())
                        .sweepInterval(Duration.ofMillis(100))
                        .start();
                Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("lapse-a", 1)
                        .directory(dir.target(), Security.none())
                        .lease(Duration.ofMinutes(5))
                        .build();
                TransferEngine b = TestEngines.tcp("lapse-b", 1)
                        .directory(dir.target(), Security.none())
                        .lease(Duration.ofSeconds(3))
                        .build()) {
            MemorySegment src = TestEngines.allocate(arena, 1 << 20);
            MemorySegment inA = TestEngines.allocate(arena, 1 << 20);
            MemorySegment inB = TestEngines.allocate(arena, 1 << 20);
            try (LocalBuffer s = a.register(src);
                    LocalBuffer sb = b.register(src);
                    LocalBuffer la = a.register(inA);
                    LocalBuffer lb = b.register(inB)) {
                a.publish("in", la, Access.anyPeer());
                b.publish("in", lb, Access.anyPeer());
                long tag = 1;
                tag = exchange(a, s, b, sb, src, inA, inB, tag, Duration.ofSeconds(10));
                // b's lease runs out on the directory's clock, a's does not: a sees b leave, b sees itself leave
                skew.addAndGet(Duration.ofSeconds(10).toNanos());
                exchange(a, s, b, sb, src, inA, inB, tag, Duration.ofSeconds(30));
            }
        }
    }

    /**
     * The lapsed engine hears of its own lapse only after it announced itself again and a peer connected to it afresh
     * (its watch runs late, held back by a fault injector in front of the directory; its heartbeats do not): what the
     * peer made after the lapse stays, so its tags keep arriving over the connection it made then. Before announcements
     * were numbered the late news dropped that fresh inbox too (or the handshake handed back the old one) and the
     * peer's later tags were lost.
     */
    @Test
    void aLapseHeardOfAfterAnnouncingAgainKeepsWhatPeersMadeSince() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        AtomicLong skew = new AtomicLong();
        String dirName = "late-lapse-dir-" + ProcessHandle.current().pid();
        try (DirectoryServer dir = DirectoryServer.builder()
                        .inProcess(dirName)
                        .clock(() -> System.nanoTime() + skew.get())
                        .sweepInterval(Duration.ofMillis(100))
                        .start();
                WatchHoldingDirectory late = new WatchHoldingDirectory(dirName + "-late", dirName);
                Rendezvous observer = Rendezvous.connect(dir.target(), Security.none());
                Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("late-a", 1)
                        .directory(dir.target(), Security.none())
                        .lease(Duration.ofMinutes(5))
                        .build();
                TransferEngine b = TestEngines.tcp("late-b", 1)
                        .directory(late.target(), Security.none())
                        .lease(Duration.ofSeconds(3))
                        .build()) {
            BlockingQueue<PeerEvent> aboutB = new LinkedBlockingQueue<>();
            observer.watch(
                    e -> {
                        if (e.peer() != null && e.peer().name().equals(b.name())) {
                            aboutB.add(e);
                        }
                    },
                    err -> {});
            MemorySegment src = TestEngines.allocate(arena, 1 << 20);
            MemorySegment inA = TestEngines.allocate(arena, 1 << 20);
            MemorySegment inB = TestEngines.allocate(arena, 1 << 20);
            try (LocalBuffer s = a.register(src);
                    LocalBuffer sb = b.register(src);
                    LocalBuffer la = a.register(inA);
                    LocalBuffer lb = b.register(inB)) {
                a.publish("in", la, Access.anyPeer());
                b.publish("in", lb, Access.anyPeer());
                long tag = exchange(a, s, b, sb, src, inA, inB, 1, Duration.ofSeconds(10));
                RemoteBuffer bToA = b.peer(a.name()).buffer("in");

                late.hold();
                skew.addAndGet(Duration.ofSeconds(10).toNanos());
                // the directory expires b, and b's next heartbeat announces it again; b's watch tells it of neither
                PeerEvent left = next(aboutB, PeerEvent.Kind.LEFT);
                assertEquals(PeerEvent.Reason.EXPIRED, left.reason());
                PeerEvent back = next(aboutB, PeerEvent.Kind.JOINED);
                assertTrue(back.revision() > left.revision(), back + " after " + left);
                // a (which saw b leave) connects to b afresh and its tag arrives
                tag = deliver(
                        a,
                        s,
                        b,
                        b.name(),
                        src,
                        inB,
                        tag,
                        System.nanoTime() + Duration.ofSeconds(30).toNanos());
                RemoteBuffer aToB = a.peer(b.name()).buffer("in");

                late.release();
                // b hears of its lapse now: its link to a, made before it, is lost
                long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                String last = "b's link to a was never dropped";
                boolean lost = false;
                while (!lost && System.nanoTime() < end) {
                    try {
                        b.write(sb, 0, bToA, 0, 64, TransferOptions.DEFAULT)
                                .future()
                                .get(5, TimeUnit.SECONDS);
                        Thread.sleep(50);
                    } catch (PeerLostException e) {
                        lost = true;
                    } catch (ExecutionException e) {
                        lost = e.getCause() instanceof PeerLostException;
                        last = e.getCause().toString();
                    }
                }
                assertTrue(lost, last);
                // what a made with b after the lapse still carries a's tags, over the same link, for as long as b
                // takes to retire what it dropped (its progress threads each poll once more: milliseconds)
                long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                for (int i = 0; i < 3 || System.nanoTime() < until; i++, tag++) {
                    TestEngines.fill(src, tag);
                    a.write(s, aToB, TransferOptions.tag(tag)).future().get(10, TimeUnit.SECONDS);
                    assertNotNull(
                            b.awaitTag(tag, Duration.ofSeconds(10)),
                            "tag " + tag + " from a over the link it made after b's lapse");
                    assertEquals(-1, TestEngines.mismatch(src, 0, inB, 0, src.byteSize()), "tag " + tag);
                    Thread.sleep(20);
                }
                // and b reaches a again once it resolves it afresh
                exchange(a, s, b, sb, src, inA, inB, tag, Duration.ofSeconds(30));
            }
        }
    }

    private static PeerEvent next(BlockingQueue<PeerEvent> events, PeerEvent.Kind kind) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (long left; (left = end - System.nanoTime()) > 0; ) {
            PeerEvent e = events.poll(left, TimeUnit.NANOSECONDS);
            if (e != null && e.kind() == kind) {
                return e;
            }
        }
        throw new AssertionError("no " + kind + " event within 30 s");
    }

    /**
     * Writes 1 MiB with a tag from a to b and from b to a, each a fresh pattern, retrying (resolving the peer again)
     * until the tag arrives and the bytes match or {@code within} passed. {@return the next tag}
     */
    private static long exchange(
            TransferEngine a,
            LocalBuffer s,
            TransferEngine b,
            LocalBuffer sb,
            MemorySegment src,
            MemorySegment inA,
            MemorySegment inB,
            long tag,
            Duration within)
            throws Exception {
        long end = System.nanoTime() + within.toNanos();
        tag = deliver(a, s, b, b.name(), src, inB, tag, end);
        return deliver(b, sb, a, a.name(), src, inA, tag, end);
    }

    private static long deliver(
            TransferEngine from,
            LocalBuffer s,
            TransferEngine to,
            String toName,
            MemorySegment src,
            MemorySegment landing,
            long tag,
            long end)
            throws Exception {
        String last = "nothing tried";
        while (System.nanoTime() < end) {
            TestEngines.fill(src, tag);
            try {
                from.write(s, from.peer(toName).buffer("in"), TransferOptions.tag(tag))
                        .future()
                        .get(5, TimeUnit.SECONDS);
                if (to.awaitTag(tag, Duration.ofSeconds(2)) != null) {
                    assertEquals(-1, TestEngines.mismatch(src, 0, landing, 0, src.byteSize()), "tag " + tag);
                    return tag + 1;
                }
                last = "tag " + tag + " written but never delivered";
            } catch (Exception e) {
                last = e.toString(); // the peer is being re-announced, or the link was just lost: resolve again
            }
            tag++;
            Thread.sleep(200);
        }
        throw new AssertionError(from.name() + " -> " + toName + ": " + last);
    }
}
