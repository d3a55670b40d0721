package io.rdma4j.nvmeof.rdma;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RECV;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_SEND;

import io.rdma4j.Closeables;
import io.rdma4j.ibverbs.CompletionChannel;
import io.rdma4j.ibverbs.CompletionQueue;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.SendWr;
import io.rdma4j.ibverbs.VerbsException;
import io.rdma4j.ibverbs.WorkCompletions;
import io.rdma4j.ibverbs.cm.CmId;
import io.rdma4j.ibverbs.cm.EventChannel;
import io.rdma4j.ibverbs.ffi.Poll;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.CommandTimeoutEvent;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One NVMe queue pair over one RDMA-CM connection (NVMe/RDMA): command capsules go out by SEND from registered slots,
 * completions arrive in pre-posted receives, and a command's data moves by the target's own RDMA READ / WRITE on the
 * caller's buffer, named by a keyed SGL data block descriptor (address, length, rkey). Small writes within the
 * controller's in-capsule limit travel in the capsule instead. Heap buffers go through a registered bounce copy.
 *
 * <p>A polling thread per queue reaps completions (callbacks run on it: do not block in them) and watches the RDMA-CM
 * channel, so a target that disconnects fails the outstanding commands with an {@link NvmeConnectionException}. It
 * polls the CQ while completions come, spins a few microseconds once it runs dry, then arms the CQ and sleeps in
 * {@code poll(2)} on the completion and RDMA-CM channels until either has an event (the verbs event loop): an idle
 * queue costs no CPU and a completion wakes it at once.
 */
public final class RdmaQueue implements FabricQueue {
    /**
     * How a queue is set up.
     *
     * @param cntlid the controller ID for an I/O queue's connect request (0 for the admin queue)
     * @param maxData largest data one command moves
     * @param inCapsuleLimit writes up to this many bytes travel inside the command capsule (0: never)
     */
    public record Config(
            int qid,
            int depth,
            int cntlid,
            Duration connectTimeout,
            Duration ioTimeout,
            int maxData,
            int inCapsuleLimit) {
        public Config {
            if (depth < 2 || depth > 1024) {
                throw new IllegalArgumentException("NVMe/RDMA queue depth " + depth + " is outside 2..1024");
            }
            if (maxData < 0 || maxData > 0xffffff) {
                throw new IllegalArgumentException("a keyed SGL moves at most 16 MiB - 1 per command, not " + maxData);
            }
            if (inCapsuleLimit < 0 || inCapsuleLimit > 1 << 20) {
                throw new IllegalArgumentException("in-capsule limit " + inCapsuleLimit + " is outside 0..1 MiB");
            }
        }
    }

