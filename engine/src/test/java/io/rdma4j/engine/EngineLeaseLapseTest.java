package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
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
                        .get(5, java.util.concurrent.TimeUnit.SECONDS);
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
