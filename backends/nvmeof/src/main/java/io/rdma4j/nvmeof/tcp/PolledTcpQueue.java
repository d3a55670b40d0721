package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.CommandTimeoutEvent;
import io.rdma4j.nvmeof.internal.HandlerCalls;
import io.rdma4j.nvmeof.internal.PolledIo;
import io.rdma4j.nvmeof.internal.Sqe;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * One NVMe/TCP I/O queue run to completion on its caller's thread: no thread of its own, no lock, no future. Submitting
 * writes a command's capsule header in place into its slot and appends it to the {@link SendRing}; {@link #poll} sends
 * every capsule and H2CData queued since the last poll in one gathering {@code sendmsg}, then receives as much as the
 * socket holds in one {@code recv} into a 128 KiB buffer and parses every PDU in it (a C2HData's data is copied to the
 * caller's memory, or received straight into it when it is large and confined to this thread), answers R2Ts, and calls
 * the caller's {@link IoCompletion} with each finished command's tag and status. With digests off, nothing on this path
 * allocates.
 *
 * <p>The caller's memory must stay open until its command completes: a write's bytes go out from it by address, when
 * the queue next polls. The queue is driven by one thread at a time.
 */
public final class PolledTcpQueue implements PolledIo {

    /** Receive calls one poll makes at most, so a stream that never pauses cannot keep the caller in poll. */
    private static final int RECEIVES_PER_POLL = 32;

    private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String name;
    private final HandlerCalls calls;
    private final NativeSocket socket;
    private final Arena arena = Arena.ofShared();
    private final PduCodec.Settings txSettings;
    private final int maxData;
    private final int inCapsuleLimit;
    private final long maxH2CData;
    private final long ioTimeoutNanos;
    private final PolledSlots slots;
    private final SendRing ring;
    /** H2CData headers answering each slot's R2T: {@link #h2cPerSlot} of {@link PolledSlots#HEADER_ROOM} bytes. */
    private final MemorySegment h2c;

    private final MemorySegment h2cDigests;
    private final int h2cPerSlot;
    /** Where an outgoing PDU header is built: {@link #scratchSegment} as a little-endian buffer. */
    private final ByteBuffer scratch;

    private final MemorySegment scratchSegment;
    /** Sending's own: receiving has another, as a command may be submitted while a C2HData is half received. */
    private final CRC32C txCrc = new CRC32C();

    private final PolledReceiver receiver;

    private boolean closed;
    private long nextScan;
    private volatile NvmeException failure;
    /** Why the last {@link #waitFor} failed, for the next {@link #poll} to fail the queue with; null while none did. */
    private volatile NvmeConnectionException waitFailure;

    /** DW0 of the completion being reported (0 for a read that C2HData's SUCCESS flag completed). */
    private int dw0;

    private PolledTcpQueue(String name, NativeSocket socket, TcpQueue.Config config, Pdu.IcResp resp) {
        this.name = name;
        this.calls = new HandlerCalls(name);
        this.socket = socket;
        this.txSettings = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), resp.cpda());
        this.maxData = config.maxData();
        this.inCapsuleLimit = config.inCapsuleLimit();
        this.maxH2CData = resp.maxH2CData();
        this.ioTimeoutNanos = config.ioTimeout().toNanos();
        int depth = config.depth();
        this.h2cPerSlot = (int) Math.max(1, (maxData + maxH2CData - 1) / maxH2CData);
        this.slots = new PolledSlots(
                depth, arena.allocate((long) depth * PolledSlots.HEADER_ROOM, 8), arena.allocate(depth * 4L, 4));
        this.h2c = arena.allocate((long) depth * h2cPerSlot * PolledSlots.HEADER_ROOM, 8);
        this.h2cDigests = arena.allocate((long) depth * h2cPerSlot * 4, 4);
        this.ring = new SendRing(arena, depth * (3 + 3 * h2cPerSlot) + 8);
        this.scratchSegment = arena.allocate(PolledSlots.HEADER_ROOM, 8);
        this.scratch = scratchSegment.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        this.receiver = new PolledReceiver(
                name,
                socket,
                arena,
                new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), 0),
                maxData,
                slots,
                new PolledReceiver.Events() {
                    @Override
                    public void complete(int cid, int status, int dw0) {
                        PolledTcpQueue.this.dw0 = dw0;
                        PolledTcpQueue.this.complete(cid, status);
                    }

                    @Override
                    public void r2t(int cid, int ttag, int r2to, int r2tl) {
                        PolledTcpQueue.this.r2t(cid, ttag, r2to, r2tl);
                    }

                    @Override
                    public void terminate(int fes) {
                        PolledTcpQueue.this.terminate(fes);
                    }
                });
        this.nextScan = System.nanoTime();
    }

    /**
     * Connects, exchanges ICReq/ICResp and sends the Fabrics Connect for {@code config.qid()}, all on this thread
     * within the connect timeout.
     *
     * @param connectData the 1024 bytes of the Connect command (host identifier, controller ID, NQNs)
     * @param source local address to leave from; null: the kernel's route
     */
    public static PolledTcpQueue open(
            InetSocketAddress address, InetAddress source, String name, TcpQueue.Config config, byte[] connectData) {
        long deadline = System.nanoTime() + config.connectTimeout().toNanos();
        NativeSocket s;
        try {
            s = NativeSocket.connect(address, source, config.connectTimeout());
        } catch (IOException e) {
            throw new NvmeConnectionException(
                    "cannot connect to NVMe/TCP target " + address + ": " + e.getMessage()
                            + " (is the target listening there? the default port is 4420)",
                    e);
        }
        PolledTcpQueue q = null;
        try {
            Pdu.IcResp resp = NativeHandshake.exchange(s, name, config, deadline);
            q = new PolledTcpQueue(name, s, config, resp);
            q.connect(config, connectData, deadline);
            return q;
        } catch (IOException e) {
            if (q != null) {
                q.close();
            } else {
                s.close();
            }
            throw new NvmeConnectionException(name + ": connection lost while connecting: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (q != null) {
                q.close();
            } else {
                s.close();
            }
            throw e;
        }
    }

    /** Sends the Fabrics Connect in slot order and waits for its completion. */
    private void connect(TcpQueue.Config config, byte[] connectData, long deadline) throws IOException {
        MemorySegment data = arena.allocate(connectData.length, 8);
        MemorySegment.copy(connectData, 0, data, B, 0, connectData.length);
        int cid = slots.take();
        // SQSIZE is 0-based and must be at least 1: a queue of depth 1 still asks for two entries
        byte[] sqe = Sqe.connect(config.qid(), Math.max(2, config.depth()) - 1, 0, false);
        MemorySegment.copy(sqe, 0, scratchSegment, B, 8, Sqe.SIZE);
        start(cid, data, 0, connectData.length, true, -1L);
        awaitConnect(name, config.qid(), deadline);
    }

    /** @return how many commands fit at once */
    @Override
    public int depth() {
        return slots.depth;
    }

    /** @return commands submitted and not yet completed */
    @Override
    public int inFlight() {
        return slots.inFlight();
    }

    /** @return null while the connection works, else why it does not */
    @Override
    public NvmeException failure() {
        return failure;
    }

    /** @return the largest data one command moves */
    @Override
    public int maxData() {
        return maxData;
    }

    /**
     * Queues a Read or Write of {@code blocks} blocks at {@code slba}, its data {@code length} bytes of native
     * {@code memory} at {@code offset}; the caller has checked the range. It goes out on the next {@link #poll}.
     *
     * @return false when every slot is busy (poll, then submit again)
     * @throws NvmeException when the queue failed
     */
    @Override
    public boolean submitIo(
            boolean write, long nsid, long slba, int blocks, MemorySegment memory, long offset, int length, long tag) {
        int cid = takeSlot();
        if (cid < 0) {
            return false;
        }
        newSqe(write ? Sqe.OPC_WRITE : Sqe.OPC_READ, nsid);
        scratchSegment.set(L, 8 + 40, slba);
        scratchSegment.set(I, 8 + 48, blocks - 1);
        start(cid, memory, offset, length, write, tag);
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

    /** Starts an SQE in the scratch header: {@code opcode}, SGLs, {@code nsid}, every other field 0. */
    private void newSqe(int opcode, long nsid) {
        MemorySegment sqe = scratchSegment;
        sqe.set(L, 8, opcode | (long) Sqe.FLAGS_SGL << 8 | (nsid & 0xffffffffL) << 32);
        for (int o = 16; o < 72; o += 8) {
            sqe.set(L, o, 0);
        }
    }

    /**
     * Queues any command from its 64-byte SQE (CID and SGL1 are filled in here), with {@code length} bytes of native
     * {@code memory} at {@code offset} as its data.
     *
     * @param timed whether the I/O timeout applies (an Asynchronous Event Request may wait for ever)
     * @return false when every slot is busy
     * @throws NvmeException when the queue failed
     */
    public boolean submitCommand(
            byte[] sqe, MemorySegment memory, long offset, int length, boolean write, boolean timed, long tag) {
        int cid = takeSlot();
        if (cid < 0) {
            return false;
        }
        MemorySegment.copy(sqe, 0, scratchSegment, B, 8, Sqe.SIZE);
        start(cid, length == 0 ? MemorySegment.NULL : memory, offset, length, write, tag);
        if (!timed) {
            slots.deadline[cid] = Long.MAX_VALUE;
        }
        return true;
    }

    /** @return DW0 of the completion being reported; call it from inside {@link IoCompletion#complete} */
    public int completionDw0() {
        return dw0;
    }

    /** Queues a Flush of namespace {@code nsid}. */
    @Override
    public boolean submitFlush(long nsid, long tag) {
        int cid = takeSlot();
        if (cid < 0) {
            return false;
        }
        newSqe(Sqe.OPC_FLUSH, nsid);
        start(cid, MemorySegment.NULL, 0, 0, false, tag);
        return true;
    }

    /**
     * Takes the SQE in the scratch header into slot {@code cid}: fills CID and SGL1, frames the capsule and queues it
     * (with in-capsule data) for sending.
     */
    private void start(int cid, MemorySegment memory, long offset, int length, boolean write, long tag) {
        PolledSlots t = slots;
        t.tag[cid] = tag;
        t.memory[cid] = memory;
        t.offset[cid] = offset;
        t.length[cid] = length;
        t.toController[cid] = write;
        t.deadline[cid] = ioTimeoutNanos > 0 ? System.nanoTime() + ioTimeoutNanos : Long.MAX_VALUE;
        boolean inCapsule = write && length > 0 && length <= inCapsuleLimit;
        t.inCapsule[cid] = inCapsule;
        MemorySegment sqe = scratchSegment;
        sqe.set(S, 8 + 2, (short) cid);
        sqe.set(L, 8 + 24, 0);
        sqe.set(I, 8 + 32, length);
        sqe.set(B, 8 + 39, (byte) (inCapsule ? Sqe.SGL_DATA_BLOCK_OFFSET : Sqe.SGL_TRANSPORT_DATA_BLOCK));
        PduCodec.finishHeader(scratch, Pdu.CAPSULE_CMD, 0, inCapsule ? length : 0, txSettings, txCrc);
        int headerBytes = scratch.limit();
        long at = (long) cid * PolledSlots.HEADER_ROOM;
        MemorySegment.copy(scratchSegment, 0, t.capsules, at, headerBytes);
        ring.add(t.capsules.address() + at, headerBytes);
        if (inCapsule) {
            ring.add(memory.address() + offset, length);
            if (txSettings.dataDigest()) {
                t.capsuleDigests.set(I, cid * 4L, digest(memory, offset, length));
                ring.add(t.capsuleDigests.address() + cid * 4L, 4);
            }
        }
    }

    /** CRC32C of caller memory (data digests only: the one place this queue makes a buffer view per PDU). */
    private int digest(MemorySegment memory, long offset, int length) {
        txCrc.reset();
        txCrc.update(memory.asSlice(offset, length).asByteBuffer());
        return (int) txCrc.getValue();
    }

    /**
     * Sends what was queued, receives and handles what arrived, and reports each finished command to {@code handler};
     * never blocks.
     *
     * @return commands completed
     */
    @Override
    public int poll(IoCompletion handler) {
        calls.begin(handler);
        try {
            NvmeConnectionException waited = waitFailure;
            if (waited != null && failure == null) {
                fail(waited);
            }
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
                arena.close(); // closed from the handler: the buffers go now that nothing uses them
            }
        }
    }

    /**
     * Sends what was queued, as far as the socket takes it, and receives nothing: a command can go out from a thread
     * other than the one that polls (never both at once). Never blocks.
     *
     * @return whether everything queued went out; false leaves the rest to the next {@link #poll}, and a broken
     *     connection for it to find and fail (the polling thread may be waiting on the socket: it closes it, not this)
     */
    public boolean send() {
        if (failure != null) {
            return false;
        }
        try {
            return ring.flush(socket);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Lets large C2HData go straight into memory other threads may free, not only into memory confined to the polling
     * thread: one copy fewer, at the cost of a small object per receive (see
     * {@link PolledReceiver#receiveIntoSharedMemory}). For a queue whose callers allocate per I/O anyway
     * ({@link DrivenTcpQueue}); call it before the first command.
     */
    void receiveIntoSharedMemory() {
        receiver.receiveIntoSharedMemory();
    }

    /**
     * Polls, and when nothing completed waits up to {@code timeoutNanos} for the socket to have something (a
     * completion, room to send), then polls again.
     *
     * @return commands completed
     */
    @Override
    public int await(IoCompletion handler, long timeoutNanos) {
        int n = poll(handler);
        if (n > 0 || failure != null || (slots.inFlight() == 0 && ring.isEmpty())) {
            return n;
        }
        try {
            short events = (short) (NativeSocket.POLLIN | (ring.isEmpty() ? 0 : NativeSocket.POLLOUT));
            socket.await(events, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000)));
        } catch (IOException e) {
            fail(new NvmeConnectionException(name + ": connection lost: " + e.getMessage(), e));
        }
        return poll(handler);
    }

    private void progress() {
        try {
            ring.flush(socket);
            for (int i = 0; i < RECEIVES_PER_POLL; i++) {
                if (!receiver.receive()) {
                    break;
                }
            }
            if (!ring.isEmpty()) {
                ring.flush(socket);
            }
            long now = System.nanoTime();
            if (ioTimeoutNanos > 0 && now - nextScan >= 0) {
                nextScan = now + Math.max(10_000_000L, ioTimeoutNanos / 8);
                int late = slots.late(now);
                if (late >= 0) {
                    String what = slots.describe(late);
                    CommandTimeoutEvent.emit(name, what, "tcp", ioTimeoutNanos);
                    fail(new NvmeConnectionException(name + ": " + what + " got no completion within "
                            + ioTimeoutNanos / 1_000_000 + " ms (the I/O timeout); the connection was closed"));
                }
            }
        } catch (IOException e) {
            fail(new NvmeConnectionException(name + ": connection lost: " + e.getMessage(), e));
        } catch (PolledReceiver.TerminatedByTarget | NvmeConnectionException e) {
            fail(e);
        } catch (NvmeProtocolException e) {
            terminate(e.getMessage().contains("header digest") ? 3 : 1);
            fail(new NvmeProtocolException(name + ": " + e.getMessage() + "; the connection was closed", e));
        }
    }

    /** Answers an R2T with H2CData PDUs of at most MAXH2CDATA bytes each, queued for the next send. */
    private void r2t(int cid, int ttag, int r2toField, int r2tlField) {
        PolledSlots t = slots;
        long r2to = r2toField & 0xffffffffL;
        long r2tl = r2tlField & 0xffffffffL;
        if (r2tl == 0) {
            throw new NvmeProtocolException("R2T asks for 0 bytes (R2TL 0)");
        }
        if (!t.toController[cid] || t.length[cid] == 0 || t.inCapsule[cid]) {
            throw new NvmeProtocolException("R2T for " + t.describe(cid) + ", which has no data waiting for an R2T");
        }
        if (r2to != t.moved[cid] || r2to + r2tl > t.length[cid]) {
            throw new NvmeProtocolException("R2T for " + t.describe(cid) + " asks for bytes [" + r2to + ", "
                    + (r2to + r2tl) + "); expected a range from offset " + t.moved[cid] + " within " + t.length[cid]
                    + " bytes");
        }
        long base = t.memory[cid].address() + t.offset[cid];
        long off = r2to;
        long end = r2to + r2tl;
        int k = 0;
        MemorySegment p = scratchSegment;
        while (off < end) {
            int n = (int) Math.min(maxH2CData, end - off);
            boolean last = off + n == end;
            for (int o = 8; o < 24; o += 8) {
                p.set(L, o, 0);
            }
            p.set(S, 8, (short) cid);
            p.set(S, 10, (short) ttag);
            p.set(I, 12, (int) off);
            p.set(I, 16, n);
            PduCodec.finishHeader(scratch, Pdu.H2C_DATA, last ? Pdu.FLAG_LAST_PDU : 0, n, txSettings, txCrc);
            int headerBytes = scratch.limit();
            long at = ((long) cid * h2cPerSlot + k) * PolledSlots.HEADER_ROOM;
            MemorySegment.copy(scratchSegment, 0, h2c, at, headerBytes);
            ring.add(h2c.address() + at, headerBytes);
            ring.add(base + off, n);
            if (txSettings.dataDigest()) {
                long d = ((long) cid * h2cPerSlot + k) * 4;
                h2cDigests.set(I, d, digest(t.memory[cid], t.offset[cid] + off, n));
                ring.add(h2cDigests.address() + d, 4);
            }
            off += n;
            k++;
        }
        t.moved[cid] = end;
    }

    /** Frees {@code cid}'s slot and tells the caller. */
    private void complete(int cid, int status) {
        PolledSlots t = slots;
        long tag = t.tag[cid];
        boolean lost = t.lost[cid];
        t.release(cid);
        calls.report(tag, lost && status == 0 ? MEMORY_FREED : status);
    }

    /** Completes every command in flight with {@link #FAILED}. */
    private void failOutstanding() {
        PolledSlots t = slots;
        for (int cid = 0; cid < t.depth; cid++) {
            if (t.busy[cid]) {
                long tag = t.tag[cid];
                t.release(cid);
                calls.report(tag, FAILED);
            }
        }
    }

    /** Best effort: tells the target why in an H2CTermReq before the connection closes. */
    private void terminate(int fes) {
        byte[] b = PduCodec.encode(new Pdu.TermReq(false, fes, 0, new byte[0]), txSettings);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(b.length + NativeSocket.IOVEC, 8);
            MemorySegment.copy(b, 0, m, B, NativeSocket.IOVEC, b.length);
            m.set(ValueLayout.JAVA_LONG, 0, m.address() + NativeSocket.IOVEC);
            m.set(ValueLayout.JAVA_LONG, 8, b.length);
            socket.send(m.address(), 1);
        } catch (IOException e) {
            // the connection is going anyway
        }
    }

    /**
     * Waits up to {@code timeoutNanos} until the socket has something (data, or room to send what waits) or
     * {@code wakeFd} is readable; for a thread that drives this queue and takes commands from others. It may run while
     * another thread sends ({@link #send}): it changes nothing, and a failed wait is failed by the next {@link #poll}.
     *
     * @return whether {@code wakeFd} was readable (its reader should clear it)
     */
    public boolean waitFor(long timeoutNanos, int wakeFd) {
        if (failure != null) {
            return false;
        }
        try {
            short events = (short) (NativeSocket.POLLIN | (ring.isEmpty() ? 0 : NativeSocket.POLLOUT));
            socket.await(events, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000)), wakeFd);
            return socket.woken();
        } catch (IOException e) {
            waitFailure = new NvmeConnectionException(name + ": connection lost: " + e.getMessage(), e);
            return false;
        }
    }

    /**
     * Closes the connection with {@code why}; every command in flight completes with {@link #FAILED} on the next poll.
     * Idempotent: the first reason stays.
     */
    public void fail(NvmeException why) {
        if (failure != null) {
            return;
        }
        failure = why;
        ring.clear();
        socket.close();
    }

    /**
     * Closes the connection. Commands still in flight are dropped without a completion; their memory is no longer
     * touched once this returns. Call it from the thread that polls the queue.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        fail(new NvmeConnectionException(name + ": closed by this host"));
        if (!calls.polling()) {
            arena.close(); // else when the poll calling the handler that closed it returns
        }
    }
}
