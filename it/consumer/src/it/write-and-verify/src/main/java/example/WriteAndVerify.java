package example;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * Two engines in one JVM, found through the embedded directory: the sender writes 1 MiB into the receiver's published
 * buffer over libfabric's shm provider, the receiver waits for the write's tag (sent only after every byte landed)
 * and compares every byte. Any failure ends the JVM with a non-zero status.
 */
public final class WriteAndVerify {
    public static void main(String[] args) throws Exception {
        long size = 1 << 20;
        try (Arena arena = Arena.ofShared();
             TransferEngine receiver = shmEngine("receiver");
             TransferEngine sender = shmEngine("sender")) {
            MemorySegment landing = arena.allocate(size, 4096);
            receiver.publish("landing", receiver.register(landing), Access.only("sender"));

            MemorySegment data = arena.allocate(size, 4096);
            for (long i = 0; i < size / Long.BYTES; i++) {
                data.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            LocalBuffer source = sender.register(data);
            RemoteBuffer target = sender.peer("receiver").buffer("landing");
            sender.write(source, target, TransferOptions.tag(42)).join();

            Notification done = receiver.awaitTag(42, Duration.ofSeconds(30));
            if (done == null) {
                throw new IllegalStateException("no notification for tag 42 within 30 s");
            }
            long at = data.mismatch(landing);
            if (at != -1) {
                throw new IllegalStateException("byte " + at + " differs after the write");
            }
            System.out.println("verified " + size + " bytes written by " + done.peer());
            System.out.println(sender.description());
        }
    }

    /** An engine on libfabric's shm provider, which moves bytes between processes of one machine without a NIC. */
    static TransferEngine shmEngine(String name) {
        return TransferEngine.builder().name(name).backend("libfabric").provider("shm").build();
    }
}
