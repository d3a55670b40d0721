package io.rdma4j.engine.spi;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps a real backend and injects faults on chosen lanes: failed posts, failed completions (the operation may well
 * have succeeded underneath, as after a lost acknowledgement), withheld completions (a stalled lane), duplicated
 * immediates (as EFA delivers them), immediates delivered in reverse order (a peer's later writes announced before its
 * earlier ones, as lanes polled in turn announce them), and posts refused as back-pressured for a while (full send
 * queues on a loaded machine). Everything else goes to the real backend. A fake only to inject faults: the engine's
 * fault tests and {@code ./rdma4j soak} install it through {@code TransferEngine.Builder.backendWrapper}. Its poll
 * copies each batch, so it is not for measured runs.
 */
public final class FaultInjectingBackend extends ForwardingEngineBackend {
    /** Native-looking error code of injected failures (EIO). */
    public static final int INJECTED = 5;

    private final AtomicIntegerArray failPosts;
    private final AtomicIntegerArray failCompletions;
    private final AtomicIntegerArray brokenForever;
    private final AtomicIntegerArray hold;
    private volatile boolean duplicateImmediates;
    /** Posts are refused as back-pressured for this long from the first one refused; 0: never. */
    private volatile long backPressureNanos;

    private volatile long backPressureUntil;
    private final AtomicLong backPressured = new AtomicLong();
    private final AtomicLong injected = new AtomicLong();
    private final AtomicLong duplicated = new AtomicLong();
    private final AtomicInteger recoveries = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicReferenceArray<String> lastInjected;
    /** Per lane: completions withheld while held; drained by the lane's own poll once released. */
    private final ArrayDeque<long[]>[] withheld;

    private final ArrayDeque<Integer>[] pendingDuplicates;

    /** While above 0: incoming immediates are held until none came for this long, then delivered last first. */
    private volatile long reverseQuietNanos;

    /** Per lane: immediates held for {@link #reverseImmediates}, oldest first, and when the last came. */
    private final ArrayDeque<Integer>[] reversing;

    private final long[] lastReversing;
    private final AtomicLong reversed = new AtomicLong();

    @SuppressWarnings("unchecked")
    public FaultInjectingBackend(EngineBackend inner) {
        super(inner);
        int n = inner.lanes().size();
        failPosts = new AtomicIntegerArray(n);
        failCompletions = new AtomicIntegerArray(n);
        brokenForever = new AtomicIntegerArray(n);
        hold = new AtomicIntegerArray(n);
        lastInjected = new java.util.concurrent.atomic.AtomicReferenceArray<>(n);
        withheld = new ArrayDeque[n];
        pendingDuplicates = new ArrayDeque[n];
        reversing = new ArrayDeque[n];
        lastReversing = new long[n];
        for (int i = 0; i < n; i++) {
            withheld[i] = new ArrayDeque<>();
            pendingDuplicates[i] = new ArrayDeque<>();
            reversing[i] = new ArrayDeque<>();
        }
    }

    /** The next {@code count} posts on {@code lane} fail. */
    public FaultInjectingBackend failPosts(int lane, int count) {
        failPosts.set(lane, count);
        return this;
    }

    /** The next {@code count} local completions on {@code lane} report an error. */
    public FaultInjectingBackend failCompletions(int lane, int count) {
        failCompletions.set(lane, count);
        return this;
    }

    /** Every post and completion on {@code lane} fails from now on, and recovery is refused. */
    public FaultInjectingBackend breakLane(int lane) {
        brokenForever.set(lane, 1);
        return this;
    }

    /** Withholds {@code lane}'s local completions (a stalled lane) until {@link #release(int)}. */
    public FaultInjectingBackend hold(int lane) {
        hold.set(lane, 1);
        return this;
    }

    public FaultInjectingBackend release(int lane) {
        hold.set(lane, 0);
        return this;
    }

