package io.rdma4j.perf.soak;

import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.Checkpoint;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.ScriptedTarget;
import io.rdma4j.nvmeof.volume.VolumeBlocks;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Checkpoints to an engine volume striped over two of the project's scripted NVMe/TCP targets, in two slots used in
 * turn, so the newest complete checkpoint is never the one being written. Each checkpoint is read back and compared. On
 * {@link #killNext()} the next checkpoint's target dies once its data is on the way (the old manifest already
 * invalidated): its connections drop, and it restarts, on a new port, with the disk its predecessor left. Then the
 * interrupted slot must hold no manifest, and the previous version must restore intact.
 */
final class Checkpoints implements Runnable {
    private static final int DISK = 4 << 20;
    private static final long STRIPE = 16 << 10;
    /** Each slot: the 64 KiB manifest area and up to 2 MiB - 64 KiB of data, in 512-byte blocks of the volume. */
    private static final long[] SLOT_LBA = {0, (2 << 20) / 512};

    private static final Map<String, Integer> TENSORS =
            Map.of("layer0.weight", 600_001, "layer0.bias", 4_099, "optimizer.state", 900_000);
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    private final TransferEngine engine;
    private final Ledger ledger;
    private final Path identityDir;
    private final ScriptedTarget[] targets = new ScriptedTarget[2];
    private StorageVolume volume;
    private volatile boolean running = true;
    private volatile boolean paused;
    private volatile boolean idle;
    private volatile boolean killNext;
    private int version;
    private int latestVersion;
    private int latestSlot = 1;
    private final AtomicInteger killed = new AtomicInteger();
    private final AtomicInteger manifestsAbsent = new AtomicInteger();
    private final AtomicInteger previousIntact = new AtomicInteger();
    private final AtomicLong written = new AtomicLong();
    private final ConcurrentLinkedQueue<String> anomalies = new ConcurrentLinkedQueue<>();

    Checkpoints(TransferEngine engine, Ledger ledger, Path identityDir) throws IOException {
        this.engine = engine;
        this.ledger = ledger;
        this.identityDir = identityDir;
        targets[0] = new ScriptedTarget(DISK);
        targets[1] = new ScriptedTarget(DISK);
        volume = engine.openVolume(spec());
    }

    private VolumeSpec spec() {
        return VolumeSpec.of(
                        "tcp://127.0.0.1:" + targets[0].target().port() + "/" + ScriptedTarget.NQN + "/1",
                        "tcp://127.0.0.1:" + targets[1].target().port() + "/" + ScriptedTarget.NQN + "/1")
                .withStripeUnit(STRIPE)
                .withOption("identityDir", identityDir.toString())
                .withOption("keepAliveMs", "0")
                .withOption("ioQueues", "2")
                .withOption("queueDepth", "8");
    }

    /** The next checkpoint's target dies in the middle of it. */
    void killNext() {
        killNext = true;
    }

    void pause(boolean p) {
        idle = false;
        paused = p;
    }

    boolean idle() {
        return idle;
    }

    void stop() {
        running = false;
    }

    int killed() {
        return killed.get();
    }

    int manifestsAbsent() {
        return manifestsAbsent.get();
    }

    int previousIntact() {
        return previousIntact.get();
    }

    long written() {
        return written.get();
    }

    List<String> anomalies() {
        return List.copyOf(anomalies);
    }

    @Override
    public void run() {
        while (running) {
            if (paused) {
                idle = true;
                sleep(20);
                continue;
            }
            try {
                step();
            } catch (IOException | RuntimeException e) {
                anomalies.add("checkpoint round failed outside a checkpoint: " + e);
                sleep(500);
            }
            sleep(100);
        }
        idle = true;
    }

    private static LinkedHashMap<String, MemorySegment> tensors(Arena arena, int version) {
        LinkedHashMap<String, MemorySegment> m = new LinkedHashMap<>();
        int i = 0;
        for (String name : List.of("layer0.weight", "layer0.bias", "optimizer.state")) {
            int len = TENSORS.get(name);
            MemorySegment s = arena.allocate((len + 7) / 8 * 8, 4096);
            Pattern.fill(s, seed(version, i++), s.byteSize());
            m.put(name, s.asSlice(0, len));
        }
        return m;
    }

    private static long seed(int version, int tensor) {
        return (long) version << 8 | tensor;
    }

    private void step() throws IOException {
        boolean kill = killNext && latestVersion > 0;
        int v = ++version;
        int slot = 1 - latestSlot;
        long id = ledger.begin(Ledger.Kind.CHECKPOINT, DEADLINE);
        RuntimeException failure = null;
        Arena arena = Arena.ofShared();
        try {
            Checkpoint.Blocks blocks = new VolumeBlocks(engine, volume, arena);
            if (kill) {
                killNext = false;
                blocks = new DyingTarget(blocks, () -> die(1));
            }
            try {
                Checkpoint.write(blocks, SLOT_LBA[slot], tensors(arena, v));
                ledger.succeeded(id);
            } catch (RuntimeException e) {
                ledger.failed(id, e);
                failure = e;
                reopen();
            }
        } finally {
            release(arena);
        }
        if (kill) {
            killed.incrementAndGet();
            if (failure == null) {
                anomalies.add("checkpoint " + v + " completed although its target died in the middle of it");
            }
            afterKill(v, slot);
        } else if (failure == null) {
            written.incrementAndGet();
            latestVersion = v;
            latestSlot = slot;
            restore(slot, v);
        }
    }

