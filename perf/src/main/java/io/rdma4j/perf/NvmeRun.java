package io.rdma4j.perf;

import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ./rdma4j bench nvme --tcp|--rdma HOST:PORT --nqn NQN [--nsid 1] [--kernel-dev /dev/nvmeXnY] [--seconds 3]}: 4
 * KiB random read and write at QD1 and QD32 (IOPS, latency percentiles), 128 KiB and 1 MiB sequential read and write
 * throughput at QD8, through this initiator (each after an uncounted warm-up of {@code --warmup} seconds, default 1);
 * and, with {@code --kernel-dev}, the same workloads in the same run through the kernel's own initiator of the same
 * transport (the block device of {@code nvme connect -t tcp|rdma} to the same subsystem, O_DIRECT, one thread per
 * outstanding I/O) as the baseline. The workloads write: use a scratch namespace.
 */
final class NvmeRun implements BenchRun {
    @Override
    public String name() {
        return "nvme";
    }

    @Override
    public String summary() {
        return "NVMe/TCP or NVMe/RDMA 4 KiB QD1/QD32 IOPS and latency, 128 KiB / 1 MiB throughput"
                + " vs the kernel initiator";
    }

    private record Workload(String name, int size, int qd, boolean write, boolean random) {}

    private record Result(long ops, double seconds, long[] lat) {
        String line(int size) {
            Arrays.sort(lat);
            double iops = ops / seconds;
            return String.format(
                    Locale.ROOT,
                    "%10.0f IOPS %9.1f MB/s  p50 %7.1f us  p99 %8.1f us",
                    iops,
                    iops * size / 1e6,
                    pct(0.5),
                    pct(0.99));
        }

        double pct(double p) {
            return lat.length == 0 ? Double.NaN : lat[Math.min(lat.length - 1, (int) (p * lat.length))] / 1000.0;
        }
    }

    /** One I/O of a workload: issue it, call done when complete. */
    private interface Engine {
        void io(boolean write, long offset, int size, int slot, java.util.function.Consumer<Throwable> done)
                throws Exception;
    }

