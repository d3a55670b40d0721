package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.ForwardingEngineBackend;
import io.rdma4j.engine.spi.IdleWait;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * How long an idle progress thread sleeps in its backend's kernel wait: up to the 1 ms park cap, unless the wait
 * announces everything that could give the thread work ({@link IdleWait#announcesAll()}, ibverbs' completion channels),
 * where a thread with nothing of its own in flight lets it grow to the quiet cap (20 ms). Real tcp lanes and their wait
 * descriptors underneath; only the answer of {@code announcesAll} is the test's.
 */
class QuietWaitTest {
    private static final long PARK_CAP_NANOS = 1_000_000;
    private static final long QUIET_CAP_NANOS = 20_000_000;

    /** Passes everything to the backend's own wait and remembers the longest sleep the engine asked for. */
    private static final class LongestWait implements IdleWait {
        final IdleWait inner;
        final boolean announcesAll;
        final AtomicLong longest;

        LongestWait(IdleWait inner, boolean announcesAll, AtomicLong longest) {
            this.inner = inner;
            this.announcesAll = announcesAll;
            this.longest = longest;
        }

        @Override
        public boolean await(long nanos) {
            longest.accumulateAndGet(nanos, Math::max);
            return inner.await(nanos);
        }

        @Override
        public boolean announcesAll() {
            return announcesAll;
        }

        @Override
        public void wake() {
            inner.wake();
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    private static final class WaitingBackend extends ForwardingEngineBackend {
        final boolean announcesAll;
        final AtomicLong longest = new AtomicLong();

        WaitingBackend(EngineBackend inner, boolean announcesAll) {
            super(inner);
            this.announcesAll = announcesAll;
        }

        @Override
        public IdleWait idleWait(int[] lanes) {
            IdleWait w = inner.idleWait(lanes);
            return w == null ? null : new LongestWait(w, announcesAll, longest);
        }
    }

    /** Writes once through an engine whose waits answer {@code announcesAll}, then idles; the longest sleep asked. */
    private static long longestIdleWait(boolean announcesAll, long idleMillis) throws InterruptedException {
        WaitingBackend[] backend = new WaitingBackend[1];
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("quiet-a", 1)
                        .backendWrapper(x -> backend[0] = new WaitingBackend(x, announcesAll))
                        .build();
                TransferEngine b = TestEngines.tcp("quiet-b", 1).build()) {
            MemorySegment dst = arena.allocate(1 << 16);
            b.publish("sink", b.register(dst), Access.anyPeer());
            MemorySegment src = arena.allocate(1 << 16);
            TestEngines.fill(src, 7);
            a.write(a.register(src), 0, a.peer(b.name()).buffer("sink"), 0, src.byteSize(), TransferOptions.tag(1))
                    .join();
            assertNotNull(b.awaitTag(1, Duration.ofSeconds(30)), "the write's tag reached the target");
            assertEquals(-1, TestEngines.mismatch(src, 0, dst, 0, src.byteSize()), "the write landed");
            // the write and its notification are done: from here the initiator's thread has nothing of its own in
            // flight
            long deadline = System.nanoTime() + idleMillis * 1_000_000;
            while (System.nanoTime() < deadline && backend[0].longest.get() < QUIET_CAP_NANOS) {
                Thread.sleep(10);
            }
            return backend[0].longest.get();
        }
    }

    @Test
    void aThreadWithNothingInFlightSleepsUpToTheQuietCapWhereItsWaitAnnouncesAll() throws Exception {
        long longest = longestIdleWait(true, 5_000);
        assertEquals(QUIET_CAP_NANOS, longest, "longest wait asked, ns");
    }

    @Test
    void otherwiseItNeverSleepsPastTheParkCap() throws Exception {
        long longest = longestIdleWait(false, 300);
        assertTrue(longest > 0, "the tcp lanes have a kernel wait, and the idle thread used it");
        assertTrue(longest <= PARK_CAP_NANOS, "longest wait asked: " + longest + " ns");
    }
}
