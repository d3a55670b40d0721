package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.NvmeStatusException;
import io.rdma4j.nvmeof.internal.CommandTimeoutEvent;
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
public final class PolledTcpQueue implements AutoCloseable {
    /** Completion statuses below 0. */
    public static final int FAILED = -1, MEMORY_FREED = -2;

    private static final int RX_SIZE = 128 << 10;
    /** C2HData payload at least this large goes from the socket straight into the caller's (confined) memory. */
    private static final int DIRECT_MIN = 16 << 10;
    /** Receive calls one poll makes at most, so a stream that never pauses cannot keep the caller in poll. */
    private static final int RECEIVES_PER_POLL = 32;
    /** Never started: a segment it may not touch is confined to some thread. */
    private static final Thread NOBODY = Thread.ofPlatform().unstarted(() -> {});

    private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private enum Rx {
        HEADER,
        DATA,
        DIGEST
    }

    private final String name;
    private final NativeSocket socket;
    private final Arena arena = Arena.ofShared();
    private final PduCodec.Settings rxSettings;
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
    /** Where an incoming PDU header is checked and read: {@link #headerSegment} as a little-endian buffer. */
    private final ByteBuffer header;

    private final MemorySegment headerSegment;
    private final MemorySegment rx;
    private final ByteBuffer rxView;
    /** For received digests; sending has its own, as a command may be submitted while a C2HData is half received. */
    private final CRC32C crc = new CRC32C();

    private final CRC32C txCrc = new CRC32C();
    private final PduCodec.Header h = new PduCodec.Header();

    private int rxPos, rxEnd;
    private Rx rxState = Rx.HEADER;
    /** The C2HData being received: its slot, where its data goes within the command, how much is left, its flags. */
    private int dataCid;

    private long dataAt;
    private int dataLeft;
    private int dataFlags;
    private int dataLength;
    private IoCompletion handler;
    /** Completions reported by the poll in progress. */
    private int completed;

    private boolean polling;
    private boolean closed;
    private long nextScan;
    private volatile NvmeException failure;
    /** DW0 of the completion being reported (0 for a read that C2HData's SUCCESS flag completed). */
    private int dw0;