    /** Delivers every incoming immediate twice. */
    public FaultInjectingBackend duplicateImmediates(boolean on) {
        duplicateImmediates = on;
        return this;
    }

    /**
     * Holds the incoming immediates on each lane from now until none came for {@code quiet}, then delivers that lane's
     * held ones newest first, once; later ones pass as they come. Each lane's poll holds and delivers its own.
     */
    public FaultInjectingBackend reverseImmediates(java.time.Duration quiet) {
        reverseQuietNanos = quiet.toNanos();
        return this;
    }

    /** {@return the immediates delivered out of order by {@link #reverseImmediates}} */
    public long reversedImmediates() {
        return reversed.get();
    }

    /**
     * Refuses every post on every lane as {@link #BACK_PRESSURED} for {@code time}, counted from the first post
     * refused, as full send queues would; the engine keeps the work and posts it again.
     */
    public FaultInjectingBackend backPressure(java.time.Duration time) {
        backPressureUntil = 0;
        backPressureNanos = time.toNanos();
        return this;
    }

    /** {@return the posts refused as back-pressured so far} */
    public long backPressuredPosts() {
        return backPressured.get();
    }

    public long injectedFailures() {
        return injected.get();
    }

    public long duplicatedImmediates() {
        return duplicated.get();
    }

    public EngineBackend inner() {
        return inner;
    }

    @Override
    public String description() {
        return inner.description() + " (with fault injection)";
    }

    /**
     * {@return what a post on {@code lane} gets: {@link #FAILED}, {@link #BACK_PRESSURED}, or {@link #OK} (it goes on)}
     */
    private int refusal(int lane) {
        if (brokenForever.get(lane) == 1) {
            injected.incrementAndGet();
            return FAILED;
        }
        while (true) {
            int n = failPosts.get(lane);
            if (n <= 0) {
                break;
            }
            if (failPosts.compareAndSet(lane, n, n - 1)) {
                injected.incrementAndGet();
                lastInjected.set(lane, "injected post failure on lane " + lane);
                return FAILED;
            }
        }
        if (backPressureNanos > 0) {
            long now = System.nanoTime();
            if (backPressureUntil == 0) {
                backPressureUntil = now + backPressureNanos;
            }
            if (now - backPressureUntil < 0) {
                backPressured.incrementAndGet();
                return BACK_PRESSURED;
            }
            backPressureNanos = 0;
        }
        return OK;
    }

