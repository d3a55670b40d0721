package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Cqe;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * Everything that comes in on the connection: it owns the reader thread, which parses PDUs (headers into one reused
 * buffer, C2HData straight into the commands' memory), checks them against the command they name, and completes
 * commands (callbacks run on it). A completion frees the command's slot in {@link CommandSlots}; an R2T, a waiting
 * command started in a freed slot, and a TermReq go to the {@link Sender} as jobs, never written here. Per-command
 * receive progress ({@link CommandSlot#received}, {@link CommandSlot#requested}, {@link CommandSlot#lost}) is this
 * thread's alone.
 */
final class Receiver {
    /** Every PDU a host receives after the ICResp has HLEN 24: reading this much at a PDU boundary never reads data. */
    private static final int RX_HLEN = 24;

    /** Failures that already sent or received a TermReq. */
    private static final class TerminatedByTarget extends NvmeProtocolException {
        TerminatedByTarget(String m) {
            super(m);
        }
    }

    private final String name;
    private final SocketChannel channel;
    private final PduCodec.Settings rxSettings;
    private final int maxData;
    private final CommandSlots slots;
    private final Sender sender;
    private final Consumer<NvmeException> onFailure;
    private final Thread thread;
    /** Reused for every completion: what releasing a slot handed back. */
    private final CommandSlots.Released released = new CommandSlots.Released();

    private final ByteBuffer rx =
            ByteBuffer.allocateDirect(CommandSlot.HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
    private final PduCodec.Header h = new PduCodec.Header();
    private final CRC32C crc = new CRC32C();
    private final int hd;
    /** Bytes of rx read from the socket (from index 0): the current PDU's header, maybe the next one's start. */
    private int have;
    /** The common header of the PDU being read has been checked (h describes it). */
    private boolean inPdu;

    private final ByteBuffer[] scatter = new ByteBuffer[2];
    /** Where the data of a read whose memory was freed goes (made on first use). */
    private ByteBuffer scratch;

    /**
     * @param maxData largest data one command moves (bounds every PDU accepted)
     * @param onFailure how the reader reports that the connection broke or the target broke the protocol (the queue's
     *     fail)
     */
    Receiver(
            String name,
            SocketChannel channel,
            PduCodec.Settings rxSettings,
            int maxData,
            CommandSlots slots,
            Sender sender,
            Consumer<NvmeException> onFailure) {
        this.name = name;
        this.channel = channel;
        this.rxSettings = rxSettings;
        this.hd = rxSettings.headerDigest() ? 4 : 0;
        this.maxData = maxData;
        this.slots = slots;
        this.sender = sender;
        this.onFailure = onFailure;
        this.thread = Thread.ofPlatform().daemon().name(name + "-rx").unstarted(this::run);
    }

    /** @return the reader thread */
    Thread thread() {
        return thread;
    }

    private void run() {
        try {
            while (true) {
                inPdu = false;
                if (!fill(PduCodec.COMMON_HEADER, RX_HLEN + hd, true)) {
                    onFailure.accept(new NvmeConnectionException(name + ": the target closed the connection"));
                    return;
                }
                PduCodec.checkCommonHeader(rx, rxSettings, maxData, h);
                inPdu = true;
                int end = h.headerEnd();
                boolean data = end < h.plen();
                // Read ahead into the next PDU's fixed header only when this PDU carries no data to read next.
                fill(end, data ? end : end + RX_HLEN + hd, false);
                PduCodec.checkHeaderDigest(rx, h, crc);
                handle();
            }
        } catch (TerminatedByTarget e) {
            onFailure.accept(e);
        } catch (NvmeProtocolException e) {
            int fes = e.getMessage().contains("header digest") ? 3 : 1;
            terminate(fes);
            onFailure.accept(
                    new NvmeProtocolException(name + ": " + e.getMessage() + "; the connection was closed", e));
        } catch (IOException e) {
            onFailure.accept(new NvmeConnectionException(name + ": connection lost: " + e.getMessage(), e));
        } catch (RuntimeException e) {
            onFailure.accept(new NvmeProtocolException(name + ": failed handling a PDU: " + e, e));
        }
    }

    /**
     * Reads until rx holds {@code need} bytes, never past {@code cap}.
     *
     * @return false when the connection ended cleanly before a PDU began
     */
    private boolean fill(int need, int cap, boolean atBoundary) throws IOException {
        return fill(need, cap, atBoundary, 0);
    }

    /** @param pduOffset where in the current PDU rx's first byte sits (for the truncation message) */
    private boolean fill(int need, int cap, boolean atBoundary, int pduOffset) throws IOException {
        while (have < need) {
            rx.limit(cap).position(have);
            int n = channel.read(rx);
            if (n < 0) {
                if (atBoundary && have == 0) {
                    return false;
                }
                throw truncated(have + pduOffset);
            }
            have += n;
        }
        return true;
    }

    /** @param got bytes of the current PDU that arrived before the connection ended */
    private NvmeProtocolException truncated(long got) {
        if (!inPdu) {
            return new NvmeProtocolException(
                    "truncated PDU: the connection ended after " + have + " bytes of an 8-byte common header");
        }
        return new NvmeProtocolException("truncated " + Pdu.typeName(h.type()) + ": PLEN is " + h.plen()
                + " but the connection ended after " + got + " bytes");
    }

    /** Drops the current PDU's {@code used} bytes from rx, keeping what was read of the next one. */
    private void consume(int used) {
        int rest = have - used;
        for (int i = 0; i < rest; i++) {
            rx.put(i, rx.get(used + i));
        }
        have = rest;
    }

    private void handle() throws IOException {
        switch (h.type()) {
            case Pdu.CAPSULE_RESP -> {
                Cqe cqe = Cqe.parse(rx, 8);
                consume(h.plen());
                CommandSlot s = inFlight(cqe.cid(), "CapsuleResp");
                if (cqe.ok() && s.length > 0 && !s.toController && s.received != s.length) {
                    throw new NvmeProtocolException("CapsuleResp reports success for " + s.what() + " after "
                            + s.received + " of " + s.length + " bytes of data");
                }
                if (s.toController && s.length > 0 && sender.holdCompletion(s, cqe)) {
                    return; // a write call still holds its bytes: its thread completes it after the call
                }
                finish(s, cqe);
            }
            case Pdu.C2H_DATA -> c2hData();
            case Pdu.R2T -> {
                int cid = rx.getShort(8) & 0xffff;
                int ttag = rx.getShort(10) & 0xffff;
                long r2to = rx.getInt(12) & 0xffffffffL;
                long r2tl = rx.getInt(16) & 0xffffffffL;
                consume(h.plen());
                if (r2tl == 0) {
                    throw new NvmeProtocolException("R2T asks for 0 bytes (R2TL 0)");
                }
                CommandSlot s = inFlight(cid, "R2T");
                if (!s.toController || s.length == 0 || s.inCapsule) {
                    throw new NvmeProtocolException("R2T for " + s.what() + ", which has no data waiting for an R2T");
                }
                if (r2to != s.requested || r2to + r2tl > s.length) {
                    throw new NvmeProtocolException("R2T for " + s.what() + " asks for bytes [" + r2to + ", "
                            + (r2to + r2tl) + "); expected a range from offset " + s.requested + " within "
                            + s.length + " bytes");
                }
                switch (sender.answer(s, ttag, r2to, r2tl)) {
                    case OK -> s.requested += r2tl;
                    case TOO_MANY_R2T ->
                        throw new NvmeProtocolException("R2T for " + s.what() + " while " + Sender.R2T_QUEUE
                                + " R2Ts are still being answered;"
                                + " this host allows one outstanding R2T per command (MAXR2T 0)");
                    case FULL -> throw sender.jobsFull();
                }
            }
            case Pdu.C2H_TERM_REQ -> {
                int fes = rx.getShort(8) & 0xffff;
                long fei = rx.getInt(10) & 0xffffffffL;
                Pdu.TermReq t = new Pdu.TermReq(true, fes, fei, new byte[0]);
                throw new TerminatedByTarget(name + ": the target terminated the connection: " + t.fesName() + " (FES "
                        + fes + ", FEI " + fei + ")");
            }
            default -> {
                terminate(2);
                throw new TerminatedByTarget(name + ": unexpected " + Pdu.typeName(h.type())
                        + " from the target; the connection was closed");
            }
        }
    }

    private void c2hData() throws IOException {
        int cid = rx.getShort(8) & 0xffff;
        long datao = rx.getInt(12) & 0xffffffffL;
        long datal = rx.getInt(16) & 0xffffffffL;
        int len = h.dataLength();
        if (datal != len) {
            throw new NvmeProtocolException("C2HData has DATAL " + datal + " but carries " + len + " bytes of data");
        }
        boolean last = (h.flags() & Pdu.FLAG_LAST_PDU) != 0;
        boolean success = (h.flags() & Pdu.FLAG_SUCCESS) != 0;
        int plen = h.plen();
        int start = h.headerEnd();
        consume(start);
        CommandSlot s = inFlight(cid, "C2HData");
        if (s.toController || s.length == 0) {
            throw new NvmeProtocolException("C2HData for " + s.what() + ", which reads no data");
        }
        if (datao != s.received || datao + len > s.length) {
            throw new NvmeProtocolException("C2HData for " + s.what() + " carries bytes [" + datao + ", "
                    + (datao + len) + "); expected data from offset " + s.received + " within " + s.length + " bytes");
        }
        if (s.lost != null || !s.segment.scope().isAlive()) {
            drain(s, len, plen);
            return;
        }
        ByteBuffer v = s.view;
        v.limit((int) datao + len).position((int) datao);
        if (have == 0) {
            // One scattering read takes the data and what follows it (the digest, the next PDU's fixed header:
            // usually the CapsuleResp), so a 4 KiB read costs one read call less; rx never takes more than that.
            rx.limit((h.dataDigest() ? 4 : 0) + RX_HLEN + hd).position(0);
            scatter[0] = v;
            scatter[1] = rx;
            try {
                while (v.hasRemaining()) {
                    if (channel.read(scatter) < 0) {
                        throw truncated(start + (v.position() - datao));
                    }
                }
            } finally {
                scatter[0] = null;
                have = rx.position();
            }
        }
        while (v.hasRemaining()) {
            if (channel.read(v) < 0) {
                throw truncated(start + (v.position() - datao));
            }
        }
        if (h.dataDigest()) {
            fill(4, 4 + RX_HLEN + hd, false, plen - 4);
            int got = rx.getInt(0);
            consume(4);
            v.position((int) datao);
            PduCodec.checkDataDigest(h, got, PduCodec.crc32c(crc, v));
        }
        s.received += len;
        if (last && s.received != s.length) {
            throw new NvmeProtocolException(
                    "C2HData for " + s.what() + " is marked last after " + s.received + " of " + s.length + " bytes");
        }
        if (success) {
            finish(s, Cqe.success(s.cid));
        }
    }

    /**
     * The caller freed the read's memory (closed its arena) while the read was in flight: the data has nowhere to go,
     * but the stream must stay in step, so it is read into scratch (digest still checked), and the command fails when
     * its completion arrives. The connection and every other command carry on.
     */
    private void drain(CommandSlot s, int len, int plen) throws IOException {
        if (s.lost == null) {
            s.lost = new NvmeException(
                    name + ": " + s.what() + " lost its data: the destination memory was freed (its arena"
                            + " closed) while the read was in flight; keep the memory alive until the read's future completes");
        }
        if (scratch == null) {
            scratch = ByteBuffer.allocateDirect(64 << 10);
        }
        crc.reset();
        int left = len;
        while (left > 0) {
            scratch.clear().limit(Math.min(scratch.capacity(), left));
            if (channel.read(scratch) < 0) {
                throw truncated(plen - left);
            }
            scratch.flip();
            left -= scratch.remaining();
            crc.update(scratch);
        }
        if (h.dataDigest()) {
            fill(4, 4 + RX_HLEN + hd, false, plen - 4);
            int got = rx.getInt(0);
            consume(4);
            PduCodec.checkDataDigest(h, got, (int) crc.getValue());
        }
        s.received += len;
        if ((h.flags() & Pdu.FLAG_SUCCESS) != 0) {
            finish(s, Cqe.success(s.cid));
        }
    }

    private void terminate(int fes) {
        sender.terminate(fes);
    }

    private CommandSlot inFlight(int cid, String pdu) {
        CommandSlot s = slots.inFlight(cid);
        if (s == null) {
            throw new NvmeProtocolException(
                    pdu + " names command identifier " + cid + ", which has no command in flight");
        }
        return s;
    }

    /**
     * Completes a command whose completion waited for the sender's write call carrying its bytes to return, on the
     * thread that made the call; a failure closes the connection as it would on this thread.
     */
    void finishLate(CommandSlot s, Cqe cqe) {
        try {
            finish(s, cqe, new CommandSlots.Released());
        } catch (NvmeException e) {
            onFailure.accept(e);
        }
    }

    private void finish(CommandSlot s, Cqe cqe) {
        finish(s, cqe, released);
    }

    /** Completes the command in {@code s}, frees its slot, and has the sender send a waiting command started there. */
    private void finish(CommandSlot s, Cqe cqe, CommandSlots.Released released) {
        NvmeException lost = s.lost;
        slots.release(s, released);
        CompletableFuture<Cqe> f = released.future;
        CommandSlot next = released.next;
        released.future = null;
        released.next = null;
        if (next != null && !sender.queue(next)) {
            throw sender.jobsFull(); // on the reader thread: closes the connection
        }
        if (f == null) {
            return; // the queue failed meanwhile and failed the command with it
        }
        if (lost != null) {
            f.completeExceptionally(lost);
        } else {
            f.complete(cqe);
        }
    }
}
