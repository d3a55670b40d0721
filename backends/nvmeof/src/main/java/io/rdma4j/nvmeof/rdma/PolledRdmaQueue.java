package io.rdma4j.nvmeof.rdma;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RECV;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_SEND;

import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.SendWr;
import io.rdma4j.ibverbs.VerbsException;
import io.rdma4j.ibverbs.WorkCompletions;
import io.rdma4j.ibverbs.ffi.Poll;
import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.CommandTimeoutEvent;
import io.rdma4j.nvmeof.internal.HandlerCalls;
import io.rdma4j.nvmeof.internal.PolledIo;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.ByteOrder;

/**
 * One NVMe/RDMA I/O queue run to completion on its caller's thread: no thread of its own, no lock, no future, no
 * request object. Submitting writes a command's SQE in place into its registered capsule slot, with the data's keyed
 * SGL (the caller's memory, registered once and reused) or the data itself when a write fits in the capsule;
 * {@link #poll} posts every capsule queued since the last poll as one chain of SENDs in one {@code ibv_post_send}, then
 * reaps the completion queue: a response is parsed where it landed and its receive posted again, and a command is
 * reported to the caller's {@link IoCompletion} once both its SEND and its response completed. The target moves the
 * data itself, by RDMA READ and WRITE on the caller's memory. Nothing on this path allocates.
 *
 * <p>The caller's memory must stay open until its command completes: the target reads and writes it by address. GPU
 * memory registered with {@code Controller.registerDevice} (a segment over its device addresses) is named by keyed SGLs
 * straight at that registration and never copied into a capsule.
 */
public final class PolledRdmaQueue implements PolledIo {
    private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Work completions reaped per {@code ibv_poll_cq}. */
    private static final int WC_BATCH = 32;
    /** CQ polls one {@link #poll} makes at most, so a queue that never runs dry cannot keep the caller in poll. */
    private static final int REAPS_PER_POLL = 16;
    /** Polls that found nothing between two looks at the RDMA-CM channel for a disconnect. */
    private static final int IDLE_POLLS_PER_CM_CHECK = 64;
    /** Completion events taken before one {@code ibv_ack_cq_events} for all of them. */
    private static final int ACK_BATCH = 32;

    private final String name;
    private final HandlerCalls calls;
    private final RdmaConnection conn;
    private final RdmaResources resources;
    private final MemorySegment capsules;
    private final int capsuleSize;
    private final int maxData;
    private final int inCapsuleLimit;
    private final long ioTimeoutNanos;
    private final PolledRdmaSlots slots;
    /** One SEND per slot, of its capsule; chained at post time. */
    private final SendWr[] sends;

    private final WorkCompletions wcs = new WorkCompletions(WC_BATCH);
    /** Waits on the completion and RDMA-CM channels without allocating. */
    private final Poll.Waiter waiter = new Poll.Waiter();
    /** Command identifiers whose capsules wait for the next post, in submission order. */
    private final int[] pending;

    private int pendingCount;
    /** The last registration used, for the next command on the same memory (no map lookup, no boxing). */
    private MemoryRegion lastRegion;
    /** {@link #lastRegion} is a registration of device memory ({@code Controller.registerDevice}). */
    private boolean lastIsDevice;

    private int idlePolls;
    private int unacked;
    private boolean closed;
    private boolean released;
    private long nextScan;
    private volatile NvmeException failure;

    private PolledRdmaQueue(String name, RdmaQueue.Config config, RdmaResources resources, RdmaConnection conn) {
        this.name = name;
        this.calls = new HandlerCalls(name);
        this.conn = conn;
        this.resources = resources;
        this.capsules = conn.capsules.segment();
        this.capsuleSize = conn.capsuleSize;
        this.maxData = config.maxData();
        this.inCapsuleLimit = config.inCapsuleLimit();
        this.ioTimeoutNanos = config.ioTimeout().toNanos();
        int depth = config.depth();
        this.slots = new PolledRdmaSlots(depth);
        this.pending = new int[depth];
        this.sends = new SendWr[depth];
        for (int cid = 0; cid < depth; cid++) {
            sends[cid] = new SendWr(1).send(cid, conn.capsules, (long) cid * capsuleSize, Sqe.SIZE, IBV_SEND_SIGNALED);
        }
        this.nextScan = System.nanoTime();
    }

