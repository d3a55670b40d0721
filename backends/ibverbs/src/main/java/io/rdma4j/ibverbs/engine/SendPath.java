package io.rdma4j.ibverbs.engine;

import static io.rdma4j.engine.spi.EngineBackend.BACK_PRESSURED;
import static io.rdma4j.engine.spi.EngineBackend.FAILED;
import static io.rdma4j.engine.spi.EngineBackend.OK;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_GENERAL_ERR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE_WITH_IMM;

import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.SendWr;

/**
 * One lane's send path, on its progress thread: checks a request, posts it on the connection's queue pair with one work
 * request patched in place, and records its context in the connection's ring. A vectored write is a chain of RDMA
 * writes posted at once (one doorbell); only its last request's context is reported, for all of them, since RC
 * completes a queue pair's requests in order.
 *
 * <p><b>Selective signaling.</b> Only every {@code k}-th send request (k = a quarter of the send queue) is signaled; RC
 * completes in order, so a signaled completion also completes every earlier request of its queue pair. When a lane goes
 * quiet with unsignaled requests outstanding, {@link #fence} posts a signaled zero-length request behind them so they
 * complete. The send queue is bounded: posting returns {@code BACK_PRESSURED} when it is full.
 */
final class SendPath implements AutoCloseable {
    private final Lane lane;
    private final RegistrationTable registrations;
    private final SendWr swr = new SendWr(1);
    /** The requests of one vectored write, chained as it needs them. */
    private final SendWr[] chain = new SendWr[IbverbsEngineBackend.VECTOR_LIMIT];

    SendPath(Lane lane, RegistrationTable registrations) {
        this.lane = lane;
        this.registrations = registrations;
    }

