package io.rdma4j.libfabric.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.libfabric.Libfabric;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine's path into libfabric (the SPI's postWrite, postWriteImmediate, postRead and poll, which the engine's
 * progress threads call per chunk) allocates nothing on the Java heap: after a warm-up, 10,000 of each are posted and
 * polled from this thread between two backends over a real provider while the JVM counts this thread's allocated bytes.
 * Each operation carries its index as data and the test checks it arrived, so the loop cannot pass by doing nothing.
 */
class EngineBackendAllocationTest {
    static final int OPS = 10_000;
    /** As in PostPathAllocationTest: one allocation per operation would be 160,000 bytes at least. */
    static final long SLACK_BYTES = 1024;

    static final long DEADLINE_NANOS = 60_000_000_000L;

    enum Op {
        WRITE,
        WRITE_IMMEDIATE,
        READ
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void postsAndPollsThroughTheSpiAllocateNothingPerOperation(String provider) {
        assumeTrue(Libfabric.isAvailable(), "libfabric not installed");
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(
                mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled(),
                "this JVM does not count allocated bytes per thread");
        long tid = Thread.currentThread().threadId();
        BackendConfig config = new BackendConfig(provider, 1, 64);
        try (Arena arena = Arena.ofShared();
                LibfabricEngineBackend a = LibfabricEngineBackend.open(config);
                LibfabricEngineBackend b = LibfabricEngineBackend.open(config);
                BackendRegistration ra = a.register(arena.allocate(1 << 16, 4096));
                BackendRegistration rb = b.register(arena.allocate(1 << 16, 4096))) {
            Loop loop = new Loop(a, b, ra, rb);
            for (int round = 0; round < 3; round++) {
                for (Op op : Op.values()) {
                    loop.run(op, OPS);
                }
            }
            StringBuilder report = new StringBuilder();
            long worst = 0;
            for (Op op : Op.values()) {
                long before = mx.getThreadAllocatedBytes(tid);
                loop.run(op, OPS);
                long bytes = mx.getThreadAllocatedBytes(tid) - before;
                report.append(op).append('=').append(bytes).append(' ');
                worst = Math.max(worst, bytes);
            }
            System.out.println(
                    provider + " engine SPI: bytes allocated over " + OPS + " operations of each kind: " + report);
            assertTrue(
                    worst <= SLACK_BYTES,
                    provider + ": the engine SPI path allocated over " + OPS + " operations: " + report);
        }
    }

    /** One operation in flight at a time, reaped before the next; primitive bookkeeping only. */
    static final class Loop {
        final EngineBackend a;
        final EngineBackend b;
        final int ca;
        final int cb;
        final BackendRegistration ra;
        final MemorySegment local;
        final MemorySegment remote;
        final long remoteBase;
        final long remoteKey;
        final Completions outA = new Completions(64);
        final Completions outB = new Completions(64);
        long aLocal;
        long aLastContext;
        long bImmediates;
        int bLastImmediate;
        long next = 1;

        Loop(EngineBackend a, EngineBackend b, BackendRegistration ra, BackendRegistration rb) {
            this.a = a;
            this.b = b;
            this.ca = a.prepareConnection(0);
            this.cb = b.prepareConnection(0);
            a.connect(0, ca, b.endpointInfo(0, cb));
            b.connect(0, cb, a.endpointInfo(0, ca));
            this.ra = ra;
            this.local = MemorySegment.ofAddress(ra.address()).reinterpret(ra.length());
            this.remote = MemorySegment.ofAddress(rb.address()).reinterpret(rb.length());
            this.remoteBase = rb.remoteAddress(0);
            this.remoteKey = rb.remoteKey(0);
        }

        void run(Op op, int n) {
            for (int i = 0; i < n; i++) {
                long v = next++;
                switch (op) {
                    case WRITE -> write(v, false);
                    case WRITE_IMMEDIATE -> write(v, true);
                    case READ -> read(v);
                }
            }
        }

        private void write(long v, boolean immediate) {
            long off = immediate ? 2048 : 1024;
            local.set(ValueLayout.JAVA_LONG, off, v);
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            int imm = (int) v & 0x7FFF_FFFF;
            long from = ra.address() + off;
            long to = remoteBase + off;
            int rc;
            while ((rc = immediate
                            ? a.postWriteImmediate(0, ca, ra.handle(), from, 64, to, remoteKey, imm, v)
                            : a.postWrite(0, ca, ra.handle(), from, 64, to, remoteKey, v))
                    == EngineBackend.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, immediate ? "postWriteImmediate" : "postWrite");
            long wantA = aLocal + 1;
            long wantB = bImmediates + (immediate ? 1 : 0);
            while (aLocal < wantA || bImmediates < wantB) {
                poll(deadline);
            }
            expect(aLastContext, v, "local completion context");
            if (immediate) {
                expect(bLastImmediate, imm, "immediate at the target");
                expect(remote.get(ValueLayout.JAVA_LONG, off), v, "bytes at the target when the immediate arrived");
            }
        }

        private void read(long v) {
            remote.set(ValueLayout.JAVA_LONG, 4096, v);
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            int rc;
            while ((rc = a.postRead(0, ca, ra.handle(), ra.address() + 4096, 64, remoteBase + 4096, remoteKey, v))
                    == EngineBackend.BACK_PRESSURED) {
                poll(deadline);
            }
            posted(rc, "postRead");
            long want = aLocal + 1;
            while (aLocal < want) {
                poll(deadline);
            }
            expect(aLastContext, v, "read completion context");
            expect(local.get(ValueLayout.JAVA_LONG, 4096), v, "bytes the read brought back");
        }

        private void poll(long deadline) {
            int n = a.poll(0, outA);
            for (int i = 0; i < n; i++) {
                check(outA, i);
                if (outA.kind[i] == Completions.LOCAL) {
                    aLocal++;
                    aLastContext = outA.context[i];
                }
            }
            n = b.poll(0, outB);
            for (int i = 0; i < n; i++) {
                check(outB, i);
                if (outB.kind[i] == Completions.REMOTE_IMMEDIATE) {
                    bImmediates++;
                    bLastImmediate = outB.immediate[i];
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no progress for " + DEADLINE_NANOS / 1_000_000_000L + " s: " + aLocal
                        + " local completions, " + bImmediates + " immediates; lane errors: " + a.laneError(0) + ", "
                        + b.laneError(0));
            }
        }

        private static void check(Completions c, int i) {
            if (c.status[i] != 0) {
                throw new AssertionError("completion failed: status " + c.status[i] + ": " + c.errorText[i]);
            }
        }

        private void posted(int rc, String op) {
            if (rc != EngineBackend.OK) {
                throw new AssertionError(op + " failed with " + rc + ": " + a.laneError(0));
            }
        }

        private static void expect(long got, long want, String what) {
            if (got != want) {
                throw new AssertionError(what + ": expected " + want + " but was " + got);
            }
        }
    }
}