    /**
     * Connects through RDMA-CM and sends the Fabrics Connect for {@code config.qid()}, on this thread within the
     * connect timeout.
     *
     * @param source a local address of the RDMA device to leave from; null lets RDMA-CM route
     * @param connectData the 1024 bytes of the Connect command (host identifier, controller ID, NQNs)
     */
    public static PolledRdmaQueue open(
            String host,
            int port,
            InetAddress source,
            String name,
            RdmaQueue.Config config,
            RdmaResources resources,
            byte[] connectData) {
        long deadline = System.nanoTime() + config.connectTimeout().toNanos();
        RdmaConnection c = RdmaConnection.open(host, port, source, name, config, resources);
        PolledRdmaQueue q = null;
        try {
            q = new PolledRdmaQueue(name, config, resources, c);
            q.connect(config, connectData, deadline);
            return q;
        } catch (RuntimeException | Error e) {
            if (q != null) {
                q.close();
            } else {
                c.close();
            }
            throw e;
        }
    }

    /**
     * Sends the Fabrics Connect, its data by keyed SGL from a registration of its own, and waits for its completion.
     */
    private void connect(RdmaQueue.Config config, byte[] connectData, long deadline) {
        MemorySegment data = conn.arena.allocate(connectData.length, 8);
        MemorySegment.copy(connectData, 0, data, B, 0, connectData.length);
        try (MemoryRegion mr = conn.qp.pd().register(data, RdmaResources.ACCESS)) {
            int cid = slots.take();
            byte[] sqe = Sqe.connect(config.qid(), config.depth() - 1, 0, false);
            long at = (long) cid * capsuleSize;
            MemorySegment.copy(sqe, 0, capsules, B, at, Sqe.SIZE);
            start(cid, data, 0, connectData.length, true, mr, -1L, true);
            awaitConnect(name, config.qid(), deadline);
        }
    }

    @Override
    public int depth() {
        return slots.depth;
    }

    @Override
    public int inFlight() {
        return slots.inFlight();
    }

    @Override
    public NvmeException failure() {
        return failure;
    }

    @Override
    public int maxData() {
        return maxData;
    }

    @Override
    public boolean submitIo(
            boolean write, long nsid, long slba, int blocks, MemorySegment memory, long offset, int length, long tag) {
        int cid = takeSlot();
        if (cid < 0) {
            return false;
        }
        long at = (long) cid * capsuleSize;
        newSqe(at, write ? Sqe.OPC_WRITE : Sqe.OPC_READ, nsid);
        capsules.set(L, at + 40, slba);
        capsules.set(I, at + 48, blocks - 1);
        // registered device memory is never copied into a capsule: the CPU must not touch it
        boolean inCapsule = write
                && length <= inCapsuleLimit
                && resources.deviceRegion(memory.address(), memory.byteSize()) == null;
        MemoryRegion mr = null;
        if (!inCapsule) {
            try {
                mr = region(memory);
            } catch (RuntimeException e) {
                slots.release(cid);
                throw new NvmeConnectionException(
                        name + ": cannot register the memory of a " + (write ? "write" : "read") + ": "
                                + e.getMessage(),
                        e);
            }
        }
        start(cid, memory, offset, length, write, mr, tag, true);
        return true;
    }

    @Override
    public boolean submitFlush(long nsid, long tag) {
        int cid = takeSlot();
        if (cid < 0) {
            return false;
        }
        newSqe((long) cid * capsuleSize, Sqe.OPC_FLUSH, nsid);
        start(cid, MemorySegment.NULL, 0, 0, false, null, tag, true);
        return true;
    }

