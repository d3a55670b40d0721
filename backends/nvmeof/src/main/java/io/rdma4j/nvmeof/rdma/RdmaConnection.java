package io.rdma4j.nvmeof.rdma;

import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ADDR_RESOLVED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_DEVICE_REMOVAL;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_DISCONNECTED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ESTABLISHED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_REJECTED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ROUTE_RESOLVED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_PS_TCP;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_LOCAL_WRITE;

import io.rdma4j.Closeables;
import io.rdma4j.Rdma4jException;
import io.rdma4j.ibverbs.CompletionChannel;
import io.rdma4j.ibverbs.CompletionQueue;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.QpInitAttr;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.RecvWr;
import io.rdma4j.ibverbs.cm.CmEvent;
import io.rdma4j.ibverbs.cm.CmId;
import io.rdma4j.ibverbs.cm.ConnParam;
import io.rdma4j.ibverbs.cm.EventChannel;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * One established NVMe/RDMA connection, as both kinds of queue use it: the RDMA-CM id and its event channel, a
 * completion queue with its channel, the queue pair, and one registered capsule slot and response slot per command
 * identifier, with every response slot's receive posted. What runs on it (a poller thread, or the caller's polls) is
 * the queue's.
 */
final class RdmaConnection implements AutoCloseable {
    /** NVMe/RDMA responses are bare 16-byte completion entries. */
    static final int CQE_SIZE = 16;
    /** Receive work request ids carry this bit; send ids are the command identifier alone. */
    static final long RECV_TAG = 1L << 32;

    final String name;
    final EventChannel channel;
    final CmId id;
    final CompletionChannel events;
    final CompletionQueue cq;
    final QueuePair qp;
    final Arena arena;
    /** One capsule slot a command identifier: the 64-byte SQE, then in-capsule data. */
    final MemoryRegion capsules;
    /** One 16-byte response slot a receive. */
    final MemoryRegion responses;

    final int capsuleSize;
    final int depth;
    private final RecvWr rwr = new RecvWr(1);

    private RdmaConnection(
            String name,
            EventChannel channel,
            CmId id,
            CompletionChannel events,
            CompletionQueue cq,
            QueuePair qp,
            Arena arena,
            MemoryRegion capsules,
            MemoryRegion responses,
            int capsuleSize,
            int depth) {
        this.name = name;
        this.channel = channel;
        this.id = id;
        this.events = events;
        this.cq = cq;
        this.qp = qp;
        this.arena = arena;
        this.capsules = capsules;
        this.responses = responses;
        this.capsuleSize = capsuleSize;
        this.depth = depth;
    }