    @Override
    public int postWrite(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        int refused = refusal(lane);
        return refused != OK
                ? refused
                : inner.postWrite(
                        lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }

    @Override
    public int postWriteVector(
            int lane,
            int connection,
            int localHandle,
            long[] localAddresses,
            long[] remoteAddresses,
            long[] lengths,
            int count,
            long remoteKey,
            long context) {
        int refused = refusal(lane);
        return refused != OK
                ? refused
                : inner.postWriteVector(
                        lane,
                        connection,
                        localHandle,
                        localAddresses,
                        remoteAddresses,
                        lengths,
                        count,
                        remoteKey,
                        context);
    }

    @Override
    public int postWriteImmediate(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int immediate,
            long context) {
        int refused = refusal(lane);
        return refused != OK
                ? refused
                : inner.postWriteImmediate(
                        lane,
                        connection,
                        localHandle,
                        localAddress,
                        length,
                        remoteAddress,
                        remoteKey,
                        immediate,
                        context);
    }

    @Override
    public int postRead(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        int refused = refusal(lane);
        return refused != OK
                ? refused
                : inner.postRead(
                        lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }

    @Override
    public int poll(int lane, Completions out) {
        int n = inner.poll(lane, out);
        // rewrite the batch in place: withhold, fail or duplicate entries
        long[] ctx = new long[n];
        int[] kind = new int[n];
        int[] status = new int[n];
        int[] imm = new int[n];
        String[] text = new String[n];
        for (int i = 0; i < n; i++) {
            ctx[i] = out.context[i];
            kind[i] = out.kind[i];
            status[i] = out.status[i];
            imm[i] = out.immediate[i];
            text[i] = out.errorText[i];
        }
        out.clear();
        ArrayDeque<long[]> held = withheld[lane];
        synchronized (held) {
            if (hold.get(lane) == 0) {
                while (!held.isEmpty() && out.count < out.capacity()) {
                    long[] h = held.poll();
                    out.add(Completions.LOCAL, h[0], 0);
                }
            }
        }
        ArrayDeque<Integer> dups = pendingDuplicates[lane];
        while (!dups.isEmpty() && out.count < out.capacity()) {
            out.add(Completions.REMOTE_IMMEDIATE, 0, dups.poll());
        }
        ArrayDeque<Integer> rev = reversing[lane];
        long quiet = reverseQuietNanos;
        // a lane's held ones go once none came for the quiet time, or at once when another lane ended the hold
        if (!rev.isEmpty() && (quiet == 0 || System.nanoTime() - lastReversing[lane] >= quiet)) {
            while (!rev.isEmpty() && out.count < out.capacity()) {
                out.add(Completions.REMOTE_IMMEDIATE, 0, rev.pollLast());
                reversed.incrementAndGet();
            }
            if (rev.isEmpty()) {
                reverseQuietNanos = 0; // once
            }
        }
        boolean holding = reverseQuietNanos > 0;
        for (int i = 0; i < n; i++) {
            if (kind[i] == Completions.REMOTE_IMMEDIATE) {
                if (status[i] == 0 && holding) {
                    rev.add(imm[i]);
                    lastReversing[lane] = System.nanoTime();
                } else if (status[i] == 0) {
                    addOrCarry(lane, out, Completions.REMOTE_IMMEDIATE, 0, imm[i]);
                    if (duplicateImmediates) {
                        duplicated.incrementAndGet();
                        dups.add(imm[i]);
                    }
                } else if (!out.addError(kind[i], ctx[i], status[i], text[i])) {
                    throw new IllegalStateException("completion batch overflow while injecting faults");
                }
                continue;
            }
            if (status[i] != 0) {
                if (!out.addError(kind[i], ctx[i], status[i], text[i])) {
                    throw new IllegalStateException("completion batch overflow while injecting faults");
                }
                continue;
            }
            if (hold.get(lane) == 1) {
                synchronized (held) {
                    held.add(new long[] {ctx[i]});
                }
                continue;
            }
            if (brokenForever.get(lane) == 1 || takeCompletionFailure(lane)) {
                injected.incrementAndGet();
                out.addError(Completions.LOCAL, ctx[i], INJECTED, "injected completion error on lane " + lane);
                continue;
            }
            addOrCarry(lane, out, Completions.LOCAL, ctx[i], 0);
        }
        return out.count;
    }

    private void addOrCarry(int lane, Completions out, int kind, long ctx, int imm) {
        if (!out.add(kind, ctx, imm)) {
            if (kind == Completions.REMOTE_IMMEDIATE) {
                pendingDuplicates[lane].add(imm);
            } else {
                synchronized (withheld[lane]) {
                    withheld[lane].add(new long[] {ctx});
                }
            }
        }
    }

    private boolean takeCompletionFailure(int lane) {
        while (true) {
            int n = failCompletions.get(lane);
            if (n <= 0) {
                return false;
            }
            if (failCompletions.compareAndSet(lane, n, n - 1)) {
                return true;
            }
        }
    }

    @Override
    public String laneError(int lane) {
        if (brokenForever.get(lane) == 1) {
            return "injected: lane " + lane + " is broken";
        }
        String e = inner.laneError(lane);
        return e != null ? e : lastInjected.get(lane);
    }

    @Override
    public boolean recover(int lane) {
        recoveries.incrementAndGet();
        lastInjected.set(lane, null);
        return brokenForever.get(lane) == 0 && inner.recover(lane);
    }
}