    /** @return a free slot's CID, or -1 when none is free; throws when the queue failed */
    private int takeSlot() {
        NvmeException f = failure;
        if (f != null) {
            throw new NvmeConnectionException(name + ": this queue failed: " + f.getMessage(), f);
        }
        return slots.take();
    }

    /** Starts an SQE in capsule slot {@code at}: {@code opcode}, SGLs, {@code nsid}, every other field 0. */
    private void newSqe(long at, int opcode, long nsid) {
        capsules.set(L, at, opcode | (long) Sqe.FLAGS_SGL << 8 | (nsid & 0xffffffffL) << 32);
        for (int o = 8; o < Sqe.SIZE; o += 8) {
            capsules.set(L, at + o, 0);
        }
    }

    /**
     * Finishes the SQE in slot {@code cid}: CID and SGL1 (in-capsule data, copied in now; a keyed SGL over {@code mr};
     * or the null descriptor Linux sends for no data, since nvmet-rdma refuses an all-zero SGL1), and queues its
     * capsule for the next post.
     *
     * @param mr the registration covering the data; null for in-capsule data or none
     */
    private void start(
            int cid,
            MemorySegment memory,
            long offset,
            int length,
            boolean write,
            MemoryRegion mr,
            long tag,
            boolean timed) {
        PolledRdmaSlots t = slots;
        t.tag[cid] = tag;
        t.memory[cid] = memory;
        t.deadline[cid] = timed && ioTimeoutNanos > 0 ? System.nanoTime() + ioTimeoutNanos : Long.MAX_VALUE;
        long at = (long) cid * capsuleSize;
        capsules.set(S, at + 2, (short) cid);
        int capsuleBytes = Sqe.SIZE;
        if (length > 0 && mr == null) {
            capsules.set(L, at + 24, 0);
            capsules.set(I, at + 32, length);
            capsules.set(B, at + 39, (byte) Sqe.SGL_DATA_BLOCK_OFFSET);
            MemorySegment.copy(memory, offset, capsules, at + Sqe.SIZE, length);
            capsuleBytes += length;
        } else {
            capsules.set(L, at + 24, length == 0 ? 0 : memory.address() + offset);
            capsules.set(I, at + 32, length); // 24-bit length; its high byte is the key's first, written next
            capsules.set(I, at + 35, length == 0 ? 0 : mr.rkey());
            capsules.set(B, at + 39, (byte) Sqe.SGL_KEYED_DATA_BLOCK);
        }
        sends[cid].sge(conn.capsules, at, capsuleBytes);
        pending[pendingCount++] = cid;
    }

    /** A registration covering {@code memory}: the last one used when it does, else from the controller's. */
    private MemoryRegion region(MemorySegment memory) {
        MemoryRegion mr = lastRegion;
        long start = memory.address();
        long end = start + memory.byteSize();
        if (mr != null
                && !mr.isClosed()
                && start >= mr.address()
                && end <= mr.address() + mr.length()
                && (lastIsDevice
                        || (mr.segment().scope() == memory.scope()
                                && memory.scope().isAlive()))) {
            return mr;
        }
        mr = resources.deviceRegion(start, memory.byteSize());
        lastIsDevice = mr != null;
        if (mr == null) {
            mr = resources.region(memory);
        }
        lastRegion = mr;
        return mr;
    }

    @Override
    public int poll(IoCompletion handler) {
        calls.begin(handler);
        try {
            if (failure == null) {
                progress();
            }
            if (failure != null) {
                failOutstanding();
            }
            return calls.finish();
        } finally {
            calls.end();
            if (closed) {
                release(); // closed from the handler: the resources go now that nothing uses them
            }
        }
    }

