package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The data path allocates nothing on the Java heap: after a warm-up, 10,000 of each of write, writedata, writemsg of
 * two pieces, read, send + recv, inject + recv and inject-write, with the completion-queue reads that reap them, are
 * posted from this thread over a real provider while the JVM counts the bytes this thread allocates
 * ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}). Each operation carries its index as data and the
 * test checks it arrived, so the loop cannot pass by doing nothing.
 */
class PostPathAllocationTest {
    static final int OPS = 10_000;
    static final int WARMUP_ROUNDS = 3;
    /**
     * Bytes allowed over all {@link #OPS} operations of one kind. One allocation per operation costs at least 16 bytes
     * (an object header), 160,000 bytes in all; the slack covers one-off allocations the JVM may charge to this thread
     * once (a deoptimisation, a lazily built method handle), which do not grow with the count.
     */
    static final long SLACK_BYTES = 1024;

    static final long SIZE = 64;
    static final long DEADLINE_NANOS = 60_000_000_000L;

    enum Op {
        WRITE,
        WRITEDATA,
        WRITEMSG,
        READ,
        SEND_RECV,
        INJECT_RECV,
        INJECT_WRITE
    }

    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @ParameterizedTest(name = "{0}, FI_CONTEXT slots {1}")
    @CsvSource({"shm,false", "shm,true", "tcp,false", "tcp,true"})
    void postsAndCompletionReadsAllocateNothingPerOperation(String provider, boolean contextPool) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(
                mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled(),
                "this JVM does not count allocated bytes per thread");
        long tid = Thread.currentThread().threadId();
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Peer a = new Peer(infos.first(), 1 << 16, contextPool);
                Peer b = new Peer(infos.first(), 1 << 16, contextPool)) {
            Loop loop = new Loop(a, b);
            for (int round = 0; round < WARMUP_ROUNDS; round++) {
                for (Op op : Op.values()) {
                    loop.run(op, OPS);
                }
            }
            Map<Op, Long> allocated = new EnumMap<>(Op.class);
            for (Op op : Op.values()) {
                long before = mx.getThreadAllocatedBytes(tid);
                loop.run(op, OPS);
                long after = mx.getThreadAllocatedBytes(tid);
                allocated.put(op, after - before);
            }
            // the measurement itself: two back-to-back reads of the counter, to show it adds nothing of its own
            long before = mx.getThreadAllocatedBytes(tid);
            long empty = mx.getThreadAllocatedBytes(tid) - before;
            System.out.println(provider + (contextPool ? " with FI_CONTEXT slots" : "") + ": bytes allocated over "
                    + OPS
                    + " operations of each kind: " + allocated + " (counter read alone: " + empty + ")");
            for (Map.Entry<Op, Long> e : allocated.entrySet()) {
                assertTrue(
                        e.getValue() <= SLACK_BYTES,
                        e.getKey() + " over " + provider + " allocated " + e.getValue()
                                + " bytes in " + OPS + " operations (" + (double) e.getValue() / OPS
                                + " per operation): "
                                + allocated);
            }
            assertEquals(0, a.ep.contextPool() == null ? 0 : a.ep.contextPool().inUse(), "context slots leaked");
        }
    }

    /**
     * One operation in flight at a time, reaped before the next, so every completion is accounted for. Primitive fields
     * only: the loop must not allocate for its own bookkeeping either.
     */
    static final class Loop {
        final Peer a;
        final Peer b;
        final long peer;
        final long back;
        final RemoteRegion remote;
        final long injectSize;
        long aCompletions;
        long aLastContext;
        long bCompletions;
        long bLastContext;
        long bRemoteData;
        long bLastData;
        long next = 1;
        /** Two pieces, each local one going to the other's place at the target. */
        final long[] localPieces = {16384, 20480};

        final long[] remotePieces = {20480, 16384};
        final long[] pieceLengths = {SIZE, SIZE};

        Loop(Peer a, Peer b) {
            this.a = a;
            this.b = b;
            this.peer = a.av.insert(b.ep.name());
            this.back = b.av.insert(a.ep.name());
            this.remote = b.mr.remote();
            this.injectSize = a.domain.info().injectSize();
            assertTrue(injectSize >= 8, "provider offers inject of 8 bytes: " + a.domain.info());
        }

        void run(Op op, int n) {
            for (int i = 0; i < n; i++) {
                long v = next++;
                switch (op) {
                    case WRITE -> write(v);
                    case WRITEDATA -> writeData(v);
                    case WRITEMSG -> writeMsg(v);
                    case READ -> read(v);
                    case SEND_RECV -> sendRecv(v, false);
                    case INJECT_RECV -> sendRecv(v, true);
                    case INJECT_WRITE -> injectWrite(v);
                }
            }
        }

        private void write(long v) {
            a.buffer.set(ValueLayout.JAVA_LONG, 0, v);
            long rc;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while ((rc = a.ep.write(a.mr, 0, SIZE, peer, remote, 1024, v)) == Endpoint.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "fi_write");
            long want = aCompletions + 1;
            while (aCompletions < want) {
                poll(deadline);
            }
            expect(aLastContext, v, "fi_write completion context");
        }

        private void writeData(long v) {
            a.buffer.set(ValueLayout.JAVA_LONG, 0, v);
            long rc;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            long data = v & 0xFFFF_FFFFL;
            while ((rc = a.ep.writeData(a.mr, 0, SIZE, data, peer, remote, 2048, v)) == Endpoint.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "fi_writedata");
            long wantA = aCompletions + 1;
            long wantB = bRemoteData + 1;
            while (aCompletions < wantA || bRemoteData < wantB) {
                poll(deadline);
            }
            expect(aLastContext, v, "fi_writedata completion context");
            expect(bLastData, data, "remote CQ data");
            // the remote CQ data comes after the bytes, so they are visible now
            expect(b.buffer.get(ValueLayout.JAVA_LONG, 2048), v, "bytes of fi_writedata at the target");
        }

        private void writeMsg(long v) {
            a.buffer.set(ValueLayout.JAVA_LONG, 16384, v);
            a.buffer.set(ValueLayout.JAVA_LONG, 20480, ~v);
            long rc;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while ((rc = a.ep.writeMsg(a.mr, localPieces, remotePieces, pieceLengths, 0, 2, peer, remote, v))
                    == Endpoint.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "fi_writemsg");
            long want = aCompletions + 1;
            while (aCompletions < want
                    || b.buffer.get(ValueLayout.JAVA_LONG, 20480) != v
                    || b.buffer.get(ValueLayout.JAVA_LONG, 16384) != ~v) {
                poll(deadline);
            }
            expect(aLastContext, v, "fi_writemsg completion context");
        }

        private void read(long v) {
            b.buffer.set(ValueLayout.JAVA_LONG, 4096, v);
            long rc;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while ((rc = a.ep.read(a.mr, 4096, SIZE, peer, remote, 4096, v)) == Endpoint.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "fi_read");
            long want = aCompletions + 1;
            while (aCompletions < want) {
                poll(deadline);
            }
            expect(aLastContext, v, "fi_read completion context");
            expect(a.buffer.get(ValueLayout.JAVA_LONG, 4096), v, "bytes fi_read brought back");
        }

        private void sendRecv(long v, boolean inject) {
            long rc;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while ((rc = b.ep.recv(b.mr, 8192, SIZE, back, -v)) == Endpoint.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "fi_recv");
            a.buffer.set(ValueLayout.JAVA_LONG, 8192, v);
            long wantA = aCompletions + (inject ? 0 : 1);
            long wantB = bCompletions + 1;
            if (inject) {
                while ((rc = a.ep.inject(a.mr, 8192, 8, peer)) == Endpoint.BACK_PRESSURED) {
                    poll(deadline);
                }
                posted(rc, "fi_inject");
            } else {
                while ((rc = a.ep.send(a.mr, 8192, SIZE, peer, v)) == Endpoint.BACK_PRESSURED) {
                    poll(deadline);
                }
                posted(rc, "fi_send");
            }
            while (aCompletions < wantA || bCompletions < wantB) {
                poll(deadline);
            }
            if (!inject) {
                expect(aLastContext, v, "fi_send completion context");
            }
            expect(bLastContext, -v, "fi_recv completion context");
            expect(b.buffer.get(ValueLayout.JAVA_LONG, 8192), v, "message bytes in the posted receive");
        }

        private void injectWrite(long v) {
            a.buffer.set(ValueLayout.JAVA_LONG, 12288, v);
            long rc;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while ((rc = a.ep.injectWrite(a.mr, 12288, 8, peer, remote, 12288)) == Endpoint.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "fi_inject_write");
            // no completion anywhere: progress both sides until the bytes land
            while (b.buffer.get(ValueLayout.JAVA_LONG, 12288) != v) {
                poll(deadline);
            }
        }

        /** Reads both queues (manual-progress providers move data only while the target polls too). */
        private void poll(long deadline) {
            Completions ca = a.completions;
            int n = a.cq.read(ca);
            for (int i = 0; i < n; i++) {
                aCompletions++;
                aLastContext = ca.context(i);
            }
            Completions cb = b.completions;
            n = b.cq.read(cb);
            for (int i = 0; i < n; i++) {
                if (cb.hasRemoteData(i)) {
                    bRemoteData++;
                    bLastData = cb.data(i);
                } else {
                    bCompletions++;
                    bLastContext = cb.context(i);
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no progress for " + DEADLINE_NANOS / 1_000_000_000L + " s: " + aCompletions
                        + " completions at the initiator, " + bCompletions + " receives and " + bRemoteData
                        + " remote CQ data at the target");
            }
        }

        private static void posted(long rc, String op) {
            if (rc != 0) {
                throw new AssertionError(op + " failed: " + Libfabric.statusText(rc));
            }
        }

        private static void expect(long got, long want, String what) {
            if (got != want) {
                throw new AssertionError(what + ": expected " + want + " but was " + got);
            }
        }
    }
}
