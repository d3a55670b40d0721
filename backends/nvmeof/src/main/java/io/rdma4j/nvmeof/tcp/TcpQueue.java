package io.rdma4j.nvmeof.tcp;

import io.rdma4j.Closeables;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * One NVMe queue pair over one NVMe/TCP connection: the ICReq/ICResp exchange, then command capsules out and responses,
 * R2Ts and data in. Up to {@code depth} commands are in flight; more wait in a local queue, so {@link #submit} never
 * blocks. A reader thread parses PDUs and completes futures (callbacks run on it: do not block in them); a writer
 * thread sends PDUs, so answering an R2T never waits on the reader.
 *
 * <p>The data path copies no data, and its own PDU code allocates nothing per PDU: what a thread allocates per command
 * is a completion entry on the reader, and the JDK's own 40 bytes for each scattering or gathering socket call on
 * memory from an {@code Arena} ({@code DataPathAllocationTest} measures both). Every command has a slot, indexed by its
 * command identifier and reused, with its capsule header in a direct buffer. PDU headers are read into one reused
 * direct buffer (never more than the header, so data is never read into it); C2HData payload goes from the socket
 * straight into the caller's memory ({@code segment.asSlice(...).asByteBuffer()}), with the data digest computed over
 * it there. Capsules, in-capsule data and H2CData go out by gathering writes of the header buffer and a view of the
 * caller's memory. What remains per command is the future, the completion entry and the buffer view.
 *
 * <p>Anything the target sends that the protocol does not allow closes the connection: outstanding commands fail with
 * an {@link NvmeProtocolException}; a connection that drops fails them with an {@link NvmeConnectionException}.
 */
public final class TcpQueue implements FabricQueue {
    /**
     * Sockets connect through this; the socket must be a {@link SocketChannel}'s
     * ({@code SocketChannel.open().socket()}).
     */
    @FunctionalInterface
    public interface Connector {
        Socket connect(InetSocketAddress address, Duration timeout) throws IOException;

        Connector PLAIN = leavingFrom(null);

        /**
         * @param source local address of the NIC to leave by (the socket is bound to it before connecting); null lets
         *     the kernel's route choose
         */
        static Connector leavingFrom(java.net.InetAddress source) {
            return (address, timeout) -> {
                Socket s = SocketChannel.open().socket();
                try {
                    s.setTcpNoDelay(true);
                    if (source != null) {
                        s.bind(new InetSocketAddress(source, 0));
                    }
                    s.connect(address, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
                    return s;
                } catch (IOException e) {
                    throw Closeables.closeAllInto(e, s);
                }
            };
        }
    }

    /**
     * How a queue is set up.
     *
     * @param maxData largest data one command moves (bounds every PDU this queue accepts)
     * @param inCapsuleLimit writes up to this many bytes travel inside the command capsule
     */
    public record Config(
            int qid,
            int depth,
            boolean headerDigest,
            boolean dataDigest,
            Duration connectTimeout,
            Duration ioTimeout,
            int maxData,
            int inCapsuleLimit) {
        public Config {
            if (depth < 1 || depth > 65535) {
                throw new IllegalArgumentException("queue depth " + depth + " is outside 1..65535");
            }
        }
    }

    private static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nvmeof-timeouts");
        t.setDaemon(true);
        return t;
    });
    /** Room for a capsule or data PDU header: 72-byte CapsuleCmd + digest, padded to the largest alignment (128). */
    private static final int HEADER_ROOM = 256;
    /** Every PDU a host receives after the ICResp has HLEN 24: reading this much at a PDU boundary never reads data. */
    private static final int RX_HLEN = 24;
    /** R2Ts one command may have waiting for the writer: MAXR2T is 1 (ICReq MAXR2T 0); more is a target's error. */
    private static final int R2T_QUEUE = 4;

    private static final int JOB_CAPSULE = 1, JOB_H2C = 2, JOB_TERM = 3, JOB_CLOSE = 4;

    private final String name;
    private final Config config;
    private final Socket socket;
    private final SocketChannel channel;
    private final PduCodec.Settings rxSettings;
    private final PduCodec.Settings txSettings;
    private final long maxH2CData;
    private final long ioTimeoutNanos;
    private final Slot[] slots;
    private final int[] freeCids;
    private int freeCount; // guarded by this
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    /** Jobs for the writer thread: kind << 16 | cid, a ring guarded by this. */
    private final int[] jobs;

    private int jobHead, jobCount; // guarded by this
    private volatile boolean writerParked;
    /** Held while PDU bytes go out, so the writer thread and an inline sender never interleave. */
    private final ReentrantLock outLock = new ReentrantLock();

    private final ByteBuffer[] inlineGather = new ByteBuffer[3]; // guarded by outLock
    private final CRC32C capsuleCrc = new CRC32C(); // guarded by this
    private final Thread readerThread;
    private final Thread writerThread;
    private ScheduledFuture<?> timeoutScan;
    private NvmeException failure; // guarded by this
    private int termFes; // guarded by this

    /** A command's reused state, indexed by its command identifier. */
    private static final class Slot {
        final int cid;
        /** The capsule's PDU header (common header, SQE, digest, padding), little-endian. */
        final ByteBuffer capsule;
        /** The data digest of in-capsule data. */
        final ByteBuffer capsuleDigest;

        boolean busy;
        byte[] sqe;
        String what;
        CompletableFuture<Cqe> future;
        boolean timed;
        long deadline;
        MemorySegment segment;
        long offset;
        int length;
        boolean toController;
        boolean inCapsule;
        boolean capsuleSent; // taken for sending, so a stale job for a reused slot sends nothing twice
        ByteBuffer view; // the command's data in the caller's memory (or in bounce)
        byte[] bounce; // a heap segment that is no byte[] view goes through this copy
        long received;
        /**
         * Set when the caller freed the destination before its data arrived: the data was drained, the command fails.
         */
        NvmeException lost;

        long requested; // bytes the target asked for by R2T so far
        final int[] r2tTag = new int[R2T_QUEUE];
        final long[] r2tOffset = new long[R2T_QUEUE];
        final long[] r2tLength = new long[R2T_QUEUE];
        int r2tHead, r2tCount;

        Slot(int cid, ByteBuffer capsule, ByteBuffer capsuleDigest) {
            this.cid = cid;
            this.capsule = capsule;
            this.capsuleDigest = capsuleDigest;
        }

        String what() {
            return what != null ? what : Sqe.describe(sqe);
        }
    }

    /** A command beyond the queue depth, waiting for a free slot (the only per-command object beyond the future). */
    private record Waiting(byte[] sqe, Data data, String what, boolean timed, CompletableFuture<Cqe> future) {}

    private TcpQueue(
            String name,
            Config config,
            Socket socket,
            SocketChannel channel,
            PduCodec.Settings rx,
            PduCodec.Settings tx,
            long maxH2CData) {
        this.name = name;
        this.config = config;
        this.socket = socket;
        this.channel = channel;
        this.rxSettings = rx;
        this.txSettings = tx;
        this.maxH2CData = maxH2CData;
        this.ioTimeoutNanos = config.ioTimeout().toNanos();
        int depth = config.depth();
        this.slots = new Slot[depth];
        this.freeCids = new int[depth];
        ByteBuffer area = ByteBuffer.allocateDirect(depth * (HEADER_ROOM + 4));
        for (int i = 0; i < depth; i++) {
            ByteBuffer capsule = area.slice(i * (HEADER_ROOM + 4), HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer digest =
                    area.slice(i * (HEADER_ROOM + 4) + HEADER_ROOM, 4).order(ByteOrder.LITTLE_ENDIAN);
            slots[i] = new Slot(i, capsule, digest);
            freeCids[depth - 1 - i] = i;
        }
        this.freeCount = depth;
        this.jobs = new int[depth * (R2T_QUEUE + 1) + 4];
        this.readerThread = Thread.ofPlatform().daemon().name(name + "-rx").unstarted(new Reader()::run);
        this.writerThread = Thread.ofPlatform().daemon().name(name + "-tx").unstarted(new Writer()::run);
    }

    /**
     * Connects and initializes the NVMe/TCP connection (ICReq/ICResp). The Fabrics Connect command is the caller's.
     *
     * @param name for thread names and messages, e.g. {@code 127.0.0.1:4420 qid 1}
     */
    public static TcpQueue open(InetSocketAddress address, String name, Config config, Connector connector) {
        Socket s;
        try {
            s = connector.connect(address, config.connectTimeout());
        } catch (IOException e) {
            throw new NvmeConnectionException(
                    "cannot connect to NVMe/TCP target " + address + ": " + e.getMessage()
                            + " (is the target listening there? the default port is 4420)",
                    e);
        }
        SocketChannel ch = s.getChannel();
        if (ch == null) {
            closeQuietly(s);
            throw new IllegalArgumentException(
                    "the connector returned a socket without a channel: create it with SocketChannel.open().socket()");
        }
        try {
            // The ICReq/ICResp exchange goes through the socket's own streams, unbuffered, which honour the timeout.
            s.setSoTimeout((int) Math.max(
                    1, Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis())));
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            Pdu.IcReq req = new Pdu.IcReq(0, 0, config.headerDigest(), config.dataDigest(), 0);
            out.write(PduCodec.encode(req, PduCodec.Settings.INITIAL));
            out.flush();
            PduReader r = new PduReader(in, 0);
            Pdu p;
            try {
                p = r.read();
            } catch (SocketTimeoutException e) {
                throw new NvmeConnectionException(
                        name + ": no ICResp within " + config.connectTimeout().toMillis()
                                + " ms of the ICReq: is this an NVMe/TCP target?",
                        e);
            }
            if (p == null) {
                throw new NvmeConnectionException(
                        name + ": the target closed the connection instead of answering the ICReq");
            }
            if (p instanceof Pdu.TermReq t) {
                throw new NvmeProtocolException(name + ": the target refused the ICReq with " + t.fesName());
            }
            if (!(p instanceof Pdu.IcResp resp)) {
                throw new NvmeProtocolException(name + ": expected ICResp after ICReq, got " + Pdu.typeName(p.type()));
            }
            if (resp.pfv() != 0) {
                throw new NvmeProtocolException(
                        name + ": ICResp has PDU format version " + resp.pfv() + "; only 0 exists");
            }
            if ((resp.headerDigest() && !config.headerDigest()) || (resp.dataDigest() && !config.dataDigest())) {
                throw new NvmeProtocolException(name + ": ICResp enables a digest this host did not ask for");
            }
            if (resp.cpda() > 31) {
                throw new NvmeProtocolException(name + ": ICResp CPDA " + resp.cpda() + " is outside 0..31");
            }
            if (resp.maxH2CData() < 4096 || resp.maxH2CData() % 4 != 0) {
                throw new NvmeProtocolException(
                        name + ": ICResp MAXH2CDATA " + resp.maxH2CData() + " is below 4096 or not a multiple of 4");
            }
            s.setSoTimeout(0);
            PduCodec.Settings rx = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), 0);
            PduCodec.Settings tx = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), resp.cpda());
            TcpQueue q = new TcpQueue(name, config, s, ch, rx, tx, resp.maxH2CData());
            q.readerThread.start();
            q.writerThread.start();
            if (q.ioTimeoutNanos > 0) {
                long period = Math.max(10, config.ioTimeout().toMillis() / 8);
                q.timeoutScan = TIMERS.scheduleAtFixedRate(q::scanTimeouts, period, period, TimeUnit.MILLISECONDS);
            }
            return q;
        } catch (IOException e) {
            closeQuietly(s);
            throw new NvmeConnectionException(name + ": connection lost during ICReq/ICResp: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(s);
            throw e;
        }
    }

    /** @return whether this queue's threads may touch {@code segment} (a confined arena's memory they may not) */
    @Override
    public boolean accessible(MemorySegment segment) {
        return segment.isAccessibleBy(readerThread) && segment.isAccessibleBy(writerThread);
    }

    /** @return MAXH2CDATA from the ICResp */
    public long maxH2CData() {
        return maxH2CData;
    }

    /** @return whether header digests are on */
    public boolean headerDigest() {
        return txSettings.headerDigest();
    }

    /** @return whether data digests are on */
    public boolean dataDigest() {
        return txSettings.dataDigest();
    }

    /** @return the queue's configuration */
    public Config config() {
        return config;
    }

    /** @return null while the connection works, else why it does not */
    @Override
    public synchronized NvmeException failure() {
        return failure;
    }

    /**
     * Sends a command. The CID and (for data) SGL1 are filled in here.
     *
     * @param what names the command in error messages, e.g. {@code Read(nsid=1, slba=0, blocks=8)}; null: named from
     *     the command's bytes when needed ({@link Sqe#describe})
     * @return completes with the completion entry (whatever its status) or exceptionally if the connection fails
     */
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
        CompletableFuture<Cqe> future = new CompletableFuture<>();
        Slot s;
        synchronized (this) {
            if (failure != null) {
                future.completeExceptionally(failure);
                return future;
            }
            if (freeCount == 0) {
                waiting.add(new Waiting(sqe, data, what, timed, future));
                return future;
            }
            s = start(sqe, data, what, timed, future);
            if (Thread.currentThread() == readerThread || jobCount > 0) {
                if (!enqueue(JOB_CAPSULE, s.cid)) {
                    failLater(jobsFull());
                }
                return future;
            }
            s.capsuleSent = true;
        }
        sendInline(s);
        return future;
    }

    // Called with the lock held: takes a slot and builds the capsule in its header buffer.
    private Slot start(byte[] sqe, Data data, String what, boolean timed, CompletableFuture<Cqe> future) {
        Slot s = slots[freeCids[--freeCount]];
        s.busy = true;
        s.sqe = sqe;
        s.what = what;
        s.future = future;
        s.timed = timed;
        s.deadline = timed && ioTimeoutNanos > 0 ? System.nanoTime() + ioTimeoutNanos : Long.MAX_VALUE;
        s.segment = data.segment();
        s.offset = data.offset();
        s.length = data.length();
        s.toController = data.toController();
        s.received = 0;
        s.requested = 0;
        s.r2tHead = 0;
        s.r2tCount = 0;
        s.bounce = null;
        s.view = null;
        s.inCapsule = false;
        s.capsuleSent = false;
        Sqe.cid(sqe, s.cid);
        int inCapsuleLength = 0;
        if (data.length() > 0) {
            s.view = view(s, data);
            if (data.toController() && data.length() <= config.inCapsuleLimit()) {
                Sqe.inCapsule(sqe, data.length());
                s.inCapsule = true;
                inCapsuleLength = data.length();
            } else {
                Sqe.transportData(sqe, data.length());
            }
        }
        ByteBuffer h = s.capsule;
        h.limit(h.capacity());
        h.put(8, sqe);
        PduCodec.finishHeader(h, Pdu.CAPSULE_CMD, 0, inCapsuleLength, txSettings, capsuleCrc);
        if (inCapsuleLength > 0 && txSettings.dataDigest()) {
            s.capsuleDigest.putInt(0, PduCodec.crc32c(capsuleCrc, s.view.clear()));
        }
        return s;
    }

    /** A byte-buffer view of the command's data; heap segments other than byte[] go through a bounce array. */
    private static ByteBuffer view(Slot s, Data data) {
        MemorySegment part = data.segment().asSlice(data.offset(), data.length());
        try {
            return part.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        } catch (UnsupportedOperationException e) {
            s.bounce = new byte[data.length()];
            if (data.toController()) {
                MemorySegment.copy(part, 0, MemorySegment.ofArray(s.bounce), 0, data.length());
            }
            return ByteBuffer.wrap(s.bounce);
        }
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
        wakeWriter();
        return true;
    }

    // Called with the lock held.
    private void wakeWriter() {
        if (writerParked) {
            LockSupport.unpark(writerThread);
        }
    }

    private NvmeProtocolException jobsFull() {
        return new NvmeProtocolException("the target answers commands faster than this host sent them (" + jobs.length
                + " sends pending); it completed a command before receiving it");
    }

    /**
     * Sends a capsule from the submitting thread when the writer is not sending (one thread hand-off less per command),
     * else queues it for the writer. The reader thread always queues: it must never block on a full socket.
     */
    private void sendInline(Slot s) {
        if (!outLock.tryLock()) {
            synchronized (this) {
                if (failure == null) {
                    s.capsuleSent = false;
                    if (!enqueue(JOB_CAPSULE, s.cid)) {
                        failLater(jobsFull());
                    }
                }
            }
            return;
        }
        IOException failed = null;
        try {
            int n = capsuleBuffers(s, inlineGather, 0);
            writeFully(inlineGather, n);
        } catch (IOException e) {
            failed = e;
        } finally {
            outLock.unlock();
        }
        if (failed != null) {
            fail(new NvmeConnectionException(name + ": connection lost while sending: " + failed.getMessage(), failed));
        }
    }

    /** Puts the capsule's buffers (header, in-capsule data, data digest) into {@code into} from {@code at}. */
    private int capsuleBuffers(Slot s, ByteBuffer[] into, int at) {
        ByteBuffer h = s.capsule;
        h.position(0).limit(h.getInt(4) - (s.inCapsule ? s.length + (txSettings.dataDigest() ? 4 : 0) : 0));
        into[at++] = h;
        if (s.inCapsule) {
            into[at++] = s.view.clear();
            if (txSettings.dataDigest()) {
                into[at++] = s.capsuleDigest.clear();
            }
        }
        return at;
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

    /** Fails the queue from another thread: the caller holds the lock, which {@link #fail} must not be called under. */
    private void failLater(NvmeException why) {
        TIMERS.execute(() -> fail(why));
    }

    private void scanTimeouts() {
        long now = System.nanoTime();
        String late = null;
        synchronized (this) {
            if (failure != null) {
                return;
            }
            for (Slot s : slots) {
                if (s.busy && s.timed && now - s.deadline > 0) {
                    late = s.what(); // named here: once the lock is gone the slot may be reused
                    break;
                }
            }
        }
        if (late != null) {
            fail(new NvmeConnectionException(name + ": " + late + " got no completion within "
                    + config.ioTimeout().toMillis()
                    + " ms (the I/O timeout); the connection was reset: call Controller.reconnect()"));
        }
    }

    private void finish(Slot s, Cqe cqe) {
        CompletableFuture<Cqe> f;
        NvmeException lost = s.lost;
        synchronized (this) {
            f = release(s);
            Waiting next = waiting.poll();
            if (next != null && failure == null) {
                Slot n = start(next.sqe(), next.data(), next.what(), next.timed(), next.future());
                if (!enqueue(JOB_CAPSULE, n.cid)) {
                    throw jobsFull(); // on the reader thread: closes the connection
                }
            }
        }
        if (lost != null) {
            f.completeExceptionally(lost);
        } else {
            f.complete(cqe);
        }
    }

    // Called with the lock held: returns the slot and hands back its future.
    private CompletableFuture<Cqe> release(Slot s) {
        CompletableFuture<Cqe> f = s.future;
        if (s.bounce != null && !s.toController && s.lost == null) {
            MemorySegment.copy(MemorySegment.ofArray(s.bounce), 0, s.segment, s.offset, s.length);
        }
        s.busy = false;
        s.future = null;
        s.view = null;
        s.bounce = null;
        s.segment = null;
        s.lost = null;
        s.sqe = null;
        s.what = null;
        freeCids[freeCount++] = s.cid;
        return f;
    }

    private Slot inFlight(int cid, String pdu) {
        synchronized (this) {
            if (cid < slots.length && slots[cid].busy) {
                return slots[cid];
            }
        }
        throw new NvmeProtocolException(pdu + " names command identifier " + cid + ", which has no command in flight");
    }

    /** Failures that already sent or received a TermReq. */
    private static final class TerminatedByTarget extends NvmeProtocolException {
        TerminatedByTarget(String m) {
            super(m);
        }
    }

    private void terminate(int fes) {
        synchronized (this) {
            termFes = fes;
            enqueue(JOB_TERM, 0); // with the ring full the connection closes without telling the target why
        }
    }

    /** Parses PDUs from the socket: headers into one reused buffer, data straight into the commands' memory. */
    private final class Reader {
        private final ByteBuffer rx = ByteBuffer.allocateDirect(HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
        private final PduCodec.Header h = new PduCodec.Header();
        private final CRC32C crc = new CRC32C();
        private final int hd = rxSettings.headerDigest() ? 4 : 0;
        /** Bytes of rx read from the socket (from index 0): the current PDU's header, maybe the next one's start. */
        private int have;
        /** The common header of the PDU being read has been checked (h describes it). */
        private boolean inPdu;

        private final ByteBuffer[] scatter = new ByteBuffer[2];
        /** Where the data of a read whose memory was freed goes (made on first use). */
        private ByteBuffer scratch;

        void run() {
            try {
                while (true) {
                    inPdu = false;
                    if (!fill(PduCodec.COMMON_HEADER, RX_HLEN + hd, true)) {
                        fail(new NvmeConnectionException(name + ": the target closed the connection"));
                        return;
                    }
                    PduCodec.checkCommonHeader(rx, rxSettings, config.maxData(), h);
                    inPdu = true;
                    int end = h.headerEnd();
                    boolean data = end < h.plen();
                    // Read ahead into the next PDU's fixed header only when this PDU carries no data to read next.
                    fill(end, data ? end : end + RX_HLEN + hd, false);
                    PduCodec.checkHeaderDigest(rx, h, crc);
                    handle();
                }
            } catch (TerminatedByTarget e) {
                fail(e);
            } catch (NvmeProtocolException e) {
                int fes = e.getMessage().contains("header digest") ? 3 : 1;
                terminate(fes);
                fail(new NvmeProtocolException(name + ": " + e.getMessage() + "; the connection was closed", e));
            } catch (IOException e) {
                fail(new NvmeConnectionException(name + ": connection lost: " + e.getMessage(), e));
            } catch (RuntimeException e) {
                fail(new NvmeProtocolException(name + ": failed handling a PDU: " + e, e));
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
                    Slot s = inFlight(cqe.cid(), "CapsuleResp");
                    if (cqe.ok() && s.length > 0 && !s.toController && s.received != s.length) {
                        throw new NvmeProtocolException("CapsuleResp reports success for " + s.what() + " after "
                                + s.received + " of " + s.length + " bytes of data");
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
                    Slot s = inFlight(cid, "R2T");
                    if (!s.toController || s.length == 0 || s.inCapsule) {
                        throw new NvmeProtocolException(
                                "R2T for " + s.what() + ", which has no data waiting for an R2T");
                    }
                    synchronized (TcpQueue.this) {
                        if (r2to != s.requested || r2to + r2tl > s.length) {
                            throw new NvmeProtocolException("R2T for " + s.what() + " asks for bytes [" + r2to + ", "
                                    + (r2to + r2tl) + "); expected a range from offset " + s.requested + " within "
                                    + s.length + " bytes");
                        }
                        if (s.r2tCount == R2T_QUEUE) {
                            throw new NvmeProtocolException(
                                    "R2T for " + s.what() + " while " + R2T_QUEUE + " R2Ts are still being answered;"
                                            + " this host allows one outstanding R2T per command (MAXR2T 0)");
                        }
                        s.requested += r2tl;
                        int i = (s.r2tHead + s.r2tCount) % R2T_QUEUE;
                        s.r2tTag[i] = ttag;
                        s.r2tOffset[i] = r2to;
                        s.r2tLength[i] = r2tl;
                        s.r2tCount++;
                        if (!enqueue(JOB_H2C, s.cid)) {
                            throw jobsFull();
                        }
                    }
                }
                case Pdu.C2H_TERM_REQ -> {
                    int fes = rx.getShort(8) & 0xffff;
                    long fei = rx.getInt(10) & 0xffffffffL;
                    Pdu.TermReq t = new Pdu.TermReq(true, fes, fei, new byte[0]);
                    throw new TerminatedByTarget(name + ": the target terminated the connection: " + t.fesName()
                            + " (FES " + fes + ", FEI " + fei + ")");
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
                throw new NvmeProtocolException(
                        "C2HData has DATAL " + datal + " but carries " + len + " bytes of data");
            }
            boolean last = (h.flags() & Pdu.FLAG_LAST_PDU) != 0;
            boolean success = (h.flags() & Pdu.FLAG_SUCCESS) != 0;
            int plen = h.plen();
            int start = h.headerEnd();
            consume(start);
            Slot s = inFlight(cid, "C2HData");
            if (s.toController || s.length == 0) {
                throw new NvmeProtocolException("C2HData for " + s.what() + ", which reads no data");
            }
            if (datao != s.received || datao + len > s.length) {
                throw new NvmeProtocolException(
                        "C2HData for " + s.what() + " carries bytes [" + datao + ", " + (datao + len)
                                + "); expected data from offset " + s.received + " within " + s.length + " bytes");
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
                throw new NvmeProtocolException("C2HData for " + s.what() + " is marked last after " + s.received
                        + " of " + s.length + " bytes");
            }
            if (success) {
                finish(s, Cqe.success(s.cid));
            }
        }

        /**
         * The caller freed the read's memory (closed its arena) while the read was in flight: the data has nowhere to
         * go, but the stream must stay in step, so it is read into scratch (digest still checked), and the command
         * fails when its completion arrives. The connection and every other command carry on.
         */
        private void drain(Slot s, int len, int plen) throws IOException {
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
    }

    /** Sends queued capsules (several per gathering write), H2CData answering R2Ts, and a TermReq. */
    private final class Writer {
        private final ByteBuffer[] gather = new ByteBuffer[48];
        private final ByteBuffer h2c = ByteBuffer.allocateDirect(HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
        private final ByteBuffer h2cDigest = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN);
        private final ByteBuffer term = ByteBuffer.allocateDirect(HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
        private final CRC32C crc = new CRC32C();

        void run() {
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
                            h2cData(slots[job & 0xffff]);
                        } else if (kind == JOB_TERM) {
                            termReq();
                            return;
                        }
                    } finally {
                        outLock.unlock();
                    }
                }
            } catch (IOException e) {
                fail(new NvmeConnectionException(name + ": connection lost while sending: " + e.getMessage(), e));
            }
        }

        private int take() {
            while (true) {
                synchronized (TcpQueue.this) {
                    if (jobCount == 0 && failure != null) {
                        return JOB_CLOSE << 16;
                    }
                    if (jobCount > 0) {
                        int job = jobs[jobHead];
                        jobHead = (jobHead + 1) % jobs.length;
                        jobCount--;
                        writerParked = false;
                        return job;
                    }
                    writerParked = true;
                }
                LockSupport.park(this);
            }
        }

        /** Writes {@code cid}'s capsule and every capsule queued right behind it in one gathering write. */
        private void capsules(int cid) throws IOException {
            int n;
            synchronized (TcpQueue.this) {
                if (failure != null) {
                    return;
                }
                n = 0;
                Slot first = slots[cid];
                if (first.busy && !first.capsuleSent) {
                    first.capsuleSent = true;
                    n = capsuleBuffers(first, gather, 0);
                }
                while (jobCount > 0 && n + 3 <= gather.length && jobs[jobHead] >>> 16 == JOB_CAPSULE) {
                    Slot s = slots[jobs[jobHead] & 0xffff];
                    jobHead = (jobHead + 1) % jobs.length;
                    jobCount--;
                    if (s.busy && !s.capsuleSent) {
                        s.capsuleSent = true;
                        n = capsuleBuffers(s, gather, n);
                    }
                }
            }
            writeFully(gather, n);
        }

        /** Answers the slot's oldest R2T with H2CData PDUs of at most MAXH2CDATA each. */
        private void h2cData(Slot s) throws IOException {
            int ttag;
            long off;
            long end;
            ByteBuffer v;
            synchronized (TcpQueue.this) {
                if (failure != null || !s.busy || s.r2tCount == 0) {
                    return;
                }
                ttag = s.r2tTag[s.r2tHead];
                off = s.r2tOffset[s.r2tHead];
                end = off + s.r2tLength[s.r2tHead];
                v = s.view;
                // Taken off the slot now: once the last byte is out, the command may complete and its slot be reused.
                s.r2tHead = (s.r2tHead + 1) % R2T_QUEUE;
                s.r2tCount--;
            }
            boolean dd = txSettings.dataDigest();
            while (off < end) {
                int n = (int) Math.min(maxH2CData, end - off);
                h2c.limit(h2c.capacity());
                h2c.putShort(8, (short) s.cid);
                h2c.putShort(10, (short) ttag);
                h2c.putInt(12, (int) off);
                h2c.putInt(16, n);
                h2c.putInt(20, 0);
                PduCodec.finishHeader(h2c, Pdu.H2C_DATA, off + n == end ? Pdu.FLAG_LAST_PDU : 0, n, txSettings, crc);
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
            synchronized (TcpQueue.this) {
                fes = termFes;
            }
            term.limit(term.capacity());
            for (int i = 8; i < 24; i++) {
                term.put(i, (byte) 0);
            }
            term.putShort(8, (short) fes);
            PduCodec.finishHeader(term, Pdu.H2C_TERM_REQ, 0, 0, txSettings, crc);
            gather[0] = term;
            writeFully(gather, 1);
        }
    }

    /** Fails every outstanding and waiting command with {@code why} and closes the connection. Idempotent. */
    @Override
    public void fail(NvmeException why) {
        List<CompletableFuture<Cqe>> victims = new ArrayList<>();
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = why;
            for (Slot s : slots) {
                if (s.busy) {
                    victims.add(s.future);
                    s.busy = false;
                    s.future = null;
                    s.view = null;
                    s.bounce = null;
                    s.segment = null;
                }
            }
            for (Waiting w : waiting) {
                victims.add(w.future());
            }
            waiting.clear();
            // A queued TermReq goes out first; the writer stops at it or once its jobs are done.
            wakeWriter();
        }
        if (timeoutScan != null) {
            timeoutScan.cancel(false);
        }
        // Let the writer flush a TermReq, but never wait on a peer that stopped reading.
        if (Thread.currentThread() != writerThread) {
            try {
                writerThread.join(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly(socket);
        for (CompletableFuture<Cqe> f : victims) {
            f.completeExceptionally(why);
        }
    }

    /** Closes the connection; outstanding commands fail with a {@link NvmeConnectionException}. */
    @Override
    public void close() {
        fail(new NvmeConnectionException(name + ": closed by this host"));
        if (Thread.currentThread() != readerThread) {
            try {
                readerThread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing a broken socket: nothing left to report
        }
    }
}
