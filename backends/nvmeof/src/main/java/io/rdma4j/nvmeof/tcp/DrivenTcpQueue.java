package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An NVMe/TCP I/O queue that any thread may submit to, run to completion by one thread of its own: the thread takes
 * submitted commands, sends every one it took in one gathering call, receives and parses what arrived in one, and
 * completes the futures (callbacks run on it: do not block in them). It is a {@link PolledTcpQueue} with a thread and
 * futures at its edge, so a controller's I/O queues can use the polled data path: one thread a queue instead of a
 * reader and a writer, no hand-off between them for an R2T, and no system call per PDU. Idle, the thread sleeps in
 * {@code poll} on the socket and an {@code eventfd} that a submitter signals only when the thread sleeps; a submitter
 * that finds it asleep with nothing in flight sends its command itself instead, and the completion wakes the thread.
 * With a busy-poll time, a thread with commands in flight polls that long after it last found work before it sleeps: a
 * completion then needs no wake-up from sleep, and a command sent from a completion callback goes out on this thread.
 *
 * <p>Heap memory goes through a native copy made for the command (the polled queue moves native memory only). A read's
 * data of 16 KiB or more goes from the socket straight into the caller's memory, shared or not (without data digests),
 * which the receive holds open while the kernel writes to it: an arena closed meanwhile from another thread fails in
 * that thread (the JDK's {@code IllegalStateException} for a shared arena in use by a native call).
 */
public final class DrivenTcpQueue implements FabricQueue, IoCompletion {
    /** The longest the thread sleeps with commands in flight, so the I/O timeout is checked at least this often. */
    private static final long NAP_NANOS = 100_000_000L;

    /** A command waiting for the queue's thread. */
    private record Request(
            byte[] sqe, MemorySegment memory, long offset, Data data, boolean timed, CompletableFuture<Cqe> future) {}

    private final String name;
    private final PolledTcpQueue queue;
    private final NativeSocket.Wakeup wakeup = new NativeSocket.Wakeup();
    private final ConcurrentLinkedQueue<Request> submitted = new ConcurrentLinkedQueue<>();
    /** Commands in the queue by tag; the thread's alone. */
    private final Request[] inFlight;

    private final int[] freeTags;
    private int freeCount;
    private final Thread thread;
    /**
     * Held by whichever thread drives the polled queue: the queue's own thread, except while it sleeps, when a
     * submitter that finds the queue idle sends its command itself (see {@link #sendFromHere}).
     */
    private final ReentrantLock driving = new ReentrantLock();

    /** The thread sleeps (or is about to) and no submitter has woken it yet. */
    private volatile boolean sleeping;

    private static final VarHandle SLEEPING;

    static {
        try {
            SLEEPING = MethodHandles.lookup().findVarHandle(DrivenTcpQueue.class, "sleeping", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile boolean stopping;
    /** The thread has ended: a submitter fails what it adds itself. */
    private volatile boolean exited;

    private volatile NvmeException failing;
    private final int maxData;
    /** How long the thread polls, with commands in flight, before it sleeps; 0: sleeps at once. */
    private final long busyPollNanos;
    /** When the thread last found no work while polling (the thread's alone); 0 while it finds some. */
    private long idleSince;

    private DrivenTcpQueue(String name, PolledTcpQueue queue, long busyPollNanos) {
        this.name = name;
        this.busyPollNanos = busyPollNanos;
        this.queue = queue;
        queue.receiveIntoSharedMemory(); // callers' memory is shared with this thread, and each I/O allocates anyway
        this.maxData = queue.maxData();
        int depth = queue.depth();
        this.inFlight = new Request[depth];
        this.freeTags = new int[depth];
        for (int i = 0; i < depth; i++) {
            freeTags[i] = depth - 1 - i;
        }
        this.freeCount = depth;
        this.thread = Thread.ofPlatform().daemon().name(name + "-io").unstarted(this::run);
    }

    /**
     * Connects, exchanges ICReq/ICResp, sends the Fabrics Connect for {@code config.qid()}, and starts the queue's
     * thread.
     *
     * @param busyPollNanos how long the thread, with commands in flight and no work found, polls the connection before
     *     it sleeps; 0 sleeps at once
     */
    public static DrivenTcpQueue open(
            InetSocketAddress address,
            InetAddress source,
            String name,
            TcpQueue.Config config,
            byte[] connectData,
            long busyPollNanos) {
        PolledTcpQueue q = PolledTcpQueue.open(address, source, name, config, connectData);
        DrivenTcpQueue d;
        try {
            d = new DrivenTcpQueue(name, q, busyPollNanos);
        } catch (RuntimeException | Error e) {
            q.close();
            throw e;
        }
        d.thread.start();
        return d;
    }

    @Override
    public CompletableFuture<Cqe> submit(byte[] sqe, Data data, String what) {
        return submit(sqe, data, true);
    }

    @Override
    public CompletableFuture<Cqe> submitUntimed(byte[] sqe, String what) {
        return submit(sqe, Data.NONE, false);
    }

    private CompletableFuture<Cqe> submit(byte[] sqe, Data data, boolean timed) {
        if (data.length() > maxData) {
            throw new IllegalArgumentException(Sqe.describe(sqe) + " moves " + data.length()
                    + " bytes; this queue's commands move at most " + maxData);
        }
        CompletableFuture<Cqe> future = new CompletableFuture<>();
        NvmeException down = failure();
        if (down != null) {
            future.completeExceptionally(down);
            return future;
        }
        MemorySegment memory = data.segment();
        long offset = data.offset();
        if (data.length() > 0 && !memory.isNative()) {
            // a copy in native memory for the command; a read's data is copied back when it completes
            memory = Arena.ofAuto().allocate(data.length(), 8);
            offset = 0;
            if (data.toController()) {
                MemorySegment.copy(data.segment(), data.offset(), memory, 0, data.length());
            }
        }
        submitted.add(new Request(sqe, memory, offset, data, timed, future));
        // one signal a sleep: the first submitter to find the thread asleep clears the flag and wakes it; on a busy
        // core the thread does not run at once, and the submitters after it need not write the eventfd again
        if (sleeping && !sendFromHere() && SLEEPING.compareAndSet(this, true, false)) {
            wakeup.signal();
        }
        if (exited) {
            failWaiting(failure() != null ? failure() : new NvmeConnectionException(name + ": closed by this host"));
        }
        return future;
    }

    /**
     * Sends what was submitted from the submitting thread, when the queue's thread sleeps with no command in flight: it
     * then sleeps in {@code poll} on the socket, which the completion wakes, so the command needs no hand-off to it (on
     * a machine with fewer cores than busy threads, that hand-off is a context switch per command at queue depth 1).
     * With commands in flight the thread is woken instead, so the new ones go out in its next gathering send.
     *
     * @return whether everything submitted went out from here; false when the queue's thread must be woken
     */
    private boolean sendFromHere() {
        if (!driving.tryLock()) {
            return false;
        }
        try {
            if (!sleeping || exited || stopping || failing != null || queue.inFlight() != 0) {
                return false;
            }
            take();
            return queue.send() && submitted.isEmpty();
        } finally {
            driving.unlock();
        }
    }

    /**
     * @return whether the thread, with commands in flight, has found no work for less than the busy-poll time, and so
     *     polls again instead of sleeping
     */
    private boolean stillPolling() {
        long now = System.nanoTime();
        if (idleSince == 0) {
            idleSince = now;
        }
        return now - idleSince < busyPollNanos;
    }

    private void run() {
        driving.lock();
        try {
            while (!stopping && queue.failure() == null) {
                NvmeException f = failing;
                if (f != null) {
                    queue.fail(f);
                }
                int took = take();
                int done = queue.poll(this);
                if (took != 0 || done != 0) {
                    idleSince = 0;
                } else if (busyPollNanos > 0 && queue.inFlight() > 0 && stillPolling()) {
                    Thread.onSpinWait();
                } else {
                    idleSince = 0;
                    sleeping = true;
                    if (submitted.isEmpty() && !stopping && failing == null) {
                        boolean woken;
                        driving.unlock();
                        try {
                            woken = queue.waitFor(NAP_NANOS, wakeup.fd());
                        } finally {
                            driving.lock();
                        }
                        // read only when signalled: at queue depth 1 the thread sleeps once per command
                        if (woken) {
                            wakeup.clear();
                        }
                    }
                    sleeping = false;
                }
            }
        } finally {
            exited = true;
            NvmeException why = failure();
            queue.close(); // in-flight commands are dropped there: fail their futures here
            NvmeException reason = why != null ? why : new NvmeConnectionException(name + ": closed by this host");
            for (int t = 0; t < inFlight.length; t++) {
                if (inFlight[t] != null) {
                    inFlight[t].future().completeExceptionally(reason);
                    inFlight[t] = null;
                }
            }
            failWaiting(reason);
            wakeup.close();
            driving.unlock();
        }
    }

    /** @return commands moved from the submitted list into free slots of the queue */
    private int take() {
        int took = 0;
        while (freeCount > 0 && queue.failure() == null) {
            Request r = submitted.poll();
            if (r == null) {
                break;
            }
            int tag = freeTags[--freeCount];
            inFlight[tag] = r;
            try {
                boolean queued = queue.submitCommand(
                        r.sqe(),
                        r.memory(),
                        r.offset(),
                        r.data().length(),
                        r.data().toController(),
                        r.timed(),
                        tag);
                if (!queued) { // cannot happen: a free tag means a free slot
                    throw new IllegalStateException(name + ": the queue had no slot for a free tag");
                }
            } catch (NvmeException e) {
                release(tag);
                r.future().completeExceptionally(e);
            }
            took++;
        }
        return took;
    }

    private void release(int tag) {
        inFlight[tag] = null;
        freeTags[freeCount++] = tag;
    }

    /** Called on the queue's thread by {@link PolledTcpQueue#poll} for each command that finished. */
    @Override
    public void complete(long tagValue, int status) {
        int tag = (int) tagValue;
        Request r = inFlight[tag];
        release(tag);
        switch (status) {
            case PolledTcpQueue.FAILED -> r.future().completeExceptionally(queue.failure());
            case PolledTcpQueue.MEMORY_FREED ->
                r.future()
                        .completeExceptionally(new NvmeException(name + ": " + Sqe.describe(r.sqe())
                                + " lost its data: the destination memory was freed (its arena closed) while the read"
                                + " was in flight; keep the memory alive until the read's future completes"));
            default -> {
                Data d = r.data();
                if (status == 0 && d.length() > 0 && !d.toController() && r.memory() != d.segment()) {
                    MemorySegment.copy(r.memory(), 0, d.segment(), d.offset(), d.length());
                }
                r.future().complete(new Cqe(queue.completionDw0(), 0, 0, 0, tag, status << 1));
            }
        }
    }

    private void failWaiting(NvmeException why) {
        Request r;
        while ((r = submitted.poll()) != null) {
            r.future().completeExceptionally(why);
        }
    }

    @Override
    public NvmeException failure() {
        NvmeException f = queue.failure();
        return f != null ? f : failing;
    }

    /** Fails every outstanding and waiting command with {@code why} and closes the connection. Idempotent. */
    @Override
    public void fail(NvmeException why) {
        if (failing == null) {
            failing = why;
        }
        wakeup.signal();
    }

    @Override
    public boolean accessible(MemorySegment segment) {
        return segment.isAccessibleBy(thread);
    }

    @Override
    public boolean completesOn(Thread t) {
        return t == thread;
    }

    /** Closes the connection; outstanding commands fail with a {@link NvmeConnectionException}. */
    @Override
    public void close() {
        fail(new NvmeConnectionException(name + ": closed by this host"));
        stopping = true;
        wakeup.signal();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
