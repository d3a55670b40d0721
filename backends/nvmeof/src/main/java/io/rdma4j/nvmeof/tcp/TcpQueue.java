package io.rdma4j.nvmeof.tcp;

import io.rdma4j.Closeables;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.CommandTimeoutEvent;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One NVMe queue pair over one NVMe/TCP connection: the ICReq/ICResp exchange, then command capsules out and responses,
 * R2Ts and data in. Up to {@code depth} commands are in flight; more wait in a local queue, so {@link #submit} never
 * blocks. A reader thread parses PDUs and completes futures (callbacks run on it: do not block in them); a writer
 * thread sends PDUs, so answering an R2T never waits on the reader.
 *
 * <p>This class only wires the pieces together, each readable alone: {@code Handshake} (connecting and the ICReq/ICResp
 * exchange), {@code CommandSlots} (command identifiers, per-command state, waiting commands, deadlines, the failure),
 * {@code Receiver} (the reader thread) and {@code Sender} (the writer thread and the job ring that feeds it). Each owns
 * its state under its own lock. The slot table's lock nests with no other; the sender's ring lock is taken inside the
 * lock that keeps PDUs from interleaving, never the other way. Work passes from the receiver and the submitting threads
 * to the writer through the sender's job ring.
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

    private final String name;
    private final Config config;
    private final Socket socket;
    private final PduCodec.Settings txSettings;
    private final long maxH2CData;
    private final CommandSlots slots;
    private final Sender sender;
    private final Receiver receiver;
    private ScheduledFuture<?> timeoutScan;

    private TcpQueue(String name, Config config, Handshake hs) {
        this.name = name;
        this.config = config;
        this.socket = hs.socket();
        this.txSettings = hs.tx();
        this.maxH2CData = hs.maxH2CData();
        this.slots = new CommandSlots(config.depth(), config.ioTimeout().toNanos(), config.inCapsuleLimit(), hs.tx());
        this.sender = new Sender(name, hs.channel(), slots, hs.tx(), hs.maxH2CData(), this::fail, this::finishLate);
        this.receiver = new Receiver(name, hs.channel(), hs.rx(), config.maxData(), slots, sender, this::fail);
    }

    /**
     * Connects and initializes the NVMe/TCP connection (ICReq/ICResp). The Fabrics Connect command is the caller's.
     *
     * @param name for thread names and messages, e.g. {@code 127.0.0.1:4420 qid 1}
     */
    public static TcpQueue open(InetSocketAddress address, String name, Config config, Connector connector) {
        Handshake hs = Handshake.open(address, name, config, connector);
        try {
            TcpQueue q = new TcpQueue(name, config, hs);
            q.receiver.thread().start();
            q.sender.thread().start();
            if (config.ioTimeout().toNanos() > 0) {
                long period = Math.max(10, config.ioTimeout().toMillis() / 8);
                q.timeoutScan = TIMERS.scheduleAtFixedRate(q::scanTimeouts, period, period, TimeUnit.MILLISECONDS);
            }
            return q;
        } catch (RuntimeException | Error e) {
            Handshake.closeQuietly(hs.socket());
            throw e;
        }
    }

    /** @return whether this queue's threads may touch {@code segment} (a confined arena's memory they may not) */
    @Override
    public boolean accessible(MemorySegment segment) {
        return segment.isAccessibleBy(receiver.thread()) && segment.isAccessibleBy(sender.thread());
    }

    @Override
    public boolean completesOn(Thread thread) {
        return thread == receiver.thread();
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
    public NvmeException failure() {
        return slots.failure();
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
        CommandSlot s = slots.acquire(sqe, data, what, timed, future);
        // The reader thread always queues: it must never block on a full socket.
        if (s != null && !sender.send(s, Thread.currentThread() == receiver.thread())) {
            failLater(sender.jobsFull());
        }
        return future;
    }

    /** A completion that waited for a write call carrying the command's bytes to return (see {@code Sender}). */
    private void finishLate(CommandSlot s, Cqe cqe) {
        receiver.finishLate(s, cqe);
    }

    /** Fails the queue from the timer thread, as a failure found while sending always has been. */
    private void failLater(NvmeException why) {
        TIMERS.execute(() -> fail(why));
    }

    /** One periodic scan per queue instead of a timer per command: the I/O path schedules nothing. */
    private void scanTimeouts() {
        String late = slots.late(System.nanoTime());
        if (late != null) {
            CommandTimeoutEvent.emit(name, late, "tcp", config.ioTimeout().toNanos());
            fail(new NvmeConnectionException(name + ": " + late + " got no completion within "
                    + config.ioTimeout().toMillis()
                    + " ms (the I/O timeout); the connection was reset: call Controller.reconnect()"));
        }
    }

    /** Fails every outstanding and waiting command with {@code why} and closes the connection. Idempotent. */
    @Override
    public void fail(NvmeException why) {
        List<CompletableFuture<Cqe>> victims = slots.failAll(why);
        if (victims == null) {
            return;
        }
        // A queued TermReq goes out first; the writer stops at it or once its jobs are done.
        sender.stop();
        if (timeoutScan != null) {
            timeoutScan.cancel(false);
        }
        // Let the writer flush a TermReq, but never wait on a peer that stopped reading.
        if (Thread.currentThread() != sender.thread()) {
            try {
                sender.thread().join(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Handshake.closeQuietly(socket);
        for (CompletableFuture<Cqe> f : victims) {
            f.completeExceptionally(why);
        }
    }

    /** Closes the connection; outstanding commands fail with a {@link NvmeConnectionException}. */
    @Override
    public void close() {
        fail(new NvmeConnectionException(name + ": closed by this host"));
        if (Thread.currentThread() != receiver.thread()) {
            try {
                receiver.thread().join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
