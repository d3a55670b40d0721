package io.rdma4j.libfabric;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Removes the shared-memory regions that libfabric's shm provider left behind in {@code /dev/shm} for processes that no
 * longer run. shm names each endpoint's region {@code PID:UID:N} and unlinks it on a clean exit or a catchable signal,
 * but a process killed with {@code kill -9} leaves its regions (16 MiB each in 1.17). Once process ids wrap, a new
 * process with a dead one's id finds a region of its own name: {@code fi_enable} fails with EBUSY, and tmpfs fills up
 * meanwhile. Swept once per process, before its first shm endpoint: regions of this user whose process is gone, and
 * regions bearing this process's id that are older than the process itself (another process's, from before the id was
 * reused). Best effort: a region that cannot be read or removed is left as it is.
 *
 * <p>Whether a process is gone is judged in this process's PID namespace, as shm itself judges a region's owner. Where
 * several PID namespaces share one {@code /dev/shm} (containers of a pod that share IPC but not process ids), a live
 * process of another namespace looks gone: set {@code RDMA4J_SHM_SWEEP=off} there, and only the regions bearing this
 * process's id are swept.
 */
final class ShmRegions {
    private static final Pattern NAME = Pattern.compile("(\\d{1,10}):(\\d{1,10}):\\d{1,10}");
    private static final AtomicBoolean SWEPT = new AtomicBoolean();

    private ShmRegions() {}

    /** Sweeps {@code /dev/shm} the first time it is called in this process; later calls return at once. */
    static void sweepOnce() {
        if (!SWEPT.compareAndSet(false, true)) {
            return;
        }
        try {
            int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            ProcessHandle self = ProcessHandle.current();
            Instant started = self.info().startInstant().orElse(null);
            if (started != null) {
                boolean others = !"off".equalsIgnoreCase(System.getenv("RDMA4J_SHM_SWEEP"));
                sweep(Path.of("/dev/shm"), uid, self.pid(), started, others);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc unreadable: nothing to sweep
        }
    }

    /**
     * Removes stale regions from {@code dir}.
     *
     * @param uid the user whose regions may be removed
     * @param selfPid this process's id
     * @param selfStarted when this process started: a region with its id and an earlier modification time is stale
     * @param others whether regions of other process ids whose process is gone are removed too
     * @return how many regions were removed
     */
    static int sweep(Path dir, int uid, long selfPid, Instant selfStarted, boolean others) {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (!m.matches() || Long.parseLong(m.group(2)) != uid) {
                    continue;
                }
                long pid = Long.parseLong(m.group(1));
                if (pid != selfPid && !others) {
                    continue;
                }
                try {
                    boolean stale = pid == selfPid
                            ? Files.getLastModifiedTime(f).compareTo(FileTime.from(selfStarted)) < 0
                            : ProcessHandle.of(pid).isEmpty();
                    if (stale && Files.deleteIfExists(f)) {
                        removed++;
                    }
                } catch (IOException e) {
                    // gone already, or not ours to remove
                }
            }
        } catch (IOException | RuntimeException e) {
            // no such directory, or unreadable: nothing to sweep
        }
        return removed;
    }
}
