package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sweep of regions that killed shm users left behind, on a directory laid out as {@code /dev/shm} is after a
 * {@code kill -9}: only this user's regions of processes that are gone, and this process's id's regions from before it
 * started, are removed.
 */
class ShmRegionsTest {
    @TempDir
    Path dir;

    @Test
    void removesOnlyTheRegionsOfGoneProcessesAndThoseOlderThanThisOne() throws Exception {
        int uid = 1000;
        long self = ProcessHandle.current().pid();
        Instant started = Instant.now().minusSeconds(60);
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        long dead = p.pid();
        long alive = ProcessHandle.current().parent().orElseThrow().pid();
        for (String name : List.of(
                dead + ":" + uid + ":0", // killed earlier: gone
                dead + ":" + uid + ":1",
                self + ":" + uid + ":0", // this id's, older than this process: another's, before the id was reused
                self + ":" + uid + ":1", // this id's, made after this process started: its own
                alive + ":" + uid + ":0", // a live process's
                dead + ":" + (uid + 1) + ":0", // another user's
                "psm3_shm.1234", // not shm's
                "12:34")) {
            Files.write(dir.resolve(name), new byte[] {1});
        }
        Files.setLastModifiedTime(dir.resolve(self + ":" + uid + ":0"), FileTime.from(started.minusSeconds(3600)));
        Files.setLastModifiedTime(dir.resolve(self + ":" + uid + ":1"), FileTime.from(started.plusSeconds(1)));

        // RDMA4J_SHM_SWEEP=off: only this id's stale region goes
        assertEquals(1, ShmRegions.sweep(dir, uid, self, started, false));
        assertTrue(Files.exists(dir.resolve(dead + ":" + uid + ":0")));
        assertEquals(2, ShmRegions.sweep(dir, uid, self, started, true));
        TreeSet<String> left = new TreeSet<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(f -> left.add(f.getFileName().toString()));
        }
        assertEquals(
                new TreeSet<>(List.of(
                        self + ":" + uid + ":1",
                        alive + ":" + uid + ":0",
                        dead + ":" + (uid + 1) + ":0",
                        "psm3_shm.1234",
                        "12:34")),
                left);
        assertEquals(
                0, ShmRegions.sweep(dir.resolve("absent"), uid, self, started, true), "no directory: nothing to do");
    }
}
