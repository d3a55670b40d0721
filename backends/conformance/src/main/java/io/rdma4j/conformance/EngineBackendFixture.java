package io.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the engine backend conformance tests share: an initiator and a target opened from the backend under test before
 * each test and closed after it, ways to connect, post and wait, and the hooks a backend's test class overrides where
 * its transport differs. The tests themselves are in {@link DataPathConformance} and {@link EngineBackendConformance}.
 */
public abstract class EngineBackendFixture {
    protected static final long TIMEOUT_NANOS = 10_000_000_000L;

    /** @return the backend under test */
    protected abstract EngineBackendProvider provider();

    /** @return the configuration both ends open with (two lanes at least) */
    protected abstract BackendConfig config();

    protected EngineBackend initiator;
    protected EngineBackend target;
    protected Arena arena;
    protected final Completions batch = new Completions(64);

    @BeforeEach
    void open() {
        assumeTrue(
                provider().isAvailable(),
                () -> provider().name() + " is not available here: "
                        + provider().unavailabilityCause());
        arena = Arena.ofShared();
        initiator = provider().open(config());
        target = provider().open(config());
    }

    @AfterEach
    void close() {
        if (initiator != null) {
            initiator.close();
        }
        if (target != null) {
            target.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Connects initiator lane {@code lane} to target lane {@code lane} both ways; returns the initiator's end. */
    protected int connect(int lane) {
        int ic = initiator.prepareConnection(lane);
        int tc = target.prepareConnection(lane);
        target.connect(lane, tc, initiator.endpointInfo(lane, ic));
        initiator.connect(lane, ic, target.endpointInfo(lane, tc));
        return ic;
    }

    /** Posts until the backend takes it: BACK_PRESSURED (e.g. while a connection is being set up) means poll, retry. */
    protected int post(int lane, IntSupplier op) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (true) {
            int rc = op.getAsInt();
            if (rc != EngineBackend.BACK_PRESSURED || System.nanoTime() > deadline) {
                return rc;
            }
            target.poll(lane, batch);
            initiator.poll(lane, batch);
        }
    }

    /** Polls both ends until the initiator sees {@code context} complete; returns its status; collects immediates. */
    protected int await(int lane, long context, int[] immediates) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        int status = Integer.MIN_VALUE;
        while (System.nanoTime() < deadline) {
            int n = target.poll(lane, batch);
            for (int i = 0; i < n; i++) {
                if (batch.kind[i] == Completions.REMOTE_IMMEDIATE && batch.status[i] == 0 && immediates != null) {
                    immediates[0]++;
                    immediates[1] = batch.immediate[i];
                }
            }
            n = initiator.poll(lane, batch);
            for (int i = 0; i < n; i++) {
                if (batch.kind[i] == Completions.LOCAL && batch.context[i] == context) {
                    status = batch.status[i];
                }
            }
            if (status != Integer.MIN_VALUE && (immediates == null || immediates[0] > 0 || status != 0)) {
                return status;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion for context " + context + " on lane " + lane + " within 10 s");
    }

    /** The transport's own words (a status name or strerror text), not only a number. */
    protected static void assertNativeText(String reason) {
        assertTrue(reason.matches("(?s).*[A-Za-z]{4,}.*") && !reason.matches("(?s).*status -?[0-9]+\\s*"), reason);
    }

    /** Posts {@code count} writes (every fourth with immediate data), polling with a batch of {@code capacity}. */
    protected void postAndAwaitAll(
            int lane,
            int connection,
            int handle,
            long address,
            BackendRegistration d,
            int count,
            int capacity,
            long firstContext) {
        Completions mine = new Completions(capacity);
        Completions theirs = new Completions(capacity);
        int[] seen = new int[count];
        int[] immediates = new int[count];
        int posted = 0;
        int done = 0;
        int landed = 0;
        int immediateCount = 0;
        long deadline = System.nanoTime() + 3 * TIMEOUT_NANOS;
        while (done < count || landed < immediateCount) {
            if (System.nanoTime() > deadline) {
                fail("after 30 s: " + done + " of " + count + " completions, " + landed + " of " + immediateCount
                        + " immediates (poll capacity " + capacity + ")");
            }
            while (posted < count) {
                long ctx = firstContext + posted;
                long off = (posted % 64) * 64L;
                int rc = posted % 4 == 3
                        ? initiator.postWriteImmediate(
                                lane,
                                connection,
                                handle,
                                address + off,
                                64,
                                d.remoteAddress(lane) + off,
                                d.remoteKey(lane),
                                posted,
                                ctx)
                        : initiator.postWrite(
                                lane,
                                connection,
                                handle,
                                address + off,
                                64,
                                d.remoteAddress(lane) + off,
                                d.remoteKey(lane),
                                ctx);
                if (rc == EngineBackend.BACK_PRESSURED) {
                    break;
                }
                assertEquals(EngineBackend.OK, rc, () -> "post failed: " + initiator.laneError(lane));
                if (posted % 4 == 3) {
                    immediateCount++;
                }
                posted++;
            }
            int n = initiator.poll(lane, mine);
            assertTrue(n <= capacity, "poll returned " + n + " completions into a batch of " + capacity);
            for (int i = 0; i < n; i++) {
                assertEquals(Completions.LOCAL, mine.kind[i]);
                assertEquals(0, mine.status[i], mine.errorText[i]);
                long k = mine.context[i] - firstContext;
                assertTrue(k >= 0 && k < posted, "a completion for context " + mine.context[i] + " never posted");
                assertEquals(1, ++seen[(int) k], "context " + mine.context[i] + " completed twice");
                done++;
            }
            int m = target.poll(lane, theirs);
            assertTrue(m <= capacity, "poll returned " + m + " completions into a batch of " + capacity);
            for (int i = 0; i < m; i++) {
                assertEquals(Completions.REMOTE_IMMEDIATE, theirs.kind[i]);
                assertEquals(0, theirs.status[i], theirs.errorText[i]);
                int imm = theirs.immediate[i];
                assertTrue(imm >= 0 && imm < count && imm % 4 == 3, "unexpected immediate " + imm);
                immediates[imm]++;
                landed++;
            }
        }
        assertEquals(count, done);
        for (int i = 3; i < count; i += 4) {
            assertTrue(immediates[i] >= 1, "immediate " + i + " never arrived");
        }
        drainExpectingNothing(initiator, lane, firstContext);
    }

    /** Polls a while and fails on any completion: everything posted has been reported already. */
    protected void drainExpectingNothing(EngineBackend backend, int lane, long firstContext) {
        Completions out = new Completions(16);
        for (int i = 0; i < 200; i++) {
            int n = backend.poll(lane, out);
            for (int k = 0; k < n; k++) {
                if (out.kind[k] == Completions.LOCAL) {
                    fail("context " + out.context[k] + " completed again or after a failed post (status "
                            + out.status[k] + ", first context of the round " + firstContext + ")");
                }
            }
            target.poll(lane, out);
        }
    }

    /** @return whether the transport checks remote keys (libfabric shm 1.17 does not on same-host writes) */
    protected boolean enforcesKeys() {
        return true;
    }

    /** @return how many connections {@code disconnectingWithOperationsInFlight...} makes and drops, one per round */
    protected int disconnectRounds() {
        return 20;
    }

    /** @return how many connections a control thread may add to lane 0 during traffic (shm's address vector: 256) */
    protected int maxExtraConnections() {
        return 60;
    }

    /**
     * @return whether the test may post to a peer closed in this same process; false where the transport then touches
     *     the peer's freed memory (libfabric shm 1.17 maps the peer's queue into this process and crashes)
     */
    protected boolean postsToAClosedPeerAreSafe() {
        return true;
    }

    /** A configuration helper for subclasses. */
    protected static BackendConfig config(String provider, int lanes, BackendOptions options) {
        return new BackendConfig(provider, lanes, 16, options);
    }

    /** Fills {@code s} with bytes that depend on {@code seed} and the offset. */
    protected static void fill(MemorySegment s, long seed) {
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, mix(seed + i));
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) mix(seed + i));
        }
    }

    private static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        return x;
    }

    /** @return the first differing offset of the two ranges, or -1 when equal */
    protected static long mismatch(MemorySegment a, long aOff, MemorySegment b, long bOff, long len) {
        return MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len);
    }
}