    /**
     * Resolves, creates the queue pair and connects through RDMA-CM with the NVMe/RDMA private data, leaving from
     * {@code source} (a local address of the RDMA device to use; null lets RDMA-CM route). The Fabrics Connect command
     * is the caller's.
     */
    static RdmaConnection open(
            String host, int port, InetAddress source, String name, RdmaQueue.Config config, RdmaResources resources) {
        CmSetup.requireRdma(host + ":" + port);
        InetSocketAddress address = CmSetup.resolve(host, port);
        long step = Math.max(1000, config.connectTimeout().toMillis());
        int cmTimeout = (int) Math.min(Integer.MAX_VALUE, step);
        EventChannel ch = EventChannel.create();
        List<AutoCloseable> undo = new ArrayList<>();
        undo.add(ch);
        try {
            CmId id = CmId.create(ch, RDMA_PS_TCP);
            undo.add(0, id);
            id.resolveAddr(source == null ? null : new InetSocketAddress(source, 0), address, cmTimeout);
            CmSetup.expect(
                    ch,
                    RDMA_CM_EVENT_ADDR_RESOLVED,
                    step,
                    name,
                    "resolving " + address
                            + " to a local RDMA device (is the target on a network an RDMA interface here reaches?)");
            id.resolveRoute(cmTimeout);
            CmSetup.expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, step, name, "resolving the route to " + address);
            Context ctx = id.context();
            ProtectionDomain pd = resources.pd(ctx);
            int depth = config.depth();
            CompletionChannel events = ctx.createCompletionChannel();
            undo.add(0, events);
            CompletionQueue cq = ctx.createCq(2 * depth + 2, events, 0);
            undo.add(0, cq);
            QueuePair qp = id.createQp(
                    pd,
                    QpInitAttr.rc(cq)
                            .maxSendWr(depth + 1)
                            .maxRecvWr(depth + 1)
                            .maxSendSge(1)
                            .maxRecvSge(1));
            Arena arena = Arena.ofShared();
            undo.add(arena);
            int capsuleSize = (Sqe.SIZE + config.inCapsuleLimit() + 63) / 64 * 64;
            MemoryRegion capsules =
                    pd.register(arena.allocate((long) capsuleSize * depth, 4096), IBV_ACCESS_LOCAL_WRITE);
            undo.add(0, capsules);
            MemoryRegion responses = pd.register(arena.allocate((long) CQE_SIZE * depth, 4096), IBV_ACCESS_LOCAL_WRITE);
            undo.add(0, responses);
            RdmaConnection c =
                    new RdmaConnection(name, ch, id, events, cq, qp, arena, capsules, responses, capsuleSize, depth);
            undo.add(0, c.rwr);
            for (int i = 0; i < depth; i++) {
                c.postRecv(i);
            }
            int rd = Math.clamp(ctx.deviceAttr().maxQpRdAtom(), 1, 255);
            // the host keeps at most depth commands in flight (HSQSIZE, 0's based) and takes depth completions
            // (HRQSIZE)
            id.connect(
                    new ConnParam(RdmaCm.connectRequest(config.qid(), depth, depth - 1, config.cntlid()), rd, 1, 7, 7));
            CmEvent e = ch.poll(step);
            if (e == null) {
                throw new NvmeConnectionException(name + ": no answer to the RDMA-CM connect within " + step
                        + " ms (is nvmet-rdma listening at " + address + "?)");
            }
            if (e.type() == RDMA_CM_EVENT_REJECTED) {
                int sts = RdmaCm.rejectStatus(e.privateData());
                throw new NvmeConnectionException(name + ": the target rejected the RDMA-CM connect"
                        + (sts >= 0
                                ? " with " + RdmaCm.rejectStatusName(sts)
                                : " (status " + e.status() + "; is an NVMe/RDMA port listening at " + address + "?)"));
            }
            if (e.type() != RDMA_CM_EVENT_ESTABLISHED) {
                throw new NvmeConnectionException(name + ": RDMA-CM connect to " + address + " ended in " + e.name()
                        + " (status " + e.status() + ") instead of ESTABLISHED: is an NVMe/RDMA port listening there?");
            }
            int crqsize = RdmaCm.acceptedQueueSize(e.privateData());
            if (crqsize >= 0 && crqsize < depth) {
                throw new NvmeProtocolException(name + ": the target accepted with a receive queue of " + crqsize
                        + " capsules, fewer than the " + depth + " this host asked to keep in flight");
            }
            return c;
        } catch (Rdma4jException e) {
            Closeables.closeAllInto(e, undo);
            if (e instanceof NvmeException n) {
                throw n;
            }
            throw new NvmeConnectionException(
                    name + ": cannot connect over NVMe/RDMA to " + address + ": " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            Closeables.closeAllInto(e, undo);
            throw e;
        }
    }

    /** Posts the receive of response slot {@code index}; one thread at a time. */
    void postRecv(int index) {
        int rc = qp.postRecv(rwr.wrId(RECV_TAG | index).sge(responses, (long) index * CQE_SIZE, CQE_SIZE));
        if (rc != 0) {
            throw new NvmeConnectionException(name + ": ibv_post_recv failed with errno " + rc);
        }
    }

    /**
     * Takes one RDMA-CM event, if any, without waiting.
     *
     * @return the event's name when it says the connection is gone (disconnected, or the device removed), else null
     */
    String lost() {
        CmEvent e = channel.poll(0);
        return e != null && (e.type() == RDMA_CM_EVENT_DISCONNECTED || e.type() == RDMA_CM_EVENT_DEVICE_REMOVAL)
                ? e.name()
                : null;
    }

    /** Disconnects: the queue pair goes to error, work in flight is flushed, and the target tears its side down. */
    void disconnect() {
        try {
            id.disconnect();
        } catch (RuntimeException ignored) {
            // already disconnected by the target or the device is gone
        }
    }

    /**
     * Releases the id, completion queue, channels, registrations and buffers, quietly: after a failure the target may
     * have torn its side down already, and the controller's PD release frees what is left.
     */
    @Override
    public void close() {
        List<AutoCloseable> undo = new ArrayList<>();
        undo.add(id);
        undo.add(cq); // acknowledges the completion events still unacknowledged
        undo.add(events);
        undo.add(capsules);
        undo.add(responses);
        undo.add(channel);
        undo.add(rwr);
        undo.add(arena);
        try {
            Closeables.closeAll(undo);
        } catch (RuntimeException ignored) {
            // closing stays quiet (see above)
        }
    }
}
