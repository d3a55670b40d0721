package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Cqe;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * Everything that goes out on the connection: capsules (several per gathering write), H2CData answering R2Ts, and a
 * TermReq. It owns the writer thread, the job ring that hands work to it, and the per-command send state (whether a
 * capsule is still to go, how many R2Ts a command has waiting); this object's monitor guards that state and nothing
 * else. Other threads only enqueue: a submitting thread may also write its own capsule inline when the writer is idle
 * (one thread hand-off less per command), under the lock that keeps PDUs from interleaving. The receiver never writes
 * (it must never block on a full socket): it enqueues.
 *
 * <p>A write call holds the caller's memory (the JDK keeps its arena acquired for the call), and the target may answer
 * a command before the call that sent its last bytes has returned. So a command carrying data completes only once no
 * write call carrying its bytes is in progress: the receiver asks {@link #holdCompletion}, and the thread whose call
 * held the bytes completes the command after it ({@code completeLate}), so a caller may free the memory the moment the
 * future completes.
 */
final class Sender {
    /** R2Ts one command may have waiting for the writer: MAXR2T is 1 (ICReq MAXR2T 0); more is a target's error. */
    static final int R2T_QUEUE = 4;

    /** What {@link #answer} did with an R2T. */
    enum Queued {
        OK,
        /** The command already has {@value #R2T_QUEUE} R2Ts waiting. */
        TOO_MANY_R2T,
        /** The ring is full: a target answering commands it was never sent. */
        FULL
    }

    private static final int JOB_CAPSULE = 1, JOB_H2C = 2, JOB_TERM = 3, JOB_CLOSE = 4;

    private final String name;
    private final SocketChannel channel;
    private final CommandSlots slots;
    private final PduCodec.Settings tx;
    private final long maxH2CData;
    private final Consumer<NvmeException> onFailure;
    private final BiConsumer<CommandSlot, Cqe> completeLate;
    private final Thread thread;

    /** Jobs for the writer thread: kind << 16 | cid, a ring guarded by this; an R2T's fields ride beside it. */
    private final int[] jobs;

    private final int[] jobTag;
    private final int[] jobGeneration;
    private final long[] jobOffset;
    private final long[] jobLength;
    private int jobHead, jobCount; // guarded by this
    /** Per command identifier: a capsule job waits for the writer (else it went out, or goes out inline). */
    private final boolean[] capsulePending; // guarded by this
    /** Per command identifier: R2Ts queued and not yet taken by the writer. */
    private final int[] r2tPending; // guarded by this

    private boolean stopped; // guarded by this
    private int termFes; // guarded by this
    private volatile boolean parked;

    /** Held while PDU bytes go out, so the writer thread and an inline sender never interleave. */
    private final ReentrantLock outLock = new ReentrantLock();

    private final ByteBuffer[] inlineGather = new ByteBuffer[3]; // guarded by outLock
    // the writer thread's own
    private final ByteBuffer[] gather = new ByteBuffer[48];
    /** The slots whose bytes the writer's current write carries, and the completions that waited for it. */
    private final CommandSlot[] marked = new CommandSlot[48];

    private int markedCount;
    private final CommandSlot[] lateSlots = new CommandSlot[48];
    private final Cqe[] lateCqes = new Cqe[48];
    private int lateCount;
    private final ByteBuffer h2c =
            ByteBuffer.allocateDirect(CommandSlot.HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer h2cDigest = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer term =
            ByteBuffer.allocateDirect(CommandSlot.HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();
    private int r2tTag, r2tGeneration;
    private long r2tOffset, r2tLength;

    /**
     * @param onFailure how the writer reports that the connection broke (the queue's fail, which calls {@link #stop})
     * @param completeLate completes a command whose completion waited for a write call here to return (the receiver's
     *     completion, run on the thread that made the call, with no lock held)
     */
    Sender(
            String name,
            SocketChannel channel,
            CommandSlots slots,
            PduCodec.Settings tx,
            long maxH2CData,
            Consumer<NvmeException> onFailure,
            BiConsumer<CommandSlot, Cqe> completeLate) {
        this.name = name;
        this.channel = channel;
        this.slots = slots;
        this.tx = tx;
        this.maxH2CData = maxH2CData;
        this.onFailure = onFailure;
        this.completeLate = completeLate;
        int depth = slots.depth();
        int ring = depth * (R2T_QUEUE + 1) + 4;
        this.jobs = new int[ring];
        this.jobTag = new int[ring];
        this.jobGeneration = new int[ring];
        this.jobOffset = new long[ring];
        this.jobLength = new long[ring];
        this.capsulePending = new boolean[depth];
        this.r2tPending = new int[depth];
        this.thread = Thread.ofPlatform().daemon().name(name + "-tx").unstarted(this::run);
    }

    /** @return the writer thread */
    Thread thread() {
        return thread;
    }

    /**
     * Sends a started command's capsule: inline when the writer has nothing queued and the lock is free, else by the
     * writer.
     *
     * @param queueOnly never write on this thread (the receiver's)
     * @return false when the ring is full (see {@link #jobsFull})
     */
    boolean send(CommandSlot s, boolean queueOnly) {
        synchronized (this) {
            if (stopped) {
                return true; // the queue failed: the command failed with it
            }
            if (queueOnly || jobCount > 0) {
                return enqueueCapsule(s.cid);
            }
            capsulePending[s.cid] = false; // taken for sending here, so a stale job for the slot sends nothing
        }
        if (!outLock.tryLock()) {
            synchronized (this) {
                return stopped || enqueueCapsule(s.cid);
            }
        }
        boolean carriesData = s.inCapsule;
        if (carriesData) {
            synchronized (this) {
                s.writing++;
            }
        }
        IOException failed = null;
        Cqe late = null;
        try {
            int n = s.capsuleBuffers(inlineGather, 0, tx.dataDigest());
            writeFully(inlineGather, n);
        } catch (IOException e) {
            failed = e;
        } finally {
            if (carriesData) {
                late = written(s);
            }
            outLock.unlock();
        }
        if (failed != null) {
            onFailure.accept(lost(failed));
        }
        if (late != null) {
            completeLate.accept(s, late);
        }
        return true;
    }

    /**
     * Called by the receiver with a completion for a command that carries data.
     *
     * @return true when a write call carrying the command's bytes is still in progress: the thread making it completes
     *     the command once it returns; false: complete it now
     */
    synchronized boolean holdCompletion(CommandSlot s, Cqe cqe) {
        if (s.writing == 0) {
            return false;
        }
        s.late = cqe;
        return true;
    }

    // Called with the lock held.
    private void mark(CommandSlot s) {
        s.writing++;
        marked[markedCount++] = s;
    }

    /**
     * A write call carrying {@code s}'s bytes returned. @return the completion that waited for it, if this was the last
     */
    private synchronized Cqe written(CommandSlot s) {
        if (--s.writing > 0 || s.late == null) {
            return null;
        }
        Cqe late = s.late;
        s.late = null;
        return late;
    }

    /** The writer's write call returned: the completions that waited for it are kept to run once outLock is free. */
    private void unmarkAll() {
        for (int i = 0; i < markedCount; i++) {
            CommandSlot s = marked[i];
            marked[i] = null;
            Cqe late = written(s);
            if (late != null) {
                lateSlots[lateCount] = s;
                lateCqes[lateCount++] = late;
            }
        }
        markedCount = 0;
    }

    /** Completes what waited for the writer's last call (outLock released). */
    private void runLate() {
        for (int i = 0; i < lateCount; i++) {
            CommandSlot s = lateSlots[i];
            Cqe cqe = lateCqes[i];
            lateSlots[i] = null;
            lateCqes[i] = null;
            completeLate.accept(s, cqe);
        }
        lateCount = 0;
    }

    /** Queues a capsule for the writer (a command the receiver started). @return false when the ring is full */
    synchronized boolean queue(CommandSlot s) {
        return enqueueCapsule(s.cid);
    }

    // Called with the lock held.
    private boolean enqueueCapsule(int cid) {
        if (!enqueue(JOB_CAPSULE, cid)) {
            return false;
        }
        capsulePending[cid] = true;
        return true;
    }

    /** Queues H2CData answering one R2T for {@code s}'s data {@code [offset, offset + length)}. */
    synchronized Queued answer(CommandSlot s, int ttag, long offset, long length) {
        if (r2tPending[s.cid] == R2T_QUEUE) {
            return Queued.TOO_MANY_R2T;
        }
        int at = (jobHead + jobCount) % jobs.length;
        if (!enqueue(JOB_H2C, s.cid)) {
            return Queued.FULL;
        }
        jobTag[at] = ttag;
        jobGeneration[at] = s.generation;
        jobOffset[at] = offset;
        jobLength[at] = length;
        r2tPending[s.cid]++;
        return Queued.OK;
    }

    /** Queues a TermReq with {@code fes}; with the ring full the connection closes without telling the target why. */
    synchronized void terminate(int fes) {
        termFes = fes;
        enqueue(JOB_TERM, 0);
    }

    /** Stops the writer once it has sent a queued TermReq; capsules and data still queued are dropped. */
    synchronized void stop() {
        stopped = true;
        wake();
    }

    // Called with the lock held.
    /**
     * @return false when the ring is full, which only a target answering commands it was never sent can cause (each
     *     slot has at most one capsule and {@value #R2T_QUEUE} R2T jobs otherwise)
     */
    private boolean enqueue(int kind, int cid) {
        if (jobCount == jobs.length) {
            return false;
        }
        jobs[(jobHead + jobCount) % jobs.length] = kind << 16 | cid;
        jobCount++;
        wake();
        return true;
    }

    // Called with the lock held.
    private void wake() {
        if (parked) {
            LockSupport.unpark(thread);
        }
    }

    NvmeProtocolException jobsFull() {
        return new NvmeProtocolException("the target answers commands faster than this host sent them (" + jobs.length
                + " sends pending); it completed a command before receiving it");
    }

    private NvmeConnectionException lost(IOException e) {
        return new NvmeConnectionException(name + ": connection lost while sending: " + e.getMessage(), e);
    }

    private void run() {
        try {
            while (true) {
                int job = take();
                int kind = job >>> 16;
                if (kind == JOB_CLOSE) {
                    return;
                }
                outLock.lock();
                try {
                    if (kind == JOB_CAPSULE) {
                        capsules(job & 0xffff);
                    } else if (kind == JOB_H2C) {
                        h2cData(slots.slot(job & 0xffff));
                    } else if (kind == JOB_TERM) {
                        termReq();
                        return;
                    }
                } finally {
                    unmarkAll();
                    outLock.unlock();
                }
                runLate();
            }
        } catch (IOException e) {
            onFailure.accept(lost(e));
        }
    }

    /**
     * Takes the next job off the ring, parking while there is none; an R2T's fields go into the writer's own.
     *
     * @return the job, {@code JOB_CLOSE << 16} when stopped with nothing left
     */
    private int take() {
        while (true) {
            synchronized (this) {
                if (jobCount == 0 && stopped) {
                    return JOB_CLOSE << 16;
                }
                if (jobCount > 0) {
                    int at = jobHead;
                    int job = jobs[at];
                    jobHead = (jobHead + 1) % jobs.length;
                    jobCount--;
                    parked = false;
                    if (job >>> 16 == JOB_H2C) {
                        r2tPending[job & 0xffff]--;
                        r2tTag = jobTag[at];
                        r2tGeneration = jobGeneration[at];
                        r2tOffset = jobOffset[at];
                        r2tLength = jobLength[at];
                    }
                    return job;
                }
                parked = true;
            }
            LockSupport.park(this);
        }
    }

    /** Writes {@code cid}'s capsule and every capsule queued right behind it in one gathering write. */
    private void capsules(int cid) throws IOException {
        int n = 0;
        synchronized (this) {
            if (stopped) {
                return;
            }
            n = claim(cid, n);
            while (jobCount > 0 && n + 3 <= gather.length && jobs[jobHead] >>> 16 == JOB_CAPSULE) {
                int next = jobs[jobHead] & 0xffff;
                jobHead = (jobHead + 1) % jobs.length;
                jobCount--;
                n = claim(next, n);
            }
        }
        writeFully(gather, n);
    }

    // Called with the lock held.
    private int claim(int cid, int n) {
        CommandSlot s = slots.slot(cid);
        if (s.busy && capsulePending[cid]) {
            capsulePending[cid] = false;
            if (s.inCapsule) {
                mark(s);
            }
            return s.capsuleBuffers(gather, n, tx.dataDigest());
        }
        return n;
    }

    /** Answers the R2T just taken for {@code s} with H2CData PDUs of at most MAXH2CDATA each. */
    private void h2cData(CommandSlot s) throws IOException {
        synchronized (this) {
            if (stopped) {
                return;
            }
        }
        int ttag = r2tTag;
        long off = r2tOffset;
        long end = off + r2tLength;
        // Taken from the slot now: once the last byte is out, the command may complete and its slot be reused.
        ByteBuffer v = s.view;
        if (!s.busy || s.generation != r2tGeneration || v == null) {
            return; // the command completed or failed meanwhile (a target answering before it had the data)
        }
        synchronized (this) {
            mark(s);
        }
        boolean dd = tx.dataDigest();
        while (off < end) {
            int n = (int) Math.min(maxH2CData, end - off);
            h2c.limit(h2c.capacity());
            h2c.putShort(8, (short) s.cid);
            h2c.putShort(10, (short) ttag);
            h2c.putInt(12, (int) off);
            h2c.putInt(16, n);
            h2c.putInt(20, 0);
            PduCodec.finishHeader(h2c, Pdu.H2C_DATA, off + n == end ? Pdu.FLAG_LAST_PDU : 0, n, tx, crc);
            v.limit((int) off + n).position((int) off);
            gather[0] = h2c;
            gather[1] = v;
            if (dd) {
                h2cDigest.clear().putInt(0, PduCodec.crc32c(crc, v));
                gather[2] = h2cDigest;
            }
            writeFully(gather, dd ? 3 : 2);
            off += n;
        }
    }

    private void termReq() throws IOException {
        int fes;
        synchronized (this) {
            fes = termFes;
        }
        term.limit(term.capacity());
        for (int i = 8; i < 24; i++) {
            term.put(i, (byte) 0);
        }
        term.putShort(8, (short) fes);
        PduCodec.finishHeader(term, Pdu.H2C_TERM_REQ, 0, 0, tx, crc);
        gather[0] = term;
        writeFully(gather, 1);
    }

    private void writeFully(ByteBuffer[] bufs, int n) throws IOException {
        long left = 0;
        for (int i = 0; i < n; i++) {
            left += bufs[i].remaining();
        }
        int first = 0;
        while (left > 0) {
            left -= channel.write(bufs, first, n - first);
            while (first < n && !bufs[first].hasRemaining()) {
                first++;
            }
        }
    }
}