    private void afterKill(int v, int slot) {
        try (Arena arena = Arena.ofShared()) {
            Checkpoint.readManifest(new VolumeBlocks(engine, volume, arena), SLOT_LBA[slot]);
            anomalies.add("slot " + slot + " holds a manifest after checkpoint " + v + " was interrupted");
        } catch (NvmeException e) {
            if (e.getMessage().contains("no complete checkpoint")) {
                manifestsAbsent.incrementAndGet();
            } else {
                anomalies.add("slot " + slot + " after the interrupted checkpoint " + v + ": " + e.getMessage());
            }
        } catch (RuntimeException e) {
            anomalies.add("reading slot " + slot + " after the interrupted checkpoint " + v + ": " + e);
        }
        if (restore(latestSlot, latestVersion)) {
            previousIntact.incrementAndGet();
        }
    }

    /** Restores {@code slot}, which must hold {@code v}; {@return whether every byte came back as written} */
    private boolean restore(int slot, int v) {
        long id = ledger.begin(Ledger.Kind.RESTORE, DEADLINE);
        try (Arena arena = Arena.ofShared()) {
            VolumeBlocks blocks = new VolumeBlocks(engine, volume, arena);
            Checkpoint.Manifest m = Checkpoint.readManifest(blocks, SLOT_LBA[slot]);
            Map<String, MemorySegment> out = new LinkedHashMap<>();
            Checkpoint.restore(
                    blocks,
                    SLOT_LBA[slot],
                    m,
                    e -> out.computeIfAbsent(e.name(), k -> arena.allocate((e.length() + 7) / 8 * 8, 4096)));
            ledger.succeeded(id);
            long bad = 0;
            int i = 0;
            for (String name : List.of("layer0.weight", "layer0.bias", "optimizer.state")) {
                MemorySegment s = out.get(name);
                long len = TENSORS.get(name);
                if (s == null) {
                    anomalies.add("checkpoint " + v + " in slot " + slot + " lacks " + name);
                    return false;
                }
                // whole words compared; the tail of the last word past the tensor's end is not checkpointed
                long words = len / 8 * 8;
                bad += Pattern.corruptBytes(s, seed(v, i++), words);
                ledger.verified(words);
            }
            if (bad > 0) {
                ledger.corrupt(bad, "checkpoint " + v + " restored from slot " + slot);
                return false;
            }
            return true;
        } catch (RuntimeException e) {
            ledger.failed(id, e);
            if (e instanceof NvmeException && e.getMessage().contains("CRC32C")) {
                ledger.corrupt(1, "checkpoint " + v + " in slot " + slot + ": " + e.getMessage());
            } else {
                anomalies.add("restoring checkpoint " + v + " from slot " + slot + ": " + e);
            }
            return false;
        }
    }

    /**
     * Closes a checkpoint's arena. After a target died, the surviving target's connection may still be sending from its
     * memory for a moment (the JDK refuses to close a segment a socket write holds): wait for that, up to 30 s.
     */
    private void release(Arena arena) {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                arena.close();
                return;
            } catch (IllegalStateException e) {
                if (System.nanoTime() > until) {
                    anomalies.add("a checkpoint's memory stayed in use 30 s after it failed: " + e.getMessage());
                    return;
                }
                sleep(50);
            }
        }
    }

    /** Kills target {@code which} (all its connections drop) and restarts it on the disk it left. */
    private void die(int which) {
        ScriptedTarget dead = targets[which];
        try {
            dead.close();
            targets[which] = new ScriptedTarget(dead.stored(0, DISK));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void reopen() {
        try {
            volume.close();
        } catch (RuntimeException e) {
            // the dead target's connections: already gone
        }
        volume = engine.openVolume(spec());
    }

    void close() throws IOException {
        try {
            volume.close();
        } finally {
            targets[0].close();
            targets[1].close();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The blocks of a checkpoint whose target dies in the middle: the first write invalidates the old manifest; the
     * first data write is sent, and then the target dies under it.
     */
    private static final class DyingTarget implements Checkpoint.Blocks {
        private final Checkpoint.Blocks inner;
        private final Runnable die;
        private int writes;

        DyingTarget(Checkpoint.Blocks inner, Runnable die) {
            this.inner = inner;
            this.die = die;
        }

        @Override
        public int blockSize() {
            return inner.blockSize();
        }

        @Override
        public long blocks() {
            return inner.blocks();
        }

        @Override
        public CompletableFuture<Void> write(long lba, MemorySegment data) {
            CompletableFuture<Void> f = inner.write(lba, data);
            if (++writes == 2) {
                die.run();
            }
            return f;
        }

        @Override
        public CompletableFuture<Void> read(long lba, MemorySegment into) {
            return inner.read(lba, into);
        }

        @Override
        public CompletableFuture<Void> flush() {
            return inner.flush();
        }
    }
}
