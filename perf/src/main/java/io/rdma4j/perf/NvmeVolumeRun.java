package io.rdma4j.perf;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./rdma4j bench nvme-volume --volume NS[,NS...] [--size BYTES] [--stripe BYTES] [--rounds N] [--polled-io
 * on|off]}: a large checkpoint-sized write (and read back) through the engine, striped over every namespace of
 * {@code --volume} ({@code tcp://HOST:PORT/NQN/NSID}), next to two baselines in the same run: the raw
 * {@link Controller} writing the same bytes to the first namespace in one call (split by MDTS, spread over its queues),
 * and the engine on that one namespace alone (the engine's own cost). Rounds alternate the three, and each keeps its
 * best, so background load hits all alike. The runs write: use scratch namespaces.
 */
final class NvmeVolumeRun implements BenchRun {
    @Override
    public String name() {
        return "nvme-volume";
    }

    @Override
    public String summary() {
        return "engine writes striped over NVMe-oF namespaces vs the raw Controller on one (same bytes, same run)";
    }

    private interface Io {
        void run(boolean write) throws Exception;
    }

    @Override
    public int run(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                throw new IllegalArgumentException(
                        "expected --volume NS[,NS...] [--size BYTES] [--stripe BYTES] [--rounds N] [--polled-io on|off], got "
                                + args[i]);
            }
            o.put(args[i].substring(2), args[++i]);
        }
        if (!o.containsKey("volume")) {
            throw new IllegalArgumentException("--volume tcp://HOST:PORT/NQN/NSID[,...] is required");
        }
        long size = Long.parseLong(o.getOrDefault("size", String.valueOf(64L << 20)));
        long stripe = Long.parseLong(o.getOrDefault("stripe", String.valueOf(1L << 20)));
        int rounds = Integer.parseInt(o.getOrDefault("rounds", "3"));
        String polledIo = switch (o.getOrDefault("polled-io", "on")) {
            case "on" -> "true";
            case "off" -> "false";
            default -> throw new IllegalArgumentException("--polled-io takes on or off");
        };
        List<VolumeSpec.Namespace> all = new ArrayList<>();
        for (String n : o.get("volume").split(",")) {
            all.add(VolumeSpec.Namespace.parse(n.strip()));
        }
        VolumeSpec.Namespace first = all.getFirst();
        Target target = first.transport().equals("tcp")
                ? Target.tcp(first.host(), first.port())
                : Target.rdma(first.host(), first.port());
        try (Arena arena = Arena.ofShared();
                TransferEngine engine = TransferEngine.builder()
                        .name("bench-nvme-volume")
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .build();
                StorageVolume striped = engine.openVolume(
                        VolumeSpec.of(all).withStripeUnit(stripe).withOption("polledIo", polledIo));
                StorageVolume single = engine.openVolume(
                        VolumeSpec.of(List.of(first)).withStripeUnit(stripe).withOption("polledIo", polledIo));
                Controller raw = Controller.connect(target, first.subsystemNqn(), ConnectOptions.defaults())) {
            if (size % striped.blockSize() != 0 || size > single.capacityBytes()) {
                throw new IllegalArgumentException("--size " + size + " must be a multiple of " + striped.blockSize()
                        + " and fit namespace " + first + " (" + single.capacityBytes() + " bytes)");
            }
            MemorySegment mem = arena.allocate(size, 4096);
            SplittableRandom r = new SplittableRandom(7);
            for (long i = 0; i < size; i += 8) {
                mem.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
            }
            int bs = raw.namespace(first.nsid()).blockSize();
            try (LocalBuffer buf = engine.register(mem)) {
                Io rawIo = w -> (w ? raw.write(first.nsid(), 0, mem) : raw.read(first.nsid(), 0, mem))
                        .get(300, TimeUnit.SECONDS);
                Io singleIo =
                        w -> (w ? engine.write(buf, single.extent(0, size)) : engine.read(buf, single.extent(0, size)))
                                .future()
                                .get(300, TimeUnit.SECONDS);
                Io stripedIo = w -> (w
                                ? engine.write(buf, striped.extent(0, size))
                                : engine.read(buf, striped.extent(0, size)))
                        .future()
                        .get(300, TimeUnit.SECONDS);
                String[] names = {
                    "raw Controller, " + first + " (baseline)",
                    "engine, " + first + " alone",
                    "engine, striped over " + all.size() + " namespace(s)"
                };
                Io[] ios = {rawIo, singleIo, stripedIo};
                double[][] best = new double[3][2];
                for (Io io : ios) { // warm-up, uncounted
                    io.run(true);
                    io.run(false);
                }
                for (int round = 0; round < rounds; round++) {
                    for (int k = 0; k < 3; k++) {
                        for (int w = 0; w < 2; w++) {
                            long t0 = System.nanoTime();
                            ios[k].run(w == 0);
                            double mbs = size / 1e6 / ((System.nanoTime() - t0) / 1e9);
                            best[k][w] = Math.max(best[k][w], mbs);
                        }
                    }
                }
                System.out.printf(
                        Locale.ROOT,
                        "%d MiB per transfer, %d KiB stripes, %d-byte blocks, best of %d rounds%n",
                        size >> 20,
                        stripe >> 10,
                        bs,
                        rounds);
                for (String line : striped.describe()) {
                    System.out.println("  " + line);
                }
                for (int k = 0; k < 3; k++) {
                    System.out.printf(
                            Locale.ROOT,
                            "  %-70s write %8.1f MB/s (%.2fx)  read %8.1f MB/s (%.2fx)%n",
                            names[k],
                            best[k][0],
                            best[k][0] / best[0][0],
                            best[k][1],
                            best[k][1] / best[0][1]);
                }
            }
        }
        return 0;
    }
}
