package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the NVMe/TCP data path allocates, counted by the JVM per thread
 * ({@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes(long[])}) over {@value #OPS} operations of 4 KiB (16
 * KiB for writes through R2T) after {@value #WARMUP} to warm up, against {@link ScriptedTarget} on loopback (whose own
 * threads are not counted). No timing is asserted.
 *
 * <p>Bounds, per command, with two costs measured on this JVM first: a {@link Cqe} ({@code C}, 40 bytes with compressed
 * class pointers) and what the JDK itself allocates for one scattering or gathering socket call that touches memory of
 * an {@link Arena} ({@code J}: sun.nio.ch.IOUtil takes a releaser for the arena's session, 40 bytes on JDK 25; a plain
 * {@code allocateDirect} buffer costs nothing). The caller's memory here comes from {@code Arena.ofShared()}, as an
 * application's would.
 *
 * <ul>
 *   <li>the reader thread (CapsuleResp, C2HData, R2T, digests): {@code C} for the command's completion, plus {@code J}
 *       for the one scattering read that takes a C2HData's payload straight into the caller's memory; nothing per PDU,
 *       whether a read ends with C2HData's SUCCESS flag (1 PDU) or with a CapsuleResp after it (2 PDUs);
 *   <li>the writer thread: nothing, plus {@code J} for the gathering write of an H2CData answering an R2T;
 *   <li>the caller of {@link TcpQueue#submit}: at most {@value #QUEUE_CALLER_BOUND} bytes (the command array, the data
 *       descriptor, the future, the view of the caller's memory), plus {@code J} when it sends an in-capsule write
 *       itself;
 *   <li>the caller of {@link Controller#read}/{@link Controller#write}, its three threads together: at most
 *       {@value #CONTROLLER_BOUND} bytes (the above and the controller's own future and completion stage; about 430
 *       measured with reader and writer threads); the same bound holds on the polled data path, the default (one thread
 *       a queue: the caller's request and future, a {@code Cqe} on the queue's thread; about 350-460 measured).
 * </ul>
 *
 * Each reader and writer bound has {@value #SLACK} bytes of slack, less than the smallest object (16 bytes): any
 * allocation added per PDU on the reader or the writer fails the test.
 */
class DataPathAllocationTest {
    private static final int OPS = 10_000;
    private static final int WARMUP = 5_000;
    private static final int IO = 4096;
    private static final long QUEUE_CALLER_BOUND = 256;
    private static final long CONTROLLER_BOUND = 512;
    private static final double SLACK = 12;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** Bytes of one {@link Cqe} on this JVM (object header layout varies with its flags). */
    private static long cqeBytes;
    /** Bytes the JDK allocates for one gathering socket write of a direct header and an arena's memory. */
    private static long jdkVectoredBytes;

    @BeforeAll
    static void measureTheCostsTheBoundsAreMadeOf() throws Exception {
        assertTrue(
                THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled(),
                "this JVM does not count allocated bytes per thread");
        long self = Thread.currentThread().threadId();
        Cqe[] keep = new Cqe[10_000];
        for (int i = 0; i < keep.length; i++) {
            keep[i] = Cqe.success(i); // loads and links the class first: that allocates too, once
        }
        long before = THREADS.getThreadAllocatedBytes(self);
        for (int i = 0; i < keep.length; i++) {
            keep[i] = Cqe.success(i); // kept in the array so escape analysis cannot remove them
        }
        cqeBytes = Math.round((THREADS.getThreadAllocatedBytes(self) - before) / (double) keep.length);
        assertTrue(cqeBytes >= 16 && cqeBytes <= 48, "a Cqe measured " + cqeBytes + " bytes");
        try (ServerSocketChannel server =
                        ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                SocketChannel out = SocketChannel.open(server.getLocalAddress());
                SocketChannel in = server.accept();
                Arena arena = Arena.ofShared()) {
            ByteBuffer header = ByteBuffer.allocateDirect(24);
            ByteBuffer[] gather = {header, arena.allocate(IO).asByteBuffer()};
            ByteBuffer sink = ByteBuffer.allocateDirect(64 << 10);
            long[] cost = new long[2];
            for (int round = 0; round < 2; round++) { // the first round warms up
                long t0 = THREADS.getThreadAllocatedBytes(self);
                for (int i = 0; i < OPS; i++) {
                    header.clear();
                    gather[1].clear();
                    while (gather[1].hasRemaining()) {
                        out.write(gather);
                    }
                    for (long left = 24 + IO; left > 0; left -= in.read(sink.clear())) {
                        // drain what was written, so the writes never block
                    }
                }
                cost[round] = THREADS.getThreadAllocatedBytes(self) - t0;
            }
            jdkVectoredBytes = Math.round(cost[1] / (double) OPS);
        }
        assertTrue(jdkVectoredBytes <= 64, "the JDK allocated " + jdkVectoredBytes + " bytes per gathering write");
    }

    /** Per-thread allocated bytes per operation: caller, reader, writer. */
    record PerOp(double caller, double reader, double writer) {
        double total() {
            return caller + reader + writer;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "caller %.1f, reader %.1f, writer %.1f B/op", caller, reader, writer);
        }
    }

    /** Runs {@code op} (which starts operation i and returns its future) one at a time and counts what each costs. */
    private static PerOp measure(Thread reader, Thread writer, IntFunction<CompletableFuture<?>> op) {
        for (int i = 0; i < WARMUP; i++) {
            await(op.apply(i));
        }
        long[] ids = {Thread.currentThread().threadId(), reader.threadId(), writer.threadId()};
        long[] before = THREADS.getThreadAllocatedBytes(ids);
        for (int i = 0; i < OPS; i++) {
            await(op.apply(i));
        }
        long[] after = THREADS.getThreadAllocatedBytes(ids);
        assertTrue(reader.isAlive() && writer.isAlive(), "the queue's threads ended during the measurement");
        return new PerOp(
                (after[0] - before[0]) / (double) OPS,
                (after[1] - before[1]) / (double) OPS,
                (after[2] - before[2]) / (double) OPS);
    }

    /**
     * Waits without allocating: join() on a future not yet complete would allocate a waiter node. Parks rather than
     * spins, so the queue's threads get the CPU on a small machine.
     */
    private static void await(CompletableFuture<?> f) {
        while (!f.isDone()) {
            LockSupport.parkNanos(10_000);
        }
        f.join(); // complete: throws its failure, allocates nothing
    }

    private static Thread thread(String name) {
        List<Thread> found = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name)) {
                found.add(t);
            }
        }
        assertEquals(1, found.size(), "threads named " + name);
        return found.get(0);
    }

    /**
     * @param dataIn whether the command's data came in by a C2HData (one scattering read into the caller's memory)
     * @param h2c whether the writer sent an H2CData (one gathering write from the caller's memory)
     */
    private static void assertPduPathsAllocateNothing(String what, PerOp m, boolean dataIn, boolean h2c) {
        System.out.println(what + ": " + m + " (completion entry " + cqeBytes + " B, JDK vectored I/O "
                + jdkVectoredBytes + " B)");
        double reader = cqeBytes + (dataIn ? jdkVectoredBytes : 0);
        double writer = h2c ? jdkVectoredBytes : 0;
        assertTrue(
                m.reader() <= reader + SLACK,
                what + ": the reader thread allocated more than " + reader + " B per command: " + m);
        assertTrue(
                m.writer() <= writer + SLACK,
                what + ": the writer thread allocated more than " + writer + " B per command: " + m);
    }

    /** Opens I/O queue 1 of the scripted target's controller by hand: ICReq/ICResp, then a Fabrics Connect. */
    private static TcpQueue openIoQueue(ScriptedTarget t, String name, boolean digests) {
        TcpQueue q = TcpQueue.open(
                new InetSocketAddress("127.0.0.1", t.target().port()),
                name,
                new TcpQueue.Config(
                        1, 32, digests, digests, Duration.ofSeconds(10), Duration.ofSeconds(30), 1 << 20, IO),
                TcpQueue.Connector.PLAIN);
        byte[] connectData = Sqe.connectData(new byte[16], 7, ScriptedTarget.NQN, "nqn.2026-01.io.rdma4j:alloc-test");
        Cqe c = q.submit(
                        Sqe.connect(1, 31, 0, false),
                        new FabricQueue.Data(MemorySegment.ofArray(connectData), 0, connectData.length, true),
                        "Connect(qid=1)")
                .join();
        assertTrue(c.ok(), "Connect: " + c);
        return q;
    }

    @ParameterizedTest(name = "digests {0}")
    @ValueSource(booleans = {false, true})
    void queueReadsAndWritesAllocateNothingPerPdu(boolean digests) throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared()) {
            String name = "alloc-probe-" + digests + " qid 1";
            TcpQueue q = openIoQueue(t, name, digests);
            try {
                Thread reader = thread(name + "-rx");
                Thread writer = thread(name + "-tx");
                MemorySegment out = arena.allocate(IO * 4, 4096);
                MemorySegment in = arena.allocate(IO * 4, 4096);
                byte[] pattern = new byte[IO * 4];
                new SplittableRandom(7).nextBytes(pattern);
                MemorySegment.copy(MemorySegment.ofArray(pattern), 0, out, 0, pattern.length);
                int blocks = IO / t.blockSize;
                // 4 KiB writes travel in the capsule (the queue's in-capsule limit is 4 KiB)
                PerOp w = measure(
                        reader,
                        writer,
                        i -> q.submit(
                                Sqe.readWrite(true, 1, (i & 3) * blocks, blocks),
                                new FabricQueue.Data(out, (i & 3) * IO, IO, true),
                                null));
                // 16 KiB writes wait for an R2T: the writer answers with H2CData
                PerOp r2t = measure(
                        reader,
                        writer,
                        i -> q.submit(
                                Sqe.readWrite(true, 1, 0, 4 * blocks),
                                new FabricQueue.Data(out, 0, 4 * IO, true),
                                null));
                // reads completed by the SUCCESS flag of their one C2HData
                PerOp r = measure(
                        reader,
                        writer,
                        i -> q.submit(
                                Sqe.readWrite(false, 1, (i & 3) * blocks, blocks),
                                new FabricQueue.Data(in, (i & 3) * IO, IO, false),
                                null));
                // reads answered as the kernel target does: C2HData, then a CapsuleResp
                t.successFlag = false;
                PerOp r2 = measure(
                        reader,
                        writer,
                        i -> q.submit(
                                Sqe.readWrite(false, 1, (i & 3) * blocks, blocks),
                                new FabricQueue.Data(in, (i & 3) * IO, IO, false),
                                null));
                // the operations were real: what was written came back
                assertArrayEquals(pattern, in.toArray(ValueLayout.JAVA_BYTE));
                assertArrayEquals(pattern, t.stored(0, pattern.length));
                assertPduPathsAllocateNothing("in-capsule write", w, false, false);
                assertPduPathsAllocateNothing("write through R2T", r2t, false, true);
                assertPduPathsAllocateNothing("read, SUCCESS flag", r, true, false);
                assertPduPathsAllocateNothing("read, CapsuleResp", r2, true, false);
                assertTrue(w.caller() <= QUEUE_CALLER_BOUND + jdkVectoredBytes, "the submitting thread allocated " + w);
                for (PerOp m : List.of(r2t, r, r2)) {
                    assertTrue(m.caller() <= QUEUE_CALLER_BOUND, "the submitting thread allocated " + m);
                }
            } finally {
                q.close();
            }
        }
    }

    /** One I/O queue of depth 32, on the polled data path or with reader and writer threads. */
    private static ConnectOptions oneQueue(boolean polled, boolean digests) {
        return ConnectOptions.defaults()
                .withPolledIo(polled)
                .withIoQueues(1)
                .withQueueDepth(32)
                .withDigests(digests, digests)
                .withIdentity(new HostIdentity("nqn.2026-01.io.rdma4j:alloc-test", new UUID(1, polled ? 3 : 2)));
    }

    @ParameterizedTest(name = "digests {0}")
    @ValueSource(booleans = {false, true})
    void controllerReadsAndWritesStayUnderTheirBound(boolean digests) throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared()) {
            t.successFlag = false;
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, oneQueue(false, digests))) {
                Thread reader = thread(t.target() + " qid 1-rx");
                Thread writer = thread(t.target() + " qid 1-tx");
                MemorySegment buf = arena.allocate(IO, 4096);
                c.namespace(1); // Identify Namespace is cached from here on: an admin command, not the data path
                PerOp w = measure(reader, writer, i -> c.write(1, i & 63, buf));
                PerOp r = measure(reader, writer, i -> c.read(1, i & 63, buf));
                assertPduPathsAllocateNothing("Controller.write", w, false, false);
                assertPduPathsAllocateNothing("Controller.read", r, true, false);
                for (PerOp m : List.of(w, r)) {
                    assertTrue(m.total() <= CONTROLLER_BOUND, "a 4 KiB controller operation allocated " + m);
                }
            }
        }
    }

    @ParameterizedTest(name = "digests {0}")
    @ValueSource(booleans = {false, true})
    void controllerOnThePolledDataPathStaysUnderItsBound(boolean digests) throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared()) {
            t.successFlag = false;
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, oneQueue(true, digests))) {
                Thread io = thread(t.target() + " qid 1-io");
                MemorySegment buf = arena.allocate(IO, 4096);
                c.namespace(1);
                // the queue's one thread is both "reader" and "writer" here: count it once
                PerOp w = measure(io, io, i -> c.write(1, i & 63, buf));
                PerOp r = measure(io, io, i -> c.read(1, i & 63, buf));
                for (PerOp m : List.of(w, r)) {
                    String what =
                            String.format(Locale.ROOT, "caller %.1f, queue thread %.1f B/op", m.caller(), m.reader());
                    System.out.println("polled data path: " + what);
                    assertTrue(
                            m.caller() + m.reader() <= CONTROLLER_BOUND,
                            "a 4 KiB controller operation on the polled data path allocated " + what);
                }
            }
        }
    }
}
