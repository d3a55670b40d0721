package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Everything a polled queue receives: one {@code recv} of up to 128 KiB into a native buffer, then every PDU in it
 * parsed in place (headers copied into a small buffer and checked there, digests checked), each checked against the
 * command it names in the {@link PolledSlots}. A C2HData's data is copied to the read's memory, or, when it is large
 * and the memory is confined to this thread, received straight into it by a {@code recvmsg} that also takes what
 * follows (the next headers) into the buffer; a completion, an R2T and a protocol error that the target must hear of go
 * to the queue through {@link Events}. It runs on the thread that polls the queue.
 */
final class PolledReceiver {
    /** What the receiver hands to its queue. */
    interface Events {
        /** Command {@code cid} finished with {@code status} (the CQE status field without its phase bit). */
        void complete(int cid, int status, int dw0);

        /** The target asks for {@code r2tl} bytes of command {@code cid}'s data from {@code r2to}. */
        void r2t(int cid, int ttag, int r2to, int r2tl);

        /** The connection is about to close for a protocol error: tell the target with an H2CTermReq. */
        void terminate(int fes);
    }

    static final int RX_SIZE = 128 << 10;
    /**
     * C2HData payload at least this large goes from the socket straight into the caller's memory (when confined to this
     * thread, or see {@link #receiveIntoSharedMemory}).
     */
    private static final int DIRECT_MIN = 16 << 10;
    /** Never started: a segment it may not touch is confined to some thread. */
    private static final Thread NOBODY = Thread.ofPlatform().unstarted(() -> {});

    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private enum Rx {
        HEADER,
        DATA,
        DIGEST
    }

    private final String name;
    private final NativeSocket socket;
    private final PduCodec.Settings rxSettings;
    private final int maxData;
    private final PolledSlots slots;
    private final Events events;
    /** Where an incoming PDU header is checked and read: {@link #headerSegment} as a little-endian buffer. */
    private final ByteBuffer header;

    private final MemorySegment headerSegment;
    private final MemorySegment rx;
    private final ByteBuffer rxView;
    private final CRC32C crc = new CRC32C();
    private final PduCodec.Header h = new PduCodec.Header();

    private int rxPos, rxEnd;
    private Rx rxState = Rx.HEADER;
    /** The C2HData being received: its slot, where its data goes within the command, how much is left, its flags. */
    private int dataCid;

    private long dataAt;
    private int dataLeft;
    private int dataFlags;
    private int dataLength;
    /**
     * The last C2HData went straight into memory (set with it: a receive straight into memory happens only then). The
     * next one likely will too, so a receive for headers, and the tail of a receive straight into memory, ask for
     * {@link #streamHeader} bytes: the next PDU's header, and none of the data after it, which is then not taken into
     * the buffer only to be copied again.
     */
    private boolean streaming;

    /**
     * C2HData may go straight into memory other threads can free too (see {@link #receiveIntoSharedMemory}); false:
     * only into memory confined to this thread.
     */
    private boolean intoShared;

    /** The bytes before the data of the last C2HData that went straight into memory, and its digest if any. */
    private int streamHeader;

    PolledReceiver(
            String name,
            NativeSocket socket,
            Arena arena,
            PduCodec.Settings rxSettings,
            int maxData,
            PolledSlots slots,
            Events events) {
        this.name = name;
        this.socket = socket;
        this.rxSettings = rxSettings;
        this.maxData = maxData;
        this.slots = slots;
        this.events = events;
        this.headerSegment = arena.allocate(PolledSlots.HEADER_ROOM, 8);
        this.header = headerSegment.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        this.rx = arena.allocate(RX_SIZE, 64);
        this.rxView = rx.asByteBuffer();
    }

    /**
     * Lets C2HData of {@link #DIRECT_MIN} bytes or more go straight into memory that other threads may free (a shared
     * or automatic arena's), one copy fewer than through the buffer: the receive passes that memory to the system call
     * as a segment, which holds its arena open during the call, and takes the next PDU's header in a call of its own.
     * That costs a slice of the segment per receive, so only a queue that allocates per I/O anyway turns it on; without
     * data digests (which are computed where the data lands, and a closed arena would leave them unverifiable).
     */
    void receiveIntoSharedMemory() {
        intoShared = true;
    }