    @Override
    public int await(IoCompletion handler, long timeoutNanos) {
        int n = poll(handler);
        if (n > 0 || failure != null || (slots.inFlight() == 0 && pendingCount == 0)) {
            return n;
        }
        try {
            int rc = conn.cq.requestNotify(false);
            if (rc != 0) {
                throw new NvmeConnectionException(name + ": ibv_req_notify_cq failed with errno " + rc);
            }
            n = poll(handler); // a completion that landed before the arming raises no event
            if (n > 0 || failure != null) {
                return n;
            }
            int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000));
            int ready = waiter.readable(conn.events.fd(), conn.channel.fd(), ms);
            if ((ready & 2) != 0) {
                checkCm();
            }
            if ((ready & 1) != 0 && conn.events.getEvent(0) != null && ++unacked >= ACK_BATCH) {
                conn.cq.ackEvents();
                unacked = 0;
            }
        } catch (NvmeConnectionException e) {
            fail(e);
        } catch (RuntimeException e) {
            fail(new NvmeConnectionException(name + ": waiting for completions failed: " + e, e));
        }
        return n + poll(handler);
    }

    private void progress() {
        try {
            post();
            for (int i = 0; i < REAPS_PER_POLL && failure == null; i++) {
                int n = conn.cq.poll(wcs);
                if (n < 0) {
                    throw new NvmeConnectionException(name + ": ibv_poll_cq failed (" + n + ")");
                }
                if (n == 0) {
                    break;
                }
                reap(n);
                if (failure == null) {
                    post(); // what the handler submitted
                }
            }
            if (calls.completed() == 0 && ++idlePolls >= IDLE_POLLS_PER_CM_CHECK) {
                idlePolls = 0;
                checkCm();
            }
            long now = System.nanoTime();
            if (ioTimeoutNanos > 0 && now - nextScan >= 0) {
                nextScan = now + Math.max(10_000_000L, ioTimeoutNanos / 8);
                int late = slots.late(now);
                if (late >= 0) {
                    String what = describe(late);
                    CommandTimeoutEvent.emit(name, what, "rdma", ioTimeoutNanos);
                    fail(new NvmeConnectionException(name + ": " + what + " got no completion within "
                            + ioTimeoutNanos / 1_000_000 + " ms (the I/O timeout); the connection was reset"));
                }
            }
        } catch (NvmeProtocolException e) {
            fail(new NvmeProtocolException(name + ": " + e.getMessage() + "; the connection was closed", e));
        } catch (NvmeConnectionException e) {
            fail(e);
        } catch (RuntimeException e) {
            fail(new NvmeConnectionException(name + ": " + e.getMessage(), e));
        }
    }

    /** Posts every queued capsule as one chain of SENDs. */
    private void post() {
        int n = pendingCount;
        if (n == 0) {
            return;
        }
        for (int i = 0; i < n - 1; i++) {
            sends[pending[i]].next(sends[pending[i + 1]]);
        }
        SendWr last = sends[pending[n - 1]];
        last.next(null);
        pendingCount = 0;
        int rc = conn.qp.postSend(sends[pending[0]]);
        if (rc != 0) {
            throw new NvmeConnectionException(name + ": ibv_post_send of " + n + " capsules failed with errno " + rc);
        }
    }

    private void checkCm() {
        if (waiter.readable(conn.channel.fd(), -1, 0) == 0) {
            return;
        }
        String gone = conn.lost();
        if (gone != null) {
            fail(new NvmeConnectionException(name + ": the target disconnected (" + gone + ")"));
        }
    }

    /** Handles {@code n} polled work completions. */
    private void reap(int n) {
        for (int i = 0; i < n; i++) {
            long wrId = wcs.wrId(i);
            boolean recv = (wrId & RdmaConnection.RECV_TAG) != 0;
            if (!wcs.isSuccess(i)) {
                int st = wcs.status(i);
                throw new NvmeConnectionException(name + ": a " + (recv ? "receive" : "send") + " completed with "
                        + VerbsException.wcStatusName(st) + " (" + VerbsException.wcStatusText(st)
                        + "): the connection is lost");
            }
            int opcode = wcs.opcode(i);
            int index = (int) wrId;
            if (recv && opcode == IBV_WC_RECV) {
                received(index, wcs.byteLen(i));
            } else if (!recv && opcode == IBV_WC_SEND && index >= 0 && index < slots.depth && slots.busy[index]) {
                slots.sent[index] = true;
                if (slots.answered[index]) {
                    complete(index);
                }
            } else {
                throw new NvmeProtocolException(
                        "unexpected work completion (opcode " + opcode + ", id 0x" + Long.toHexString(wrId) + ")");
            }
            if (failure != null) {
                return; // the handler closed the queue
            }
        }
    }

    /** A response landed in receive slot {@code index}: parsed in place, its receive posted again. */
    private void received(int index, int length) {
        if (index < 0 || index >= slots.depth) {
            throw new NvmeProtocolException("a receive completed with unknown work request id " + index);
        }
        if (length != RdmaConnection.CQE_SIZE) {
            throw new NvmeProtocolException("the target sent a " + length
                    + "-byte message; NVMe/RDMA responses are 16-byte completion entries");
        }
        MemorySegment r = conn.responses.segment();
        long at = (long) index * RdmaConnection.CQE_SIZE;
        int cid = r.get(S, at + 12) & 0xffff;
        int status = (r.get(S, at + 14) & 0xffff) >>> 1;
        conn.postRecv(index);
        PolledRdmaSlots t = slots;
        if (cid >= t.depth || !t.busy[cid] || t.answered[cid]) {
            throw new NvmeProtocolException(
                    "a completion names command identifier " + cid + ", which has no command in flight");
        }
        t.answered[cid] = true;
        t.status[cid] = status;
        if (t.sent[cid]) {
            complete(cid);
        }
    }

    /** Frees {@code cid}'s slot and tells the caller. */
    private void complete(int cid) {
        PolledRdmaSlots t = slots;
        long tag = t.tag[cid];
        int status = t.status[cid];
        MemorySegment m = t.memory[cid];
        t.release(cid);
        calls.report(tag, status == 0 && m != null && !m.scope().isAlive() ? MEMORY_FREED : status);
    }

    /** Completes every command in flight with {@link #FAILED}. */
    private void failOutstanding() {
        PolledRdmaSlots t = slots;
        pendingCount = 0;
        for (int cid = 0; cid < t.depth; cid++) {
            if (t.busy[cid]) {
                long tag = t.tag[cid];
                t.release(cid);
                calls.report(tag, FAILED);
            }
        }
    }

    /** Names the command in {@code cid}'s slot for an error message, from its capsule (the cold path). */
    private String describe(int cid) {
        byte[] sqe = new byte[Sqe.SIZE];
        MemorySegment.copy(capsules, B, (long) cid * capsuleSize, sqe, 0, Sqe.SIZE);
        return Sqe.describe(sqe);
    }

    /**
     * Disconnects with {@code why}: the queue pair goes to error, so the target no longer touches the caller's memory;
     * every command in flight completes with {@link #FAILED} on the next poll. Idempotent: the first reason stays.
     */
    public void fail(NvmeException why) {
        if (failure != null) {
            return;
        }
        failure = why;
        conn.disconnect();
    }

    /**
     * Disconnects and releases the connection. Commands still in flight are dropped without a completion; their memory
     * is no longer touched once this returns. Call it from the thread that polls the queue.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        fail(new NvmeConnectionException(name + ": closed by this host"));
        if (!calls.polling()) {
            release(); // else when the poll calling the handler that closed it returns
        }
    }

    private void release() {
        if (released) {
            return;
        }
        released = true;
        conn.close();
        for (SendWr w : sends) {
            if (w != null) {
                w.close();
            }
        }
        wcs.close();
        waiter.close();
    }

    @Override
    public String toString() {
        return "PolledRdmaQueue[" + name + ", depth " + slots.depth + "]";
    }
}
