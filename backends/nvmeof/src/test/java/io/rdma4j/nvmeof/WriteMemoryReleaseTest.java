package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Once a write's future completes, the initiator no longer touches the source memory: the caller may close its arena at
 * once. The target answers as soon as the bytes reach it, which can be before the thread that sent them has returned
 * from its socket call (where the JDK holds the memory's arena); the completion waits for that call. Writes in the
 * capsule (sent inline by the submitting thread) and by R2T (sent by the writer thread), each arena closed the moment
 * the future completes.
 */
class WriteMemoryReleaseTest {
    @TempDir
    Path home;

    private void writeAndCloseAtOnce(int bytes, int rounds) throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(),
                        ScriptedTarget.NQN,
                        ConnectOptions.defaults()
                                .withIdentity(HostIdentity.persistent(home))
                                .withIoQueues(1)
                                .withQueueDepth(8)
                                .withKeepAlive(Duration.ZERO))) {
            for (int i = 0; i < rounds; i++) {
                Arena arena = Arena.ofShared();
                MemorySegment data = arena.allocate(bytes, 4096).fill((byte) i);
                c.write(1, (long) (i % 16) * bytes / 512, data).get(10, TimeUnit.SECONDS);
                arena.close(); // throws IllegalStateException while a socket call still holds the memory
            }
            assertEquals((byte) (rounds - 1), t.storage[(int) ((long) ((rounds - 1) % 16) * bytes)]);
        }
    }

    @Test
    void aWriteInTheCapsuleLeavesItsMemoryFreeWhenItCompletes() throws Exception {
        writeAndCloseAtOnce(4096, 3000);
    }

    @Test
    void aWriteSentByR2TLeavesItsMemoryFreeWhenItCompletes() throws Exception {
        writeAndCloseAtOnce(64 << 10, 1500);
    }
}