    /** @return {@code OK}, {@code BACK_PRESSURED}, or {@code FAILED} after recording on the lane why */
    int post(
            int connection,
            int opcode,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int imm,
            long context) {
        Lane l = lane;
        MemoryRegion mr = region(localHandle, localAddress, length, -1);
        if (mr == null) {
            return FAILED;
        }
        Connection c = usable(connection);
        if (c == null || !fits(length, -1)) {
            return FAILED;
        }
        // one send queue slot stays free for the fence; contexts not yet handed to the engine keep their ring slots
        if (c.inFlight() >= c.qp.maxSendWr() - 1 || c.head - c.reported >= c.ctx.length - 1) {
            return BACK_PRESSURED;
        }
        long seq = c.head;
        boolean signal = seq - c.lastSignaled >= l.signalEvery;
        swr.wrId(((long) connection << 32) | (seq & 0xFFFF_FFFFL))
                .opcode(opcode)
                .sge(mr, localAddress - mr.address(), (int) length)
                .rdma(remoteAddress, (int) remoteKey)
                .flags(signal ? IBV_SEND_SIGNALED : 0);
        if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
            swr.immData(imm);
        }
        int rc = c.qp.postSend(swr);
        if (rc == 12 /* ENOMEM: send queue full */) {
            return BACK_PRESSURED;
        }
        if (rc != 0) {
            l.error = "ibv_post_send failed on lane " + l.index + ": error " + rc;
            return FAILED;
        }
        int slot = (int) (seq & c.mask);
        c.ctx[slot] = context;
        c.internal[slot] = false;
        c.head = seq + 1;
        c.lastOpcode = opcode == IBV_WR_RDMA_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
        c.lastRemote = remoteAddress;
        c.lastRkey = (int) remoteKey;
        if (signal) {
            c.lastSignaled = seq;
            c.signaledPending++;
        }
        return OK;
    }

    /**
     * Posts {@code count} RDMA writes, piece {@code i} from {@code localAddresses[i]} to {@code remoteAddresses[i]}, as
     * one chain; one context for all of them. Should the provider refuse part of the chain, it returns {@code OK} and
     * the write completes with an error.
     *
     * @return {@code OK}, {@code BACK_PRESSURED}, or {@code FAILED} (nothing posted) after recording on the lane why
     */
    int postVector(
            int connection,
            int localHandle,
            long[] localAddresses,
            long[] remoteAddresses,
            long[] lengths,
            int count,
            long remoteKey,
            long context) {
        Lane l = lane;
        Connection c = usable(connection);
        if (c == null) {
            return FAILED;
        }
        if (c.inFlight() + count >= c.qp.maxSendWr() || c.head + count - c.reported >= c.ctx.length) {
            return BACK_PRESSURED;
        }
        long seq = c.head;
        long last = seq + count - 1;
        boolean signal = last - c.lastSignaled >= l.signalEvery;
        for (int i = 0; i < count; i++) {
            long length = lengths[i];
            MemoryRegion mr = region(localHandle, localAddresses[i], length, i);
            if (mr == null || !fits(length, i)) {
                return FAILED;
            }
            SendWr w = chain[i];
            if (w == null) {
                w = chain[i] = new SendWr(1);
            }
            w.wrId(((long) connection << 32) | ((seq + i) & 0xFFFF_FFFFL))
                    .opcode(IBV_WR_RDMA_WRITE)
                    .sge(mr, localAddresses[i] - mr.address(), (int) length)
                    .rdma(remoteAddresses[i], (int) remoteKey)
                    .flags(i == count - 1 && signal ? IBV_SEND_SIGNALED : 0);
            if (i > 0) {
                chain[i - 1].next(w);
            }
        }
        chain[count - 1].next(null);
        int rc = c.qp.postSend(chain[0]);
        // the whole chain is accounted as posted, whatever the provider took: only its last request reports
        for (int i = 0; i < count; i++) {
            int slot = (int) ((seq + i) & c.mask);
            c.ctx[slot] = context;
            c.internal[slot] = i < count - 1;
        }
        c.head = seq + count;
        c.lastOpcode = IBV_WR_RDMA_WRITE;
        c.lastRemote = remoteAddresses[count - 1];
        c.lastRkey = (int) remoteKey;
        if (rc != 0) {
            // the provider took the requests before the one it refused (ibv_post_send's bad_wr) and not the rest; the
            // room was checked above and every request validated, so this is the provider's own failure. The chain and
            // every request still outstanding fail (the engine writes them again), and the connection is out of
            // service until the lane is rebuilt.
            String why = "ibv_post_send of a " + count + "-request chain failed on lane " + l.index + ": error " + rc;
            c.failFrom(c.doneUpTo, IBV_WC_GENERAL_ERR, why);
            if (l.error == null) {
                l.error = why;
            }
            return OK;
        }
        if (signal) {
            c.lastSignaled = last;
            c.signaledPending++;
        }
        return OK;
    }

    /**
     * The memory region holding {@code [address, +length)} of registration {@code handle}, or null after recording on
     * the lane why there is none; {@code piece} names a vectored write's piece in the reason (-1: a single request).
     */
    private MemoryRegion region(int handle, long address, long length, int piece) {
        Lane l = lane;
        MemoryRegion mr = registrations.find(handle, l.device.index, address, length);
        if (mr == null) {
            l.error = "lane " + l.index + (piece < 0 ? "" : ", piece " + piece + " of a vectored write") + ": "
                    + registrations.whyNot(handle, address, length);
        }
        return mr;
    }

    /** Whether one request may carry {@code length} bytes; false after recording on the lane why not. */
    private boolean fits(long length, int piece) {
        Lane l = lane;
        if (length >= 0 && length <= l.maxMessage) {
            return true;
        }
        l.error = (piece < 0 ? "" : "piece " + piece + " of a vectored write: ") + "length " + length
                + " is outside [0, " + l.maxMessage + "] for lane " + l.index;
        return false;
    }

    /**
     * The connection to post on, or null when the lane or the connection cannot take a request: a lane already failed
     * or a connection out of service (nothing new to record), one never prepared or never connected (recorded on the
     * lane).
     */
    private Connection usable(int connection) {
        Lane l = lane;
        if (l.error != null) {
            return null;
        }
        Connection c = l.connections.find(connection);
        if (c == null) {
            l.error = "lane " + l.index + " has no connection " + connection + " (never prepared, or disconnected)";
            return null;
        }
        if (c.remote == null) {
            l.error = "connection " + connection + " on lane " + l.index
                    + " was never connected: call connect with the peer's endpoint bytes first";
            return null;
        }
        return c.failed ? null : c;
    }

    /** Posts a signaled zero-length request behind trailing unsignaled ones, so they complete. */
    void fence(Connection c) {
        if (c.head - c.reported >= c.ctx.length) {
            return; // the ring is full of unreported contexts; the engine's next poll drains them first
        }
        long seq = c.head;
        swr.wrId(((long) c.index << 32) | (seq & 0xFFFF_FFFFL))
                .opcode(c.lastOpcode)
                .numSge(0)
                .rdma(c.lastRemote, c.lastRkey)
                .flags(IBV_SEND_SIGNALED);
        int rc = c.qp.postSend(swr);
        if (rc != 0) {
            return; // queue full: a signaled request is already behind them
        }
        int slot = (int) (seq & c.mask);
        c.internal[slot] = true;
        c.head = seq + 1;
        c.lastSignaled = seq;
        c.signaledPending++;
    }

    @Override
    public void close() {
        swr.close();
        for (SendWr w : chain) {
            if (w != null) {
                w.close();
            }
        }
    }
}
