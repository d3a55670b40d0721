package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One NVMe queue pair over one NVMe/TCP connection: the ICReq/ICResp exchange, then command capsules out and
 * responses, R2Ts and data in. Up to {@code depth} commands are in flight; more wait in a local queue, so
 * {@link #submit} never blocks. A reader thread parses PDUs and completes futures (callbacks run on it: do not block
 * in them); a writer thread sends PDUs, so answering an R2T never waits on the reader.
 *
 * <p>Anything the target sends that the protocol does not allow closes the connection: outstanding commands fail with
 * an {@link NvmeProtocolException}; a connection that drops fails them with an {@link NvmeConnectionException}.
 */
public final class TcpQueue implements FabricQueue {
    /** Sockets connect through this; tests wrap the streams to inject faults. */
    @FunctionalInterface
    public interface Connector {
        Socket connect(InetSocketAddress address, Duration timeout) throws IOException;

        Connector PLAIN = leavingFrom(null);

        /**
         * @param source local address of the NIC to leave by (the socket is bound to it before connecting); null lets
         *               the kernel's route choose
         */
        static Connector leavingFrom(java.net.InetAddress source) {
            return (address, timeout) -> {
                Socket s = new Socket();
                try {
                    s.setTcpNoDelay(true);
                    if (source != null) {
                        s.bind(new InetSocketAddress(source, 0));
                    }
                    s.connect(address, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
                    return s;
                } catch (IOException e) {
                    s.close();
                    throw e;
                }
            };
        }
    }

