package io.rdma4j.weights.internal;

import io.rdma4j.engine.HostMemory;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferTimeoutException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sends a piece whose bytes are contiguous at the receiver as one write: runs strided in host memory (a resharded
 * tensor's row slices) are first copied into a registered staging slot, so that thousands of small one-sided writes
 * become one, at the price of a local copy. A few slots of one chunk each are reused round robin, so the copy of the
 * next piece overlaps the write of the last.
 *
 * <p>Threads: {@link #send} from one thread (the publishing one); slots come back from completion threads.
 */
public final class Gather implements AutoCloseable {
    /**
     * The most staging kept: 32 slots of a default 4 MiB chunk, fewer (at least 2) for larger chunks. Fewer slots leave
     * the copying thread waiting for writes to complete (8 slots: resharding 1.68x the aligned time over tcp, 32:
     * 1.32x, in {@code bench weights}).
     */
    static final long STAGING_BYTES = 128L << 20;

    private final Arena arena = Arena.ofShared();
    private final LocalBuffer staging;
    private final long slotBytes;
    private final ArrayBlockingQueue<Integer> free;

    /**
     * Allocates and registers the staging slots: enough for {@code wanted} bytes, within {@link #STAGING_BYTES}.
     *
     * @param engine the engine that writes from them
     * @param chunk the largest piece, in bytes
     * @param wanted the bytes a plan gathers per version
     */
    public Gather(TransferEngine engine, long chunk, long wanted) {
        long most = Math.max(2, STAGING_BYTES / chunk);
        int slots = (int) Math.max(2, Math.min(most, (wanted + chunk - 1) / chunk));
        this.slotBytes = chunk;
        this.free = new ArrayBlockingQueue<>(slots);
        try {
            staging = engine.register(HostMemory.allocate(arena, chunk * slots));
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        for (int i = 0; i < slots; i++) {
            free.add(i);
        }
    }

    /**
     * {@return whether {@code g} from {@code src} is gathered into one write}: its runs are strided in host memory this
     * side can copy, and contiguous at the receiver, which then sees the piece as the one run {@link #atReceiver}
     * gives. (Runs contiguous on both sides are one run already.)
     *
     * @param src where the runs' source offsets point
     * @param g the runs
     */
    public static boolean oneWrite(LocalBuffer src, Runs.Group g) {
        return oneWrite(src.device() == null, g);
    }

    private static boolean oneWrite(boolean host, Runs.Group g) {
        return host && g.count() > 1 && g.dstStride() == g.length() && g.srcStride() != g.length();
    }

    /**
     * {@return per tensor, whether the publisher holds it in host memory}
     *
     * @param sources per tensor, the publisher's memory
     */
    public static boolean[] host(List<LocalBuffer> sources) {
        boolean[] h = new boolean[sources.size()];
        for (int t = 0; t < h.length; t++) {
            h[t] = sources.get(t).device() == null;
        }
        return h;
    }

    /**
     * {@return per member, per incoming piece, whether it travels as one write}: a publisher piece when
     * {@link #oneWrite} holds, a forwarded piece when the piece it copies does (a relay sends runs as it received them)
     *
     * @param p the plan
     * @param host per tensor, whether the publisher holds it in host memory ({@link #host})
     */
    public static boolean[][] oneWrites(Plan p, boolean[] host) {
        int n = p.members().size();
        boolean[][] one = new boolean[n][];
        ArrayDeque<int[]> todo = new ArrayDeque<>();
        for (int m = 0; m < n; m++) {
            List<Plan.Piece> in = p.incoming().get(m);
            one[m] = new boolean[in.size()];
            for (int i = 0; i < in.size(); i++) {
                Plan.Piece x = in.get(i);
                if (x.from() < 0) {
                    one[m][i] = oneWrite(host[x.tensor()], x.runs());
                    todo.add(new int[] {m, i});
                }
            }
        }
        while (!todo.isEmpty()) {
            int[] at = todo.poll();
            for (Plan.Forward f : p.forwards().get(at[0]).get(at[1])) {
                one[f.target()][f.targetPiece()] = one[at[0]][at[1]];
                todo.add(new int[] {f.target(), f.targetPiece()});
            }
        }
        return one;
    }

    /**
     * {@return the bytes the publisher's own pieces of {@code p} copy into staging}
     *
     * @param p the plan
     * @param host per tensor, whether the publisher holds it in host memory ({@link #host})
     */
    public static long stagedBytes(Plan p, boolean[] host) {
        long n = 0;
        for (List<Plan.Piece> in : p.incoming()) {
            for (Plan.Piece x : in) {
                Runs.Group g = x.runs();
                if (x.from() < 0 && oneWrite(host[x.tensor()], g)) {
                    n += g.bytes();
                }
            }
        }
        return n;
    }

    /**
     * {@return the runs as the receiver sees them}: one run of all their bytes when the piece travels as one write (its
     * destination bytes are then contiguous), else {@code g}
     *
     * @param g the runs
     * @param one whether the piece travels as one write
     */
    public static Runs.Group atReceiver(Runs.Group g, boolean one) {
        return one && g.count() > 1 ? new Runs.Group(g.src(), g.dst(), g.bytes(), 1, 0, 0) : g;
    }

    /**
     * Writes a piece for which {@link #oneWrite} holds: copies its runs into a free slot (waiting for one up to
     * {@code endNanos}) and writes the slot in one transfer.
     *
     * @param engine the writing engine
     * @param src where the runs' source offsets point
     * @param dst where the runs' destination offsets point
     * @param g the runs, at most one chunk in all
     * @param options the piece's options (its tag, deadline, CRC32C)
     * @param endNanos the {@link System#nanoTime()} by which a slot must be free
     * @return a future that completes when the write completed and its tag was delivered
     * @throws InterruptedException when interrupted while waiting for a slot
     */
    public CompletableFuture<?> send(
            TransferEngine engine,
            LocalBuffer src,
            RemoteBuffer dst,
            Runs.Group g,
            TransferOptions options,
            long endNanos)
            throws InterruptedException {
        if (g.bytes() > slotBytes) {
            return CompletableFuture.failedFuture(new IllegalStateException(
                    "a piece of " + g.bytes() + " bytes is larger than the chunk of " + slotBytes));
        }
        Integer s = free.poll(Math.max(0, endNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (s == null) {
            return CompletableFuture.failedFuture(new TransferTimeoutException(
                    "no staging slot came free for a resharded piece before the deadline: the earlier writes are"
                            + " stuck; raise the deadline or check the subscriber"));
        }
        long base = s * slotBytes;
        MemorySegment from = src.segment();
        MemorySegment to = staging.segment();
        for (int i = 0; i < g.count(); i++) {
            MemorySegment.copy(from, g.src() + i * g.srcStride(), to, base + i * g.length(), g.length());
        }
        CompletableFuture<?> f;
        try {
            f = engine.write(staging, base, dst, g.dst(), g.bytes(), options).future();
        } catch (RuntimeException e) {
            free.add(s);
            return CompletableFuture.failedFuture(e);
        }
        f.whenComplete((x, e) -> free.add(s));
        // the caller may cancel what it gets (a subscriber that failed): the slot comes back only when the engine's
        // write itself ended, never while it may still be reading the slot
        return f.thenApply(x -> x);
    }

    /** Deregisters and frees the slots; call it once no write from them is in flight. */
    @Override
    public void close() {
        try {
            staging.close();
        } finally {
            arena.close();
        }
    }
}