    @Override
    public int run(String[] args) throws Exception {
        String nqn = null, dev = null;
        Target target = null;
        long nsid = 1;
        double seconds = 3;
        double warmup = 1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--tcp" -> target = Target.parseTcp(args[i + 1]);
                case "--rdma" -> target = Target.parseRdma(args[i + 1]);
                case "--nqn" -> nqn = args[i + 1];
                case "--nsid" -> nsid = Long.parseLong(args[i + 1]);
                case "--kernel-dev" -> dev = args[i + 1];
                case "--seconds" -> seconds = Double.parseDouble(args[i + 1]);
                case "--warmup" -> warmup = Double.parseDouble(args[i + 1]);
                default -> {
                    System.err.println(
                            "unknown option " + args[i]
                                    + "; options: --tcp HOST:PORT | --rdma HOST:PORT --nqn NQN --nsid N --kernel-dev DEV --seconds S --warmup S");
                    return 2;
                }
            }
        }
        if (target == null || nqn == null) {
            System.err.println(
                    "usage: ./rdma4j bench nvme --tcp|--rdma HOST:PORT --nqn NQN [--nsid 1] [--kernel-dev /dev/nvmeXnY] [--seconds 3]");
            return 2;
        }
        List<Workload> workloads = List.of(
                new Workload("4KiB randread QD1", 4096, 1, false, true),
                new Workload("4KiB randread QD32", 4096, 32, false, true),
                new Workload("4KiB randwrite QD1", 4096, 1, true, true),
                new Workload("4KiB randwrite QD32", 4096, 32, true, true),
                new Workload("128KiB read QD8", 131072, 8, false, false),
                new Workload("128KiB write QD8", 131072, 8, true, false),
                new Workload("1MiB read QD8", 1 << 20, 8, false, false),
                new Workload("1MiB write QD8", 1 << 20, 8, true, false));
        try (Arena arena = Arena.ofShared();
                Controller c = Controller.connect(
                        target, nqn, ConnectOptions.defaults().withIoQueues(4).withQueueDepth(64))) {
            long bytes = Math.min(c.namespace(nsid).bytes(), 256L << 20);
            int bs = c.namespace(nsid).blockSize();
            MemorySegment buf = arena.allocate(32L << 20, 4096);
            final long ns = nsid;
            Engine ours = (write, off, size, slot, done) -> {
                MemorySegment b = buf.asSlice((long) slot * size, size);
                (write ? c.write(ns, off / bs, b) : c.read(ns, off / bs, b)).whenComplete((v, t) -> done.accept(t));
            };
            FileChannel kernel = dev == null
                    ? null
                    : FileChannel.open(
                            Path.of(dev),
                            StandardOpenOption.READ,
                            StandardOpenOption.WRITE,
                            com.sun.nio.file.ExtendedOpenOption.DIRECT);
            ByteBuffer[] kbufs = new ByteBuffer[32];
            for (int i = 0; i < kbufs.length; i++) {
                kbufs[i] = ByteBuffer.allocateDirect((1 << 20) + 4096).alignedSlice(4096);
            }
            System.out.printf(
                    "target %s %s namespace %d: %d I/O queues of depth %d, MDTS %d bytes; %.1f s per workload over %d MiB%n",
                    target, nqn, nsid, c.ioQueueCount(), c.queueDepth(), c.maxTransferBytes(), seconds, bytes >> 20);
            for (Workload w : workloads) {
                measure(w, ours, bytes, warmup, false); // JIT and connection warm-up, not counted
                Result r = measure(w, ours, bytes, seconds, false);
                System.out.printf("%-22s rdma4j  %s%n", w.name(), r.line(w.size()));
                if (kernel != null) {
                    Engine k0 = (write, off, size, slot, done) -> {
                        ByteBuffer b = kbufs[slot].duplicate().limit(size);
                        while (b.hasRemaining()) {
                            int n = write ? kernel.write(b, off + b.position()) : kernel.read(b, off + b.position());
                            if (n < 0) {
                                throw new IllegalStateException("end of device");
                            }
                        }
                        done.accept(null);
                    };
                    measure(w, k0, bytes, warmup, true);
                    Result k = measure(w, k0, bytes, seconds, true);
                    System.out.printf(
                            "%-22s kernel  %s  (rdma4j/kernel IOPS %.2f)%n",
                            w.name(), k.line(w.size()), (r.ops() / r.seconds()) / (k.ops() / k.seconds()));
                }
            }
            if (kernel != null) {
                kernel.close();
            } else {
                System.out.println(
                        "(no --kernel-dev: connect the kernel initiator with nvme connect -t tcp|rdma ... and pass its block device for the baseline)");
            }
        }
        return 0;
    }

    /** Keeps w.qd() I/Os outstanding for {@code seconds}; synchronous engines get one thread per slot. */
    private static Result measure(Workload w, Engine e, long bytes, double seconds, boolean threaded) throws Exception {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long slots = bytes / w.size();
        AtomicLong ops = new AtomicLong();
        AtomicLong seq = new AtomicLong();
        List<long[]> lats = new ArrayList<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        long t0 = System.nanoTime();
        if (threaded) {
            CountDownLatch doneAll = new CountDownLatch(w.qd());
            for (int s = 0; s < w.qd(); s++) {
                int slot = s;
                long[] lat = new long[200_000];
                lats.add(lat);
                Thread.ofPlatform().start(() -> {
                    SplittableRandom rnd = new SplittableRandom(slot);
                    int n = 0;
                    try {
                        while (System.nanoTime() < end) {
                            long off = (w.random() ? rnd.nextLong(slots) : seq.getAndIncrement() % slots) * w.size();
                            long a = System.nanoTime();
                            e.io(w.write(), off, w.size(), slot, t -> {});
                            if (n < lat.length) {
                                lat[n++] = System.nanoTime() - a;
                            }
                            ops.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        failed.set(t);
                    } finally {
                        lats.set(slot, Arrays.copyOf(lat, n));
                        doneAll.countDown();
                    }
                });
            }
            doneAll.await();
        } else {
            Semaphore window = new Semaphore(w.qd());
            long[] lat = new long[1_000_000];
            AtomicLong n = new AtomicLong();
            SplittableRandom rnd = new SplittableRandom(1);
            java.util.concurrent.ConcurrentLinkedQueue<Integer> slotsFree =
                    new java.util.concurrent.ConcurrentLinkedQueue<>();
            for (int s = 0; s < w.qd(); s++) {
                slotsFree.add(s);
            }
            while (System.nanoTime() < end && failed.get() == null) {
                window.acquire();
                int slot = slotsFree.poll();
                long off = (w.random() ? rnd.nextLong(slots) : seq.getAndIncrement() % slots) * w.size();
                long a = System.nanoTime();
                e.io(w.write(), off, w.size(), slot, t -> {
                    if (t != null) {
                        failed.compareAndSet(null, t);
                    }
                    long i = n.getAndIncrement();
                    if (i < lat.length) {
                        lat[(int) i] = System.nanoTime() - a;
                    }
                    ops.incrementAndGet();
                    slotsFree.add(slot);
                    window.release();
                });
            }
            window.acquire(w.qd());
            lats.add(Arrays.copyOf(lat, (int) Math.min(n.get(), lat.length)));
        }
        if (failed.get() != null) {
            throw new IllegalStateException(w.name() + " failed", failed.get());
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        return new Result(
                ops.get(), secs, lats.stream().flatMapToLong(Arrays::stream).toArray());
    }
}