    private static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nvmeof-rdma-timeouts");
        t.setDaemon(true);
        return t;
    });
    private static final int CQE_SIZE = RdmaConnection.CQE_SIZE;
    private static final long RECV_TAG = RdmaConnection.RECV_TAG;
    /**
     * How long the poller keeps polling an empty CQ before it arms it and sleeps: a reply this soon skips the wake-up.
     */
    private static final long SPIN_NANOS = 20_000;
    /** Longest sleep on the channels, so a closing queue's poller notices within this. */
    private static final int WAIT_MS = 50;
    /** Completion events taken before one ibv_ack_cq_events for all of them. */
    private static final int ACK_BATCH = 32;

    private final String name;
    private final Config config;
    private final RdmaResources resources;
    private final EventChannel channel;
    private final CmId id;
    private final CompletionChannel events;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final RdmaConnection conn;
    private final MemoryRegion capsules;
    private final MemoryRegion responses;
    private final int capsuleSize;
    private final SendWr swr = new SendWr(1);
    private final WorkCompletions wcs;
    private final RdmaSlots slots;
    /** Reused by the poller for every completion: what releasing a slot handed back. */
    private final RdmaSlots.Released released = new RdmaSlots.Released();

    private final long ioTimeoutNanos;
    private ScheduledFuture<?> timeoutScan;
    private final Thread poller;
    private int unacked; // completion events taken and not yet acknowledged; poller thread only
    private volatile boolean stopping;

    private RdmaQueue(String name, Config config, RdmaResources resources, RdmaConnection conn) {
        this.name = name;
        this.config = config;
        this.resources = resources;
        this.conn = conn;
        this.channel = conn.channel;
        this.id = conn.id;
        this.events = conn.events;
        this.cq = conn.cq;
        this.qp = conn.qp;
        this.capsules = conn.capsules;
        this.responses = conn.responses;
        this.capsuleSize = conn.capsuleSize;
        this.wcs = new WorkCompletions(32);
        this.ioTimeoutNanos = config.ioTimeout().toNanos();
        this.slots = new RdmaSlots(config.depth(), ioTimeoutNanos);
        this.poller = Thread.ofPlatform().daemon().name(name + "-cq").unstarted(this::pollLoop);
    }

    /** Fails with a message naming the fix when this host cannot do NVMe/RDMA at all (no libraries, no device). */
    public static void requireRdma(String target) {
        CmSetup.requireRdma(target);
    }

    /**
     * Connects through RDMA-CM with the NVMe/RDMA private data. The Fabrics Connect command is the caller's.
     *
     * @param name for thread names and messages, e.g. {@code rdma://10.0.0.2:4420 qid 1}
     */
    public static RdmaQueue open(String host, int port, String name, Config config, RdmaResources resources) {
        return open(host, port, null, name, config, resources);
    }

    /**
     * As {@link #open(String, int, String, Config, RdmaResources)}, leaving from {@code source} (a local address of the
     * RDMA device to use, passed to {@code rdma_resolve_addr}); null lets RDMA-CM route.
     */
    public static RdmaQueue open(
            String host, int port, InetAddress source, String name, Config config, RdmaResources resources) {
        RdmaConnection c = RdmaConnection.open(host, port, source, name, config, resources);
        RdmaQueue q;
        try {
            q = new RdmaQueue(name, config, resources, c);
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
        q.poller.start();
        if (q.ioTimeoutNanos > 0) {
            long period = Math.max(10, config.ioTimeout().toMillis() / 8);
            q.timeoutScan = TIMERS.scheduleAtFixedRate(q::scanTimeouts, period, period, TimeUnit.MILLISECONDS);
        }
        return q;
    }

    @Override
    public boolean accessible(MemorySegment segment) {
        return true; // the NIC moves the data; only the submitting thread touches it (in-capsule and bounce copies)
    }

    @Override
    public boolean completesOn(Thread thread) {
        return thread == poller;
    }

    /** @return the queue's configuration */
    public Config config() {
        return config;
    }

    @Override
    public NvmeException failure() {
        return slots.failure();
    }

    @Override
    public CompletableFuture<Cqe> submit(byte[] sqe, Data data, String what) {
        return submit(sqe, data, what, true);
    }

    @Override
    public CompletableFuture<Cqe> submitUntimed(byte[] sqe, String what) {
        return submit(sqe, Data.NONE, what, false);
    }

    private CompletableFuture<Cqe> submit(byte[] sqe, Data data, String what, boolean timed) {
        if (data.length() > config.maxData()) {
            throw new IllegalArgumentException((what != null ? what : Sqe.describe(sqe)) + " moves " + data.length()
                    + " bytes; this queue's commands move at most " + config.maxData());
        }
        RdmaRequest r = new RdmaRequest(sqe, data, what, timed);
        try {
            r.stage(config.inCapsuleLimit(), resources);
        } catch (RuntimeException e) {
            r.unstage();
            r.future.completeExceptionally(
                    e instanceof NvmeException
                            ? e
                            : new NvmeConnectionException(
                                    name + ": cannot register the buffer of " + r.what() + ": " + e.getMessage(), e));
            return r.future;
        }
        switch (slots.acquire(r)) {
            case STARTED -> post(r);
            case WAITING -> {}
            case FAILED -> {
                r.unstage();
                r.future.completeExceptionally(slots.failure());
            }
        }
        return r.future;
    }

    /**
     * Sends a started request's capsule from its slot. The capsule slot of its command identifier is the caller's
     * alone; the one send work request is shared, so posting it takes {@link #swr}'s lock.
     */
    private void post(RdmaRequest r) {
        int cid = r.cid;
        Sqe.cid(r.sqe, cid);
        long off = (long) cid * capsuleSize;
        MemorySegment slot = capsules.segment();
        MemorySegment.copy(r.sqe, 0, slot, ValueLayout.JAVA_BYTE, off, Sqe.SIZE);
        if (r.inCapsule > 0) {
            MemorySegment.copy(r.data.segment(), r.data.offset(), slot, off + Sqe.SIZE, r.inCapsule);
        }
        int rc;
        try {
            synchronized (swr) {
                rc = qp.postSend(swr.send(cid, capsules, off, Sqe.SIZE + r.inCapsule, IBV_SEND_SIGNALED));
            }
        } catch (RuntimeException e) {
            TIMERS.execute(() ->
                    fail(new NvmeConnectionException(name + ": cannot send " + r.what() + ": " + e.getMessage(), e)));
            return;
        }
        if (rc != 0) {
            TIMERS.execute(() -> fail(
                    new NvmeConnectionException(name + ": ibv_post_send of " + r.what() + " failed with errno " + rc)));
        }
    }

    /** One periodic scan per queue instead of a timer per command: the I/O path schedules nothing. */
    private void scanTimeouts() {
        RdmaRequest late = slots.late(System.nanoTime());
        if (late != null) {
            CommandTimeoutEvent.emit(
                    name, late.what(), "rdma", config.ioTimeout().toNanos());
            fail(new NvmeConnectionException(name + ": " + late.what() + " got no completion within "
                    + config.ioTimeout().toMillis()
                    + " ms (the I/O timeout); the connection was reset: call Controller.reconnect()"));
        }
    }

    private void pollLoop() {
        long idleSince = 0; // when the CQ was last found empty after completions, 0 while they come
        int emptyPolls = 0;
        try {
            while (!stopping) {
                int n = cq.poll(wcs);
                if (n > 0) {
                    idleSince = 0;
                    if (!reap(n)) {
                        return;
                    }
                    continue;
                }
                if (n < 0) {
                    throw new NvmeConnectionException(name + ": ibv_poll_cq failed (" + n + ")");
                }
                long now = System.nanoTime();
                if (idleSince == 0) {
                    idleSince = now;
                }
                if (++emptyPolls % 256 == 0 && watchCm()) {
                    return; // a busy queue never sleeps: look at the CM channel now and then
                }
                if (now - idleSince < SPIN_NANOS) {
                    Thread.onSpinWait();
                    continue;
                }
                idleSince = 0;
                int rc = cq.requestNotify(false);
                if (rc != 0) {
                    throw new NvmeConnectionException(name + ": ibv_req_notify_cq failed with errno " + rc);
                }
                n = cq.poll(wcs); // a completion that landed before the arming raises no event
                if (n > 0) {
                    if (!reap(n)) {
                        return;
                    }
                    continue; // the armed event, if it comes, is a spurious wake-up later
                }
                int ready = Poll.readable(events.fd(), channel.fd(), WAIT_MS);
                if ((ready & 2) != 0 && watchCm()) {
                    return;
                }
                if ((ready & 1) != 0 && events.getEvent(0) != null) {
                    if (++unacked >= ACK_BATCH) {
                        cq.ackEvents();
                        unacked = 0;
                    }
                }
            }
        } catch (NvmeProtocolException e) {
            fail(new NvmeProtocolException(name + ": " + e.getMessage() + "; the connection was closed", e));
        } catch (RuntimeException e) {
            if (!stopping) {
                fail(
                        e instanceof NvmeConnectionException c
                                ? c
                                : new NvmeConnectionException(name + ": the completion poller failed: " + e, e));
            }
        }
    }

    /** Handles {@code n} polled work completions. @return false when the queue failed and the poller must stop */
    private boolean reap(int n) {
        for (int i = 0; i < n; i++) {
            if (!wcs.isSuccess(i)) {
                if (stopping) {
                    return false; // flushed by our own teardown
                }
                int st = wcs.status(i);
                boolean recv = (wcs.wrId(i) & RECV_TAG) != 0;
                fail(new NvmeConnectionException(name + ": a " + (recv ? "receive" : "send") + " completed with "
                        + VerbsException.wcStatusName(st) + " (" + VerbsException.wcStatusText(st)
                        + "): the connection is lost;"
                        + " call Controller.reconnect()"));
                return false;
            }
            int opcode = wcs.opcode(i);
            int wrId = (int) wcs.wrId(i);
            if (opcode == IBV_WC_RECV && (wcs.wrId(i) & RECV_TAG) != 0) {
                received(wrId, wcs.byteLen(i));
            } else if (opcode == IBV_WC_SEND && (wcs.wrId(i) & RECV_TAG) == 0) {
                sent(wrId);
            } else {
                throw new NvmeProtocolException("unexpected work completion (opcode " + opcode + ", id 0x"
                        + Long.toHexString(wcs.wrId(i)) + ")");
            }
        }
        return true;
    }

    /** @return true when the connection went away (the queue has failed) */
    private boolean watchCm() {
        String gone = conn.lost();
        if (gone == null) {
            return false;
        }
        fail(new NvmeConnectionException(
                name + ": the target disconnected (" + gone + "); call Controller.reconnect()"));
        return true;
    }

    private void received(int index, int length) {
        if (index < 0 || index >= config.depth()) {
            throw new NvmeProtocolException("a receive completed with unknown work request id " + index);
        }
        if (length != CQE_SIZE) {
            throw new NvmeProtocolException("the target sent a " + length
                    + "-byte message; NVMe/RDMA responses are 16-byte completion entries");
        }
        Cqe cqe = Cqe.parse(responses.segment(), (long) index * CQE_SIZE);
        conn.postRecv(index);
        RdmaRequest r = slots.received(cqe);
        if (r != null) {
            finish(r);
        }
    }

    private void sent(int cid) {
        RdmaRequest r = slots.sent(cid);
        if (r != null) {
            finish(r);
        }
    }

    private void finish(RdmaRequest r) {
        slots.release(r, released);
        RdmaRequest next = released.next;
        released.next = null;
        if (!released.mine) {
            return;
        }
        if (next != null) {
            post(next);
        }
        r.copyHome();
        r.release();
        r.future.complete(r.cqe);
    }

    @Override
    public void fail(NvmeException why) {
        List<RdmaRequest> victims = slots.failAll(why);
        if (victims == null) {
            return;
        }
        conn.disconnect();
        if (timeoutScan != null) {
            timeoutScan.cancel(false);
        }
        for (RdmaRequest r : victims) {
            r.unstage();
            r.future.completeExceptionally(why);
        }
    }

    /** Disconnects and releases the queue pair, completion queue and buffers; outstanding commands fail. */
    @Override
    public void close() {
        fail(new NvmeConnectionException(name + ": closed by this host"));
        stopping = true;
        if (Thread.currentThread() != poller && poller.isAlive()) {
            try {
                poller.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (poller.isAlive()) {
            return; // a poller stuck in a native call keeps the resources; the controller's PD release frees them
        }
        slots.unstageWaiting();
        conn.close();
        try {
            Closeables.closeAll(List.of(swr, wcs));
        } catch (RuntimeException ignored) {
            // closing stays quiet, as it always was
        }
    }

    @Override
    public String toString() {
        return "RdmaQueue[" + name + ", depth " + config.depth() + "]";
    }
}
