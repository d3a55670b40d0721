package io.rdma4j.examples;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The seed example, on the engine: rank 0 writes 1024 ints into rank 1's buffer with a notification; rank 1 waits for
 * the tag (delivered only after every byte landed) and checks the ints. Two processes found through a rendezvous
 * directory on loopback.
 *
 * <pre>
 * java -cp ... io.rdma4j.examples.OneSidedWrite                 # starts the directory and rank 1, runs rank 0
 * java -cp ... io.rdma4j.examples.OneSidedWrite 1 HOST:PORT     # one rank against an existing directory
 * </pre>
 */
public final class OneSidedWrite {
    static final int COUNT = 1024;
    static final long TAG = 7;

    private OneSidedWrite() {}

    public static void main(String[] args) throws Exception {
        if (args.length >= 2) {
            System.exit(rank(Integer.parseInt(args[0]), args[1], args.length > 2 ? args[2] : "shm"));
        }
        try (DirectoryServer directory = DirectoryServer.builder().port(0).start()) {
            Process rank1 = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "--enable-native-access=ALL-UNNAMED",
                            "--sun-misc-unsafe-memory-access=allow",
                            "-cp",
                            System.getProperty("java.class.path"),
                            OneSidedWrite.class.getName(),
                            "1",
                            directory.target())
                    .inheritIO()
                    .start();
            int rc0 = rank(0, directory.target(), "shm");
            if (!rank1.waitFor(60, TimeUnit.SECONDS)) {
                rank1.destroyForcibly();
                throw new IllegalStateException("rank 1 did not finish within 60 s");
            }
            System.exit(rc0 == 0 ? rank1.exitValue() : rc0);
        }
    }

    /** Runs one rank; returns 0 when it did its part (rank 1: every int checked). */
    public static int rank(int rank, String directory, String provider) throws Exception {
        TransferEngine.Builder b = TransferEngine.builder()
                .name("seed-rank-" + rank)
                .provider(provider)
                .directory(directory, Security.none());
        if (provider.startsWith("tcp")) {
            b.nicFilter("lo");
        }
        try (Arena arena = Arena.ofShared();
                TransferEngine engine = b.build()) {
            MemorySegment ints = arena.allocate(ValueLayout.JAVA_INT, COUNT);
            LocalBuffer buffer = engine.register(ints);
            if (rank == 1) {
                engine.publish("ints", buffer, Access.only("seed-rank-0"));
                Notification n = engine.awaitTag(TAG, Duration.ofSeconds(60));
                if (n == null) {
                    System.err.println("rank 1: no notification within 60 s");
                    return 1;
                }
                for (int i = 0; i < COUNT; i++) {
                    if (ints.getAtIndex(ValueLayout.JAVA_INT, i) != i * 3 + 1) {
                        System.err.println("rank 1: int " + i + " is " + ints.getAtIndex(ValueLayout.JAVA_INT, i));
                        return 1;
                    }
                }
                System.out.println("rank 1: tag " + n.tag() + " from " + n.peer() + ", all " + COUNT + " ints correct");
                return 0;
            }
            for (int i = 0; i < COUNT; i++) {
                ints.setAtIndex(ValueLayout.JAVA_INT, i, i * 3 + 1);
            }
            RemoteBuffer target = awaitBuffer(engine, "seed-rank-1", "ints");
            engine.write(buffer, target, TransferOptions.tag(TAG)).join();
            System.out.println("rank 0: wrote " + COUNT + " ints with tag " + TAG);
            return 0;
        }
    }

    /** The peer may not have published yet: ask again for a while. */
    static RemoteBuffer awaitBuffer(TransferEngine engine, String peer, String name) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try {
                return engine.peer(peer).buffer(name);
            } catch (io.rdma4j.Rdma4jException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }
}