    private PolledTcpQueue(String name, NativeSocket socket, TcpQueue.Config config, Pdu.IcResp resp) {
        this.name = name;
        this.socket = socket;
        this.rxSettings = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), 0);
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
        this.headerSegment = arena.allocate(PolledSlots.HEADER_ROOM, 8);
        this.header = headerSegment.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        this.rx = arena.allocate(RX_SIZE, 64);
        this.rxView = rx.asByteBuffer();
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
            Pdu.IcResp resp = icExchange(s, name, config, deadline);
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

    private static Pdu.IcResp icExchange(NativeSocket s, String name, TcpQueue.Config config, long deadline)
            throws IOException {
        Pdu.IcReq req = new Pdu.IcReq(0, 0, config.headerDigest(), config.dataDigest(), 0);
        byte[] out = PduCodec.encode(req, PduCodec.Settings.INITIAL);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256, 8);
            MemorySegment.copy(out, 0, buf, B, 0, out.length);
            MemorySegment iov = a.allocate(NativeSocket.IOVEC, 8);
            long sent = 0;
            while (sent < out.length) {
                iov.set(ValueLayout.JAVA_LONG, 0, buf.address() + sent);
                iov.set(ValueLayout.JAVA_LONG, 8, out.length - sent);
                long n = s.send(iov.address(), 1);
                sent += n;
                if (n == 0) {
                    waitFor(s, NativeSocket.POLLOUT, deadline, name, "ICReq");
                }
            }
            byte[] in = receiveExactly(s, a, buf, PduCodec.COMMON_HEADER, deadline, name);
            if (in == null) {
                return Handshake.accept(null, name, config.headerDigest(), config.dataDigest());
            }
            PduCodec.Header ch = PduCodec.checkCommonHeader(in, PduCodec.Settings.INITIAL, PduCodec.MAX_TERM_DATA);
            byte[] rest = receiveExactly(s, a, buf, ch.plen() - PduCodec.COMMON_HEADER, deadline, name);
            if (rest == null) {
                throw new NvmeConnectionException(name + ": the target closed the connection inside its ICResp");
            }
            byte[] whole = new byte[ch.plen()];
            System.arraycopy(in, 0, whole, 0, in.length);
            System.arraycopy(rest, 0, whole, in.length, rest.length);
            Pdu p = PduCodec.decode(whole, PduCodec.Settings.INITIAL, PduCodec.MAX_TERM_DATA);
            return Handshake.accept(p, name, config.headerDigest(), config.dataDigest());
        }
    }

    /** @return {@code n} bytes (at most 256), or null when the connection ended before the first */
    private static byte[] receiveExactly(NativeSocket s, Arena a, MemorySegment buf, int n, long deadline, String name)
            throws IOException {
        int got = 0;
        while (got < n) {
            long r = s.receive(buf.address() + got, n - got);
            if (r < 0) {
                if (got == 0) {
                    return null;
                }
                throw new NvmeConnectionException(name + ": the target closed the connection inside its ICResp");
            }
            got += (int) r;
            if (r == 0) {
                waitFor(s, NativeSocket.POLLIN, deadline, name, "ICResp");
            }
        }
        return buf.asSlice(0, n).toArray(B);
    }

    private static void waitFor(NativeSocket s, short events, long deadline, String name, String what)
            throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !s.await(events, (int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)))) {
            throw new NvmeConnectionException(
                    name + ": no " + what + " within the connect timeout: is this an NVMe/TCP target?");
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
        int[] status = {Integer.MIN_VALUE};
        IoCompletion c = (tag, st) -> status[0] = st;
        while (status[0] == Integer.MIN_VALUE) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new NvmeConnectionException(
                        name + ": Connect(qid=" + config.qid() + ") got no completion within the connect timeout");
            }
            await(c, Math.min(left, 100_000_000L));
        }
        if (status[0] == FAILED) {
            throw failure;
        }
        if (status[0] != 0) {
            int st = status[0];
            throw new NvmeStatusException(
                    "Connect(qid=" + config.qid() + ")", true, st >>> 8 & 7, st & 0xff, (st & 0x4000) != 0, 0);
        }
    }

    /** @return how many commands fit at once */
    public int depth() {
        return slots.depth;
    }

    /** @return commands submitted and not yet completed */
    public int inFlight() {
        return slots.inFlight();
    }

    /** @return null while the connection works, else why it does not */
    public NvmeException failure() {
        return failure;
    }

    /** @return the largest data one command moves */
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
    public boolean submitIo(
            boolean write, long nsid, long slba, int blocks, MemorySegment memory, long offset, int length, long tag) {
        if (failure != null) {
            throw new NvmeConnectionException(name + ": this queue failed: " + failure.getMessage(), failure);
        }
        int cid = slots.take();
        if (cid < 0) {
            return false;
        }
        MemorySegment sqe = scratchSegment;
        sqe.set(L, 8, (write ? Sqe.OPC_WRITE : Sqe.OPC_READ) | (long) Sqe.FLAGS_SGL << 8 | (nsid & 0xffffffffL) << 32);
        for (int o = 16; o < 72; o += 8) {
            sqe.set(L, o, 0);
        }
        sqe.set(L, 8 + 40, slba);
        sqe.set(I, 8 + 48, blocks - 1);
        start(cid, memory, offset, length, write, tag);
        return true;
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
        if (failure != null) {
            throw new NvmeConnectionException(name + ": this queue failed: " + failure.getMessage(), failure);
        }
        int cid = slots.take();
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
    public boolean submitFlush(long nsid, long tag) {
        if (failure != null) {
            throw new NvmeConnectionException(name + ": this queue failed: " + failure.getMessage(), failure);
        }
        int cid = slots.take();
        if (cid < 0) {
            return false;
        }
        MemorySegment sqe = scratchSegment;
        sqe.set(L, 8, Sqe.OPC_FLUSH | (long) Sqe.FLAGS_SGL << 8 | (nsid & 0xffffffffL) << 32);
        for (int o = 16; o < 72; o += 8) {
            sqe.set(L, o, 0);
        }
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
    public int poll(IoCompletion handler) {
        if (polling) {
            throw new IllegalStateException(
                    name + ": poll called from inside a completion handler; return from it first");
        }
        polling = true;
        this.handler = handler;
        completed = 0;
        try {
            if (failure == null) {
                progress();
            }
            if (failure != null) {
                failOutstanding();
            }
            return completed;
        } finally {
            polling = false;
            this.handler = null;
            if (closed) {
                arena.close(); // closed from the handler: the buffers go now that nothing uses them
            }
        }
    }

    /**
     * Polls, and when nothing completed waits up to {@code timeoutNanos} for the socket to have something (a
     * completion, room to send), then polls again.
     *
     * @return commands completed
     */
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
                if (!receive()) {
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
        } catch (TerminatedByTarget | NvmeConnectionException e) {
            fail(e);
        } catch (NvmeProtocolException e) {
            terminate(e.getMessage().contains("header digest") ? 3 : 1);
            fail(new NvmeProtocolException(name + ": " + e.getMessage() + "; the connection was closed", e));
        }
    }

    /**
     * One receive into the buffer (or into the caller's memory), then every PDU it completed.
     *
     * @return false when the socket had nothing more
     */
    private boolean receive() throws IOException {
        if (rxState == Rx.DATA && rxPos == rxEnd && dataLeft >= DIRECT_MIN && direct(dataCid)) {
            PolledSlots t = slots;
            long n = socket.receive(t.memory[dataCid].address() + t.offset[dataCid] + dataAt, dataLeft);
            if (n < 0) {
                throw truncated();
            }
            if (n == 0) {
                return false;
            }
            if (h.dataDigest()) {
                crc.update(
                        t.memory[dataCid].asSlice(t.offset[dataCid] + dataAt, n).asByteBuffer());
            }
            dataAt += n;
            dataLeft -= (int) n;
            parse();
            return true;
        }
        if (rxPos == rxEnd) {
            rxPos = 0;
            rxEnd = 0;
        } else if (RX_SIZE - rxEnd < PolledSlots.HEADER_ROOM) {
            MemorySegment.copy(rx, rxPos, rx, 0, rxEnd - rxPos);
            rxEnd -= rxPos;
            rxPos = 0;
        }
        long n = socket.receive(rx.address() + rxEnd, RX_SIZE - rxEnd);
        if (n < 0) {
            if (rxState == Rx.HEADER && rxPos == rxEnd) {
                throw new NvmeConnectionException(name + ": the target closed the connection");
            }
            throw truncated();
        }
        if (n == 0) {
            return false;
        }
        rxEnd += (int) n;
        parse();
        return true;
    }

    /** @return whether C2HData for {@code cid} may be received straight into its memory: open and confined here */
    private boolean direct(int cid) {
        MemorySegment m = slots.memory[cid];
        return !slots.lost[cid]
                && m.scope().isAlive()
                && m.isAccessibleBy(Thread.currentThread())
                && !m.isAccessibleBy(NOBODY);
    }

    private NvmeProtocolException truncated() {
        return new NvmeProtocolException(
                rxState == Rx.HEADER
                        ? "truncated PDU: the connection ended inside a PDU header"
                        : "truncated C2HData: the connection ended inside the PDU, " + dataLeft
                                + " bytes of its data short");
    }

    /** Handles every whole PDU (and the data part of a C2HData) in the buffer. */
    private void parse() {
        while (true) {
            int have = rxEnd - rxPos;
            switch (rxState) {
                case HEADER -> {
                    if (have < PduCodec.COMMON_HEADER) {
                        return;
                    }
                    MemorySegment.copy(rx, rxPos, headerSegment, 0, PduCodec.COMMON_HEADER);
                    header.limit(PolledSlots.HEADER_ROOM).position(0);
                    PduCodec.checkCommonHeader(header, rxSettings, maxData, h);
                    int end = h.headerEnd();
                    if (end > PolledSlots.HEADER_ROOM) {
                        throw new NvmeProtocolException(Pdu.typeName(h.type()) + " has a header of " + end
                                + " bytes; at most " + PolledSlots.HEADER_ROOM + " are possible");
                    }
                    if (have < end) {
                        return;
                    }
                    MemorySegment.copy(rx, rxPos, headerSegment, 0, end);
                    header.limit(end).position(0);
                    PduCodec.checkHeaderDigest(header, h, crc);
                    rxPos += end;
                    handle();
                }
                case DATA -> {
                    if (dataLeft > 0) {
                        if (have == 0) {
                            return;
                        }
                        int take = Math.min(have, dataLeft);
                        copyData(take);
                        rxPos += take;
                        dataAt += take;
                        dataLeft -= take;
                        if (dataLeft > 0) {
                            return;
                        }
                    }
                    rxState = h.dataDigest() ? Rx.DIGEST : Rx.HEADER;
                    if (rxState == Rx.HEADER) {
                        dataDone();
                    }
                }
                case DIGEST -> {
                    if (have < 4) {
                        return;
                    }
                    int got = rx.get(I, rxPos);
                    rxPos += 4;
                    rxState = Rx.HEADER;
                    PduCodec.checkDataDigest(h, got, (int) crc.getValue());
                    dataDone();
                }
            }
        }
    }

    /** Moves {@code n} bytes of C2HData from the buffer to the read's memory, or drops them if it was freed. */
    private void copyData(int n) {
        PolledSlots t = slots;
        int cid = dataCid;
        if (h.dataDigest()) {
            rxView.limit(rxPos + n).position(rxPos);
            crc.update(rxView);
        }
        if (!t.lost[cid]) {
            try {
                MemorySegment.copy(rx, rxPos, t.memory[cid], t.offset[cid] + dataAt, n);
            } catch (IllegalStateException e) {
                t.lost[cid] = true; // its arena closed: the rest is drained, the command fails
            }
        }
    }

    private void handle() {
        PolledSlots t = slots;
        MemorySegment p = headerSegment;
        switch (h.type()) {
            case Pdu.CAPSULE_RESP -> {
                int cid = inFlight(p.get(S, 8 + 12) & 0xffff, "CapsuleResp");
                int status = (p.get(S, 8 + 14) & 0xffff) >>> 1;
                dw0 = p.get(I, 8);
                if (status == 0 && t.length[cid] > 0 && !t.toController[cid] && t.moved[cid] != t.length[cid]) {
                    throw new NvmeProtocolException("CapsuleResp reports success for " + t.describe(cid) + " after "
                            + t.moved[cid] + " of " + t.length[cid] + " bytes of data");
                }
                complete(cid, status);
            }
            case Pdu.C2H_DATA -> {
                int cid = inFlight(p.get(S, 8) & 0xffff, "C2HData");
                long datao = p.get(I, 12) & 0xffffffffL;
                long datal = p.get(I, 16) & 0xffffffffL;
                int len = h.dataLength();
                if (datal != len) {
                    throw new NvmeProtocolException(
                            "C2HData has DATAL " + datal + " but carries " + len + " bytes of data");
                }
                if (t.toController[cid] || t.length[cid] == 0) {
                    throw new NvmeProtocolException("C2HData for " + t.describe(cid) + ", which reads no data");
                }
                if (datao != t.moved[cid] || datao + len > t.length[cid]) {
                    throw new NvmeProtocolException("C2HData for " + t.describe(cid) + " carries bytes [" + datao
                            + ", " + (datao + len) + "); expected data from offset " + t.moved[cid] + " within "
                            + t.length[cid] + " bytes");
                }
                if (!t.lost[cid] && !t.memory[cid].scope().isAlive()) {
                    t.lost[cid] = true;
                }
                dataCid = cid;
                dataAt = datao;
                dataLeft = len;
                dataLength = len;
                dataFlags = h.flags();
                crc.reset();
                rxState = Rx.DATA;
            }
            case Pdu.R2T -> r2t(p.get(S, 8) & 0xffff, p.get(S, 10) & 0xffff, p.get(I, 12), p.get(I, 16));
            case Pdu.C2H_TERM_REQ -> {
                Pdu.TermReq tr = new Pdu.TermReq(true, p.get(S, 8) & 0xffff, p.get(I, 10) & 0xffffffffL, new byte[0]);
                throw new TerminatedByTarget(name + ": the target terminated the connection: " + tr.fesName() + " (FES "
                        + tr.fes() + ", FEI " + tr.fei() + ")");
            }
            default -> {
                terminate(2);
                throw new TerminatedByTarget(name + ": unexpected " + Pdu.typeName(h.type())
                        + " from the target; the connection was closed");
            }
        }
    }

    /** The C2HData whose data just arrived in full is done: its progress counts, and SUCCESS completes it. */
    private void dataDone() {
        PolledSlots t = slots;
        int cid = dataCid;
        t.moved[cid] += dataLength;
        if ((dataFlags & Pdu.FLAG_LAST_PDU) != 0 && t.moved[cid] != t.length[cid]) {
            throw new NvmeProtocolException("C2HData for " + t.describe(cid) + " is marked last after " + t.moved[cid]
                    + " of " + t.length[cid] + " bytes");
        }
        if ((dataFlags & Pdu.FLAG_SUCCESS) != 0) {
            dw0 = 0;
            complete(cid, 0);
        }
    }

    /** Answers an R2T with H2CData PDUs of at most MAXH2CDATA bytes each, queued for the next send. */
    private void r2t(int cidField, int ttag, int r2toField, int r2tlField) {
        PolledSlots t = slots;
        int cid = inFlight(cidField, "R2T");
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

    private int inFlight(int cid, String pdu) {
        int s = slots.inFlight(cid);
        if (s < 0) {
            throw new NvmeProtocolException(
                    pdu + " names command identifier " + cid + ", which has no command in flight");
        }
        return s;
    }

    /** Frees {@code cid}'s slot and tells the caller. */
    private void complete(int cid, int status) {
        PolledSlots t = slots;
        long tag = t.tag[cid];
        boolean lost = t.lost[cid];
        t.release(cid);
        completed++;
        handler.complete(tag, lost && status == 0 ? MEMORY_FREED : status);
    }

    /** Completes every command in flight with {@link #FAILED}. */
    private void failOutstanding() {
        PolledSlots t = slots;
        for (int cid = 0; cid < t.depth; cid++) {
            if (t.busy[cid]) {
                long tag = t.tag[cid];
                t.release(cid);
                completed++;
                handler.complete(tag, FAILED);
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
     * Waits, without reporting anything, up to {@code timeoutNanos} until the socket has something (data, or room to
     * send what waits) or {@code wakeFd} is readable; for a thread that drives this queue and takes commands from
     * others.
     */
    public void waitFor(long timeoutNanos, int wakeFd) {
        if (failure != null) {
            return;
        }
        try {
            short events = (short) (NativeSocket.POLLIN | (ring.isEmpty() ? 0 : NativeSocket.POLLOUT));
            socket.await(events, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000)), wakeFd);
        } catch (IOException e) {
            fail(new NvmeConnectionException(name + ": connection lost: " + e.getMessage(), e));
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
        if (!polling) {
            arena.close(); // else when the poll calling the handler that closed it returns
        }
    }

    /** A failure that the target announced with a TermReq, or one this host already answered with one. */
    private static final class TerminatedByTarget extends NvmeProtocolException {
        TerminatedByTarget(String m) {
            super(m);
        }
    }
}
