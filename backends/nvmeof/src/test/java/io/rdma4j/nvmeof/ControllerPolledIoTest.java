package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The controller with {@link ConnectOptions#polledIo()} on (the default), so every NVMe/TCP I/O queue is a
 * {@code DrivenTcpQueue}, and off (reader and writer threads per queue): the same API either way, checked against the
 * scripted peer byte for byte (native and heap memory, transfers split over many commands, many threads submitting at
 * once), and on the polled data path through a dropped connection and a reconnect. The engine's volumes use this path
 * too ({@code EngineVolumeTest}, {@code EngineVolumeGuestTest}).
 */
class ControllerPolledIoTest {
    @TempDir
    Path home;

    private ConnectOptions options(boolean polled, boolean digests) {
        return options(polled, digests, 0);
    }

    private ConnectOptions options(boolean polled, boolean digests, long busyPollMicros) {
        return ConnectOptions.defaults()
                .withPolledIo(polled)
                .withBusyPoll(Duration.ofNanos(busyPollMicros * 1000))
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(2)
                .withQueueDepth(8)
                .withDigests(digests, digests)
                .withConnectTimeout(Duration.ofSeconds(5))
                .withIoTimeout(Duration.ofSeconds(5))
                .withKeepAlive(Duration.ZERO);
    }

    @ParameterizedTest(name = "polled data path {0}, digests {1}, busy poll {2} us")
    @CsvSource({"true, false, 0", "true, true, 0", "false, false, 0", "false, true, 0", "true, false, 50"})
    void movesNativeAndHeapMemoryByteForByteFromManyThreads(boolean polled, boolean digests, long busyPollMicros)
            throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(16 << 20);
                Arena arena = Arena.ofShared()) {
            t.maxH2CData = 8192;
            t.c2hPiece = 12288;
            t.mdts = 3; // 32 KiB: a 200 KiB transfer is 7 commands
            try (Controller c =
                    Controller.connect(t.target(), ScriptedTarget.NQN, options(polled, digests, busyPollMicros))) {
                Random r = new Random(digests ? 1 : 2);
                byte[] big = new byte[200 * 1024];
                r.nextBytes(big);
                MemorySegment nativeBig = arena.allocate(big.length, 4096).copyFrom(MemorySegment.ofArray(big));
                c.write(1, 0, nativeBig).get(10, TimeUnit.SECONDS);
                byte[] small = new byte[2048];
                r.nextBytes(small);
                c.write(1, 1000, MemorySegment.ofArray(small)).get(10, TimeUnit.SECONDS); // heap, in-capsule
                assertArrayEquals(big, t.stored(0, big.length));
                assertArrayEquals(small, t.stored(1000 * 512, small.length));
                byte[] heapBack = new byte[big.length];
                c.read(1, 0, MemorySegment.ofArray(heapBack)).get(10, TimeUnit.SECONDS);
                assertArrayEquals(big, heapBack);
                MemorySegment nativeBack = arena.allocate(small.length, 4096);
                c.read(1, 1000, nativeBack).get(10, TimeUnit.SECONDS);
                assertArrayEquals(small, nativeBack.toArray(ValueLayout.JAVA_BYTE));
                // four threads, 64 writes each of their own 4 KiB blocks, then all read back
                byte[] all = new byte[4 * 64 * 4096];
                r.nextBytes(all);
                MemorySegment src = arena.allocate(all.length, 4096).copyFrom(MemorySegment.ofArray(all));
                List<Thread> threads = new ArrayList<>();
                List<CompletableFuture<Void>> fs = java.util.Collections.synchronizedList(new ArrayList<>());
                for (int th = 0; th < 4; th++) {
                    int base = th * 64;
                    threads.add(Thread.ofPlatform().start(() -> {
                        for (int i = base; i < base + 64; i++) {
                            fs.add(c.write(1, 4096 + i * 8L, src.asSlice(i * 4096L, 4096)));
                        }
                    }));
                }
                for (Thread th : threads) {
                    th.join();
                }
                CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
                MemorySegment back = arena.allocate(all.length, 4096);
                c.read(1, 4096, back).get(30, TimeUnit.SECONDS);
                assertArrayEquals(all, back.toArray(ValueLayout.JAVA_BYTE));
                assertArrayEquals(all, t.stored(4096 * 512, all.length));
            }
        }
    }

    @ParameterizedTest(name = "digests {0}")
    @ValueSource(booleans = {false, true})
    void largeReadsLandExactlyInSharedAndHeapMemory(boolean digests) throws Exception {
        // C2HData of 40 KiB: at or above the size that a driven queue receives straight into the caller's memory,
        // shared or not (without digests; with them through its buffer); the bytes around the destination stay as they
        // were, and a piece that ends mid-command continues at the right place
        try (ScriptedTarget t = new ScriptedTarget(4 << 20);
                Arena arena = Arena.ofShared()) {
            t.c2hPiece = 40 * 1024;
            t.mdts = 5; // 128 KiB: a 300 KiB read is three commands, each in pieces of 40 KiB and a remainder
            Random r = new Random(digests ? 3 : 4);
            byte[] data = new byte[300 * 1024];
            r.nextBytes(data);
            System.arraycopy(data, 0, t.storage, 512 * 512, data.length);
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(true, digests))) {
                MemorySegment region = arena.allocate(data.length + 2 * 4096 + 512, 4096);
                region.fill((byte) 0x5a);
                MemorySegment into = region.asSlice(4096 + 512, data.length);
                c.read(1, 512, into).get(10, TimeUnit.SECONDS);
                assertArrayEquals(data, into.toArray(ValueLayout.JAVA_BYTE));
                for (long at : new long[] {0, 4096 + 511, 4096 + 512 + data.length, region.byteSize() - 1}) {
                    assertEquals((byte) 0x5a, region.get(ValueLayout.JAVA_BYTE, at), "byte " + at + " was overwritten");
                }
                byte[] heap = new byte[data.length];
                c.read(1, 512, MemorySegment.ofArray(heap)).get(10, TimeUnit.SECONDS);
                assertArrayEquals(data, heap);
            }
        }
    }

    @ParameterizedTest(name = "busy poll {0} us")
    @ValueSource(longs = {0, 50})
    void aCommandSentFromACompletionCallbackGoesOnThatCallbacksQueue(long busyPollMicros) throws Exception {
        // Each write is sent from the completion callback of the one before, on the queue's thread: the chain stays
        // on the queue it started on (that thread's own), so the other queue sees no command.
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c =
                        Controller.connect(t.target(), ScriptedTarget.NQN, options(true, false, busyPollMicros))) {
            int writes = 200;
            byte[] all = new byte[writes * 512];
            new Random(3).nextBytes(all);
            MemorySegment src = arena.allocate(all.length, 512).copyFrom(MemorySegment.ofArray(all));
            CompletableFuture<Void> done = new CompletableFuture<>();
            chain(c, src, 0, writes, done);
            done.get(30, TimeUnit.SECONDS);
            assertArrayEquals(all, t.stored(0, all.length));
            assertTrue(t.maxInFlight.containsKey(1), "the chain's queue saw no command");
            assertFalse(t.maxInFlight.containsKey(2), "a command from a callback went on another queue");
        }
    }

    /** Writes block {@code i} of {@code src}, and from its completion callback the next, up to {@code n}. */
    private static void chain(Controller c, MemorySegment src, int i, int n, CompletableFuture<Void> done) {
        if (i == n) {
            done.complete(null);
            return;
        }
        c.write(1, i, src.asSlice(i * 512L, 512)).whenComplete((v, x) -> {
            if (x != null) {
                done.completeExceptionally(x);
            } else {
                chain(c, src, i + 1, n, done);
            }
        });
    }

    @Test
    void aDroppedConnectionFailsTheCommandsAndReconnectBringsItBack() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(true, false))) {
            new Random(9).nextBytes(t.storage);
            t.answerReads = false;
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                fs.add(c.read(1, i * 8L, arena.allocate(4096, 4096)));
            }
            Thread.sleep(100);
            t.dropAll();
            for (CompletableFuture<Void> f : fs) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
                assertInstanceOf(
                        NvmeConnectionException.class,
                        e.getCause(),
                        e.getCause().toString());
            }
            ExecutionException down = assertThrows(
                    ExecutionException.class,
                    () -> c.read(1, 0, arena.allocate(4096, 4096)).get(10, TimeUnit.SECONDS));
            assertTrue(
                    down.getCause().getMessage().contains("reconnect()"),
                    down.getCause().getMessage());
            t.answerReads = true;
            c.reconnect();
            MemorySegment back = arena.allocate(8192, 4096);
            c.read(1, 0, back).get(10, TimeUnit.SECONDS);
            assertArrayEquals(Arrays.copyOf(t.storage, 8192), back.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(2, c.ioQueueCount());
        }
    }

    /**
     * An idle queue's next command goes out from the submitting thread while the queue's thread sleeps; when the
     * connection is already gone, the command must still fail with the connection, never wait forever.
     */
    @Test
    void aCommandSentByItsSubmitterAsTheConnectionDropsFails() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(true, false))) {
            MemorySegment buf = arena.allocate(4096, 4096);
            for (int round = 0; round < 20; round++) {
                if (round > 0) {
                    c.reconnect();
                }
                c.read(1, 0, buf).get(10, TimeUnit.SECONDS);
                c.read(1, 8, buf).get(10, TimeUnit.SECONDS); // both queues idle now
                t.dropAll();
                CompletableFuture<Void> f = c.read(1, 16, buf);
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
                assertInstanceOf(NvmeConnectionException.class, e.getCause(), "round " + round + ": " + e.getCause());
            }
        }
    }
}
