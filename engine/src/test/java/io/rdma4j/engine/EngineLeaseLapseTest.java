package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An engine whose lease lapsed (as after a stall longer than it) keeps working with its peers once it announced again:
 * a directory on a clock the test moves expires one engine's short lease (b's) and not the other's long one; the peer
 * drops its connections with the lapsed engine, and the lapsed engine, told of its own departure, drops its own. Tagged
 * writes then reach their target both ways, byte for byte, over tcp. Without the drop on the lapsed side its tagged
 * writes land, but their notifications go to an inbox the peer no longer has: the tag never arrives.
 *
 * <p>Each engine hears of the lapse through its directory watch, on a thread of its own, so one may hear late: the
 * lapsed engine itself, which has announced itself again by then, or its peer. A fault injector in front of the
 * directory holds that engine's watch events (as a starved watch thread would; its heartbeats go on) while the engine
 * that heard at once connects afresh and its tag arrives. When the late one hears of the lapse it drops what came
 * before it and keeps what was made since: the tags keep arriving over the link made after the lapse. Before, the late
 * news dropped that fresh inbox too (or the handshake had handed back the old one), and the tags were lost.
 */
class EngineLeaseLapseTest {
    @ParameterizedTest(name = "{0} hears of the lapse late")
    @ValueSource(strings = {"nobody", "the lapsed engine", "its peer"})
    void whatIsMadeAfterALapseStays(String late) throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        boolean nobody = late.equals("nobody");
        boolean lapsedIsLate = late.equals("the lapsed engine");
        AtomicLong skew = new AtomicLong();
        String dirName = "lapse-dir-" + ProcessHandle.current().pid() + "-" + late.replace(' ', '-');
        try (DirectoryServer dir = DirectoryServer.builder()
                        .inProcess(dirName)
                        .clock(() -> System.nanoTime() + skew.get())
                        .sweepInterval(Duration.ofMillis(100))
                        .start();
                WatchHoldingDirectory held = new WatchHoldingDirectory(dirName + "-held", dirName);
                Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("late-a", 1)
                        .directory(lapsedIsLate || nobody ? dir.target() : held.target(), Security.none())
                        .lease(Duration.ofMinutes(5))
                        .build();
                TransferEngine b = TestEngines.tcp("late-b", 1)
                        .directory(lapsedIsLate || nobody ? held.target() : dir.target(), Security.none())
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
                long tag = exchange(a, s, b, sb, src, inA, inB, 1, Duration.ofSeconds(10));
                // "now": hears of the lapse at once; "then": hears of it once the watch events are released
                TransferEngine now = lapsedIsLate ? a : b;
                TransferEngine then = lapsedIsLate ? b : a;
                LocalBuffer nowSrc = lapsedIsLate ? s : sb;
                LocalBuffer thenSrc = lapsedIsLate ? sb : s;
                MemorySegment thenIn = lapsedIsLate ? inB : inA;
                RemoteBuffer nowOld = now.peer(then.name()).buffer("in");
                RemoteBuffer thenOld = then.peer(now.name()).buffer("in");

                if (!nobody) {
                    held.hold();
                }
                skew.addAndGet(Duration.ofSeconds(10).toNanos()); // b's lease runs out on the directory's clock
                awaitLost(now, nowSrc, nowOld, "heard of b's lapse");
                // "now" connects afresh (after b announced itself again, where b is "then") and its tag arrives
                long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                tag = deliver(now, nowSrc, then, then.name(), src, thenIn, tag, end);
                RemoteBuffer fresh = now.peer(then.name()).buffer("in");

                held.release();
                awaitLost(then, thenSrc, thenOld, "heard of b's lapse once its watch went on");
                // the link made after the lapse still carries tags, for as long as "then" takes to retire what it
                // dropped (its progress threads each poll once more: milliseconds)
                long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                for (int i = 0; i < 3 || System.nanoTime() < until; i++, tag++) {
                    TestEngines.fill(src, tag);
                    now.write(nowSrc, fresh, TransferOptions.tag(tag)).future().get(10, TimeUnit.SECONDS);
                    assertNotNull(
                            then.awaitTag(tag, Duration.ofSeconds(10)),
                            "tag " + tag + " from " + now.name() + " over the link it made after b's lapse");
                    assertEquals(-1, TestEngines.mismatch(src, 0, thenIn, 0, src.byteSize()), "tag " + tag);
                    Thread.sleep(20);
                }
                // and both reach each other again, resolving afresh where their links were lost
                exchange(a, s, b, sb, src, inA, inB, tag, Duration.ofSeconds(30));
            }
        }
    }

    /** Writes 64 bytes from {@code from} over {@code link} until the link is lost (its engine dropped it). */
    private static void awaitLost(TransferEngine from, LocalBuffer src, RemoteBuffer link, String because)
            throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        String last = "never lost";
        while (System.nanoTime() < end) {
            try {
                from.write(src, 0, link, 0, 64, TransferOptions.DEFAULT)
                        .future()
                        .get(5, TimeUnit.SECONDS);
            } catch (PeerLostException e) {
                return;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof PeerLostException) {
                    return;
                }
                last = e.getCause().toString();
            }
            Thread.sleep(50);
        }
        throw new AssertionError(from.name() + " kept its link (" + last + "), though it should have " + because);
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
