package io.rdma4j.ffi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class FdWaiterTest {
    @Test
    void aWaitWithNothingToSeeEndsAtItsTimeout() {
        try (FdWaiter w = new FdWaiter()) {
            assertFalse(w.await(1_000_000), "nothing readable and nobody woke it");
        }
    }

    @Test
    void aWakeFromAnotherThreadEndsAWaitAndIsConsumedByIt() throws Exception {
        try (FdWaiter w = new FdWaiter()) {
            CompletableFuture<Boolean> woke = CompletableFuture.supplyAsync(() -> w.await(60_000_000_000L));
            Thread.sleep(50);
            w.wake();
            assertTrue(woke.get(10, TimeUnit.SECONDS), "woken before its 60 s timeout");
            assertFalse(w.await(1_000_000), "the wake was drained by the wait it ended");
        }
    }

    @Test
    void aWakeBeforeTheWaitIsNotLost() {
        try (FdWaiter w = new FdWaiter()) {
            w.wake();
            assertTrue(w.await(60_000_000_000L));
        }
    }

    @Test
    void aReadableDescriptorEndsTheWait() throws IOException {
        // /dev/zero always polls readable; find the descriptor this stream opened in /proc/self/fd
        try (FileInputStream zero = new FileInputStream("/dev/zero");
                FdWaiter w = new FdWaiter(descriptorOf("/dev/zero"))) {
            assertTrue(w.await(60_000_000_000L));
        }
    }

    @Test
    void aNegativeDescriptorIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new FdWaiter(-1));
    }

    private static int descriptorOf(String target) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target)) {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                } catch (IOException e) {
                    // the listing's own descriptor, gone already
                }
            }
        }
        throw new IOException("no descriptor of this process is open on " + target);
    }
}
