package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.util.concurrent.TimeUnit;

/**
 * Shared helpers of the guest tests: the Soft-RoCE device, polling with a deadline, connecting two local RC queue
 * pairs.
 */
final class Rxe {
    static final String DEVICE = System.getProperty("rdma4j.ibverbs.device", "rxe0");
    static final int PORT = 1;
    static final int ACCESS = VerbsH.IBV_ACCESS_LOCAL_WRITE
            | VerbsH.IBV_ACCESS_REMOTE_WRITE
            | VerbsH.IBV_ACCESS_REMOTE_READ
            | VerbsH.IBV_ACCESS_REMOTE_ATOMIC;

    private Rxe() {}

    /**
     * Skips the test unless the Soft-RoCE device of the test VM is present (run it with scripts/testvm test ibverbs).
     */
    static void assumeDevice() {
        assumeTrue(Verbs.isAvailable(), "libibverbs is not available");
        assumeTrue(
                Verbs.deviceNames().contains(DEVICE),
                DEVICE + " is not present: this test runs in the test VM (scripts/testvm test ibverbs)");
    }

    static Context open() {
        assumeDevice();
        return Verbs.openDevice(DEVICE);
    }

    /** The RoCE v2 IPv4 GID index of port 1, failing if there is none. */
    static int gidIndex(Context ctx) {
        int g = ctx.findRoceV2Ipv4GidIndex(PORT);
        if (g < 0) {
            throw new AssertionError("no IPv4 RoCE GID on " + ctx.deviceName() + " port 1: " + ctx.gidTable());
        }
        return g;
    }

    /** Connects two RC queue pairs of this process to each other. */
    static void connect(QueuePair a, QueuePair b, int gidIndex) {
        QpInfo ia = Verbs.localQpInfo(a, PORT, gidIndex);
        QpInfo ib = Verbs.localQpInfo(b, PORT, gidIndex);
        Verbs.connectRc(a, QpInfo.decode(ib.encode()), PORT, gidIndex, ACCESS);
        Verbs.connectRc(b, QpInfo.decode(ia.encode()), PORT, gidIndex, ACCESS);
    }

    /**
     * Polls {@code cq} until {@code n} completions arrived (into {@code wcs}, the last batch) or the deadline passes;
     * returns how many came.
     */
    static int await(CompletionQueue cq, WorkCompletions wcs, int n, long timeoutMs, CompletionSink sink) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int got = 0;
        while (got < n) {
            int k = cq.poll(wcs);
            if (k < 0) {
                throw new AssertionError("ibv_poll_cq returned " + k);
            }
            for (int i = 0; i < k; i++) {
                sink.accept(wcs, i);
            }
            got += k;
            if (k == 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + got + " of " + n + " completions within " + timeoutMs + " ms");
                }
                Thread.onSpinWait();
            }
        }
        return got;
    }

    /** Requires every completion to succeed. */
    static final CompletionSink SUCCESS = WorkCompletions::throwIfError;

    interface CompletionSink {
        void accept(WorkCompletions wcs, int i);
    }
}