    /**
     * How a queue is set up.
     * @param maxData largest data one command moves (bounds every PDU this queue accepts)
     * @param inCapsuleLimit writes up to this many bytes travel inside the command capsule
     */
    public record Config(int qid, int depth, boolean headerDigest, boolean dataDigest, Duration connectTimeout, Duration ioTimeout,
                         int maxData, int inCapsuleLimit) {
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
    private static final Object CLOSE = new Object();

    private final String name;
    private final Config config;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final PduReader reader;
    private final PduCodec.Settings txSettings;
    private final long maxH2CData;
    private final Request[] slots;
    private final ArrayDeque<Integer> freeCids = new ArrayDeque<>();
    private final ArrayDeque<Request> waiting = new ArrayDeque<>();
    private final LinkedBlockingQueue<Object> sendQueue = new LinkedBlockingQueue<>();
    /** Held while PDU bytes go out, so the writer thread and an inline sender never interleave. */
    private final ReentrantLock outLock = new ReentrantLock();
    private final Thread readerThread;
    private final Thread writerThread;
    private NvmeException failure; // guarded by this

    private static final class Request {
        final byte[] sqe;
        final Data data;
        final String what;
        final CompletableFuture<Cqe> future = new CompletableFuture<>();
        int cid = -1;
        long received;
        long requested; // bytes the target asked for by R2T so far
        ScheduledFuture<?> timeout;

        Request(byte[] sqe, Data data, String what) {
            this.sqe = sqe;
            this.data = data;
            this.what = what;
        }
    }

    private record H2CJob(Request request, int ttag, long offset, long length) {
    }

    private TcpQueue(String name, Config config, Socket socket, PduCodec.Settings rx, PduCodec.Settings tx, long maxH2CData,
                     InputStream in, OutputStream out) {
        this.name = name;
        this.config = config;
        this.socket = socket;
        this.in = in;
        this.out = out;
        this.reader = new PduReader(in, config.maxData());
        this.reader.settings(rx, config.maxData());
        this.txSettings = tx;
        this.maxH2CData = maxH2CData;
        this.slots = new Request[config.depth()];
        for (int i = 0; i < config.depth(); i++) {
            freeCids.add(i);
        }
        this.readerThread = Thread.ofPlatform().daemon().name(name + "-rx").unstarted(this::readLoop);
        this.writerThread = Thread.ofPlatform().daemon().name(name + "-tx").unstarted(this::writeLoop);
    }

    /**
     * Connects and initializes the NVMe/TCP connection (ICReq/ICResp). The Fabrics Connect command is the caller's.
     * @param name for thread names and messages, e.g. {@code 127.0.0.1:4420 qid 1}
     */
    public static TcpQueue open(InetSocketAddress address, String name, Config config, Connector connector) {
        Socket s;
        try {
            s = connector.connect(address, config.connectTimeout());
        } catch (IOException e) {
            throw new NvmeConnectionException("cannot connect to NVMe/TCP target " + address + ": " + e.getMessage()
                    + " (is the target listening there? the default port is 4420)", e);
        }
        try {
            s.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis())));
            InputStream in = new BufferedInputStream(s.getInputStream(), 1 << 16);
            OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16);
            Pdu.IcReq req = new Pdu.IcReq(0, 0, config.headerDigest(), config.dataDigest(), 0);
            out.write(PduCodec.encode(req, PduCodec.Settings.INITIAL));
            out.flush();
            PduReader r = new PduReader(in, 0);
            Pdu p;
            try {
                p = r.read();
            } catch (SocketTimeoutException e) {
                throw new NvmeConnectionException(name + ": no ICResp within " + config.connectTimeout().toMillis()
                        + " ms of the ICReq: is this an NVMe/TCP target?", e);
            }
            if (p == null) {
                throw new NvmeConnectionException(name + ": the target closed the connection instead of answering the ICReq");
            }
            if (p instanceof Pdu.TermReq t) {
                throw new NvmeProtocolException(name + ": the target refused the ICReq with " + t.fesName());
            }
            if (!(p instanceof Pdu.IcResp resp)) {
                throw new NvmeProtocolException(name + ": expected ICResp after ICReq, got " + Pdu.typeName(p.type()));
            }
            if (resp.pfv() != 0) {
                throw new NvmeProtocolException(name + ": ICResp has PDU format version " + resp.pfv() + "; only 0 exists");
            }
            if ((resp.headerDigest() && !config.headerDigest()) || (resp.dataDigest() && !config.dataDigest())) {
                throw new NvmeProtocolException(name + ": ICResp enables a digest this host did not ask for");
            }
            if (resp.cpda() > 31) {
                throw new NvmeProtocolException(name + ": ICResp CPDA " + resp.cpda() + " is outside 0..31");
            }
            if (resp.maxH2CData() < 4096 || resp.maxH2CData() % 4 != 0) {
                throw new NvmeProtocolException(name + ": ICResp MAXH2CDATA " + resp.maxH2CData() + " is below 4096 or not a multiple of 4");
            }
            s.setSoTimeout(0);
            PduCodec.Settings rx = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), 0);
            PduCodec.Settings tx = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), resp.cpda());
            TcpQueue q = new TcpQueue(name, config, s, rx, tx, resp.maxH2CData(), in, out);
            q.readerThread.start();
            q.writerThread.start();
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
     * @param what names the command in error messages, e.g. {@code Read(nsid=1, slba=0, blocks=8)}
     * @return completes with the completion entry (whatever its status) or exceptionally if the connection fails
     */
    @Override
    public CompletableFuture<Cqe> submit(byte[] sqe, Data data, String what) {
        if (data.length() > config.maxData()) {
            throw new IllegalArgumentException(what + " moves " + data.length() + " bytes; this queue's commands move at most " + config.maxData());
        }
        Request r = new Request(sqe, data, what);
        Pdu.CapsuleCmd cmd;
        synchronized (this) {
            if (failure != null) {
                r.future.completeExceptionally(failure);
                return r.future;
            }
            if (freeCids.isEmpty()) {
                waiting.add(r);
                return r.future;
            }
            cmd = start(r);
        }
        send(cmd);
        return r.future;
    }

    // Called with the lock held; the caller sends the returned capsule.
    private Pdu.CapsuleCmd start(Request r) {
        int cid = freeCids.poll();
        r.cid = cid;
        slots[cid] = r;
        Sqe.cid(r.sqe, cid);
        byte[] capsuleData = new byte[0];
        if (r.data.length() > 0) {
            if (r.data.toController() && r.data.length() <= config.inCapsuleLimit()) {
                Sqe.inCapsule(r.sqe, r.data.length());
                capsuleData = r.data.segment().asSlice(r.data.offset(), r.data.length()).toArray(ValueLayout.JAVA_BYTE);
            } else {
                Sqe.transportData(r.sqe, r.data.length());
            }
        }
        if (!config.ioTimeout().isZero()) {
            long ms = config.ioTimeout().toMillis();
            r.timeout = TIMERS.schedule(() -> timedOut(r, ms), ms, TimeUnit.MILLISECONDS);
        }
        return new Pdu.CapsuleCmd(r.sqe, capsuleData);
    }

    /**
     * Sends a capsule from the submitting thread when the writer has nothing queued (one thread hand-off less per
     * command), else queues it for the writer. The reader thread always queues: it must never block on a full socket.
     */
    private void send(Pdu.CapsuleCmd cmd) {
        if (Thread.currentThread() != readerThread && sendQueue.isEmpty() && outLock.tryLock()) {
            IOException failed = null;
            try {
                out.write(PduCodec.encode(cmd, txSettings));
                out.flush();
            } catch (IOException e) {
                failed = e;
            } finally {
                outLock.unlock();
            }
            if (failed != null) {
                fail(new NvmeConnectionException(name + ": connection lost while sending: " + failed.getMessage(), failed));
            }
            return;
        }
        sendQueue.add(cmd);
    }

    private void timedOut(Request r, long ms) {
        synchronized (this) {
            if (r.future.isDone() || slots[r.cid] != r) {
                return;
            }
        }
        fail(new NvmeConnectionException(name + ": " + r.what + " got no completion within " + ms
                + " ms (the I/O timeout); the connection was reset: call Controller.reconnect()"));
    }

    private void finish(Request r, Cqe cqe) {
        synchronized (this) {
            slots[r.cid] = null;
            freeCids.add(r.cid);
            Request next = waiting.poll();
            if (next != null && failure == null) {
                sendQueue.add(start(next));
            }
        }
        if (r.timeout != null) {
            r.timeout.cancel(false);
        }
        r.future.complete(cqe);
    }

    private void readLoop() {
        try {
            while (true) {
                Pdu p = reader.read();
                if (p == null) {
                    fail(new NvmeConnectionException(name + ": the target closed the connection"));
                    return;
                }
                handle(p);
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

    private Request inFlight(int cid, String pdu) {
        Request r;
        synchronized (this) {
            r = cid < slots.length ? slots[cid] : null;
        }
        if (r == null) {
            throw new NvmeProtocolException(pdu + " names command identifier " + cid + ", which has no command in flight");
        }
        return r;
    }

    private void handle(Pdu p) {
        switch (p) {
            case Pdu.CapsuleResp resp -> {
                Cqe cqe = Cqe.parse(resp.cqe());
                Request r = inFlight(cqe.cid(), "CapsuleResp");
                if (cqe.ok() && r.data.length() > 0 && !r.data.toController() && r.received != r.data.length()) {
                    throw new NvmeProtocolException("CapsuleResp reports success for " + r.what + " after " + r.received + " of "
                            + r.data.length() + " bytes of data");
                }
                finish(r, cqe);
            }
            case Pdu.C2HData d -> {
                Request r = inFlight(d.cccid(), "C2HData");
                if (r.data.toController() || r.data.length() == 0) {
                    throw new NvmeProtocolException("C2HData for " + r.what + ", which reads no data");
                }
                long len = d.data().length;
                if (d.datao() != r.received || d.datao() + len > r.data.length()) {
                    throw new NvmeProtocolException("C2HData for " + r.what + " carries bytes [" + d.datao() + ", " + (d.datao() + len)
                            + "); expected data from offset " + r.received + " within " + r.data.length() + " bytes");
                }
                MemorySegment.copy(d.data(), 0, r.data.segment(), ValueLayout.JAVA_BYTE, r.data.offset() + d.datao(), d.data().length);
                r.received += len;
                if (d.last() && r.received != r.data.length()) {
                    throw new NvmeProtocolException("C2HData for " + r.what + " is marked last after " + r.received + " of " + r.data.length() + " bytes");
                }
                if (d.success()) {
                    finish(r, Cqe.success(r.cid));
                }
            }
            case Pdu.R2T t -> {
                Request r = inFlight(t.cccid(), "R2T");
                if (!r.data.toController() || r.data.length() == 0 || r.data.length() <= config.inCapsuleLimit()) {
                    throw new NvmeProtocolException("R2T for " + r.what + ", which has no data waiting for an R2T");
                }
                if (t.r2to() != r.requested || t.r2to() + t.r2tl() > r.data.length()) {
                    throw new NvmeProtocolException("R2T for " + r.what + " asks for bytes [" + t.r2to() + ", " + (t.r2to() + t.r2tl())
                            + "); expected a range from offset " + r.requested + " within " + r.data.length() + " bytes");
                }
                r.requested += t.r2tl();
                sendQueue.add(new H2CJob(r, t.ttag(), t.r2to(), t.r2tl()));
            }
            case Pdu.TermReq t when t.fromController() -> throw new TerminatedByTarget(name + ": the target terminated the connection: "
                    + t.fesName() + " (FES " + t.fes() + ", FEI " + t.fei() + ")");
            default -> {
                terminate(2);
                throw new TerminatedByTarget(name + ": unexpected " + Pdu.typeName(p.type()) + " from the target; the connection was closed");
            }
        }
    }

    /** Failures that already sent or received a TermReq. */
    private static final class TerminatedByTarget extends NvmeProtocolException {
        TerminatedByTarget(String m) {
            super(m);
        }
    }

    private void terminate(int fes) {
        sendQueue.add(new Pdu.TermReq(false, fes, 0, new byte[0]));
    }

    private void writeLoop() {
        try {
            while (true) {
                Object o = sendQueue.take();
                outLock.lock();
                try {
                    if (o == CLOSE) {
                        out.flush();
                        return;
                    }
                    if (o instanceof Pdu p) {
                        out.write(PduCodec.encode(p, txSettings));
                        if (p instanceof Pdu.TermReq) {
                            out.flush();
                            return;
                        }
                    } else if (o instanceof H2CJob j) {
                        long off = j.offset();
                        long end = j.offset() + j.length();
                        while (off < end) {
                            int n = (int) Math.min(maxH2CData, end - off);
                            byte[] chunk = j.request().data.segment().asSlice(j.request().data.offset() + off, n).toArray(ValueLayout.JAVA_BYTE);
                            out.write(PduCodec.encode(new Pdu.H2CData(j.request().cid, j.ttag(), off, off + n == end, chunk), txSettings));
                            off += n;
                        }
                    }
                    if (sendQueue.isEmpty()) {
                        out.flush();
                    }
                } finally {
                    outLock.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            fail(new NvmeConnectionException(name + ": connection lost while sending: " + e.getMessage(), e));
        }
    }

    /** Fails every outstanding and waiting command with {@code why} and closes the connection. Idempotent. */
    @Override
    public void fail(NvmeException why) {
        java.util.List<Request> victims = new java.util.ArrayList<>();
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = why;
            for (int i = 0; i < slots.length; i++) {
                if (slots[i] != null) {
                    victims.add(slots[i]);
                    slots[i] = null;
                }
            }
            victims.addAll(waiting);
            waiting.clear();
        }
        sendQueue.add(CLOSE);
        // Let the writer flush a TermReq, but never wait on a peer that stopped reading.
        if (Thread.currentThread() != writerThread) {
            try {
                writerThread.join(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly(socket);
        for (Request r : victims) {
            if (r.timeout != null) {
                r.timeout.cancel(false);
            }
            r.future.completeExceptionally(why);
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