    /**
     * One receive into the buffer (or into the caller's memory), then every PDU it completed.
     *
     * @return whether the socket may have more: false when it had nothing, or gave less than was asked for (it was
     *     empty then: asking again would be a system call that finds nothing)
     */
    boolean receive() throws IOException {
        if (rxState == Rx.DATA && rxPos == rxEnd && dataLeft >= DIRECT_MIN && direct(dataCid)) {
            PolledSlots t = slots;
            MemorySegment m = t.memory[dataCid];
            rxPos = 0;
            rxEnd = 0;
            long asked;
            long n;
            if (m.isAccessibleBy(NOBODY)) {
                // memory another thread may free: passed to the call as a segment, whose arena then cannot close
                // during it; the data alone, the next header in the next call
                asked = dataLeft;
                try {
                    n = socket.receive(m.asSlice(t.offset[dataCid] + dataAt, dataLeft));
                } catch (IllegalStateException closed) {
                    t.lost[dataCid] = true; // closed since direct() looked: the rest is drained, the command fails
                    streaming = false;
                    return true;
                }
            } else {
                asked = dataLeft + streamHeader;
                n = socket.receive(m.address() + t.offset[dataCid] + dataAt, dataLeft, rx.address(), streamHeader);
            }
            if (n < 0) {
                throw truncated();
            }
            if (n == 0) {
                return false;
            }
            int intoMemory = (int) Math.min(n, dataLeft);
            if (h.dataDigest()) {
                crc.update(m.asSlice(t.offset[dataCid] + dataAt, intoMemory).asByteBuffer());
            }
            dataAt += intoMemory;
            dataLeft -= intoMemory;
            rxEnd = (int) (n - intoMemory);
            parse();
            return n == asked;
        }
        if (rxPos == rxEnd) {
            rxPos = 0;
            rxEnd = 0;
        } else if (RX_SIZE - rxEnd < PolledSlots.HEADER_ROOM) {
            MemorySegment.copy(rx, rxPos, rx, 0, rxEnd - rxPos);
            rxEnd -= rxPos;
            rxPos = 0;
        }
        int room = RX_SIZE - rxEnd;
        int asked = streaming ? Math.min(room, streamHeader) : room;
        long n = socket.receive(rx.address() + rxEnd, asked);
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
        return n == asked;
    }

    /**
     * @return whether C2HData for {@code cid} may be received straight into its memory: open, and confined here or (see
     *     {@link #receiveIntoSharedMemory}) shared
     */
    private boolean direct(int cid) {
        MemorySegment m = slots.memory[cid];
        return !slots.lost[cid]
                && m.scope().isAlive()
                && m.isAccessibleBy(Thread.currentThread())
                && (!m.isAccessibleBy(NOBODY) || (intoShared && !h.dataDigest()));
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
                if (status == 0 && t.length[cid] > 0 && !t.toController[cid] && t.moved[cid] != t.length[cid]) {
                    throw new NvmeProtocolException("CapsuleResp reports success for " + t.describe(cid) + " after "
                            + t.moved[cid] + " of " + t.length[cid] + " bytes of data");
                }
                events.complete(cid, status, p.get(I, 8));
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
                streaming = len >= DIRECT_MIN && direct(cid);
                streamHeader = h.headerEnd() + (h.dataDigest() ? 4 : 0);
            }
            case Pdu.R2T ->
                events.r2t(inFlight(p.get(S, 8) & 0xffff, "R2T"), p.get(S, 10) & 0xffff, p.get(I, 12), p.get(I, 16));
            case Pdu.C2H_TERM_REQ -> {
                Pdu.TermReq tr = new Pdu.TermReq(true, p.get(S, 8) & 0xffff, p.get(I, 10) & 0xffffffffL, new byte[0]);
                throw new TerminatedByTarget(name + ": the target terminated the connection: " + tr.fesName() + " (FES "
                        + tr.fes() + ", FEI " + tr.fei() + ")");
            }
            default -> {
                events.terminate(2);
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
            events.complete(cid, 0, 0);
        }
    }

    private int inFlight(int cid, String pdu) {
        int s = slots.inFlight(cid);
        if (s < 0) {
            throw new NvmeProtocolException(
                    pdu + " names command identifier " + cid + ", which has no command in flight");
        }
        return s;
    }

    /** A failure that the target announced with a TermReq, or one this host already answered with one. */
    static final class TerminatedByTarget extends NvmeProtocolException {
        TerminatedByTarget(String m) {
            super(m);
        }
    }
}
