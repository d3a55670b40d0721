package io.rdma4j.cli;

import io.rdma4j.engine.HostMemory;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.weights.PublishResult;
import io.rdma4j.weights.Shard;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.TensorSet;
import io.rdma4j.weights.WeightPublisher;
import io.rdma4j.weights.WeightPublisherBuilder;
import io.rdma4j.weights.WeightSubscriber;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A process of {@code ./rdma4j weights demo}, started by {@link WeightsCommand}; it talks on stdin and stdout and exits
 * when its stdin closes (the demo is gone).
 *
 * <ul>
 *   <li>{@code trainer DIR PROVIDER TOTAL WORKERS NAME0,NAME1}: two trainer ranks (TP 2 along dimension 0), each its
 *       own engine and publisher. Says {@code READY} once every worker joined both, then for each {@code PUBLISH v} on
 *       stdin fills version v and publishes it from both ranks at once, and says {@code PUBLISHED v nanos bytes synced
 *       failures}.
 *   <li>{@code worker DIR PROVIDER TOTAL INDEX NAME NAME0,NAME1}: one rollout worker needing what
 *       {@link WeightsDemoData#need} says. Says {@code JOINED}, then for each version that lands {@code OK v bytes}
 *       after checking every byte, or {@code BAD v tensor offset}.
 * </ul>
 */
public final class WeightsDemoProcess {
    private WeightsDemoProcess() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (args[0].equals("trainer")) {
            trainer(args[1], args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]), args[5].split(","), in);
            System.exit(0);
        } else {
            Thread.ofPlatform().daemon().start(() -> {
                drain(in);
                Runtime.getRuntime().halt(0);
            });
            System.exit(worker(args[1], args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]), args[5], args[6]));
        }
    }

    private static void drain(BufferedReader in) {
        try {
            while (in.readLine() != null) {
                // the demo says nothing to a worker; EOF means it is gone
            }
        } catch (IOException e) {
            // same as EOF
        }
    }

    private static void trainer(String dir, String provider, long total, int workers, String[] names, BufferedReader in)
            throws Exception {
        int ranks = names.length;
        List<TransferEngine> engines = new ArrayList<>();
        List<WeightPublisher> pubs = new ArrayList<>();
        List<List<MemorySegment>> parts = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try (Arena arena = Arena.ofShared()) {
            for (int r = 0; r < ranks; r++) {
                int rank = r;
                engines.add(DemoCommand.engine(names[r], provider, dir, 2, 1 << 20));
                List<Tensor> ts = new ArrayList<>();
                List<MemorySegment> ms = new ArrayList<>();
                for (int t = 0; t < WeightsDemoData.NAMES.length; t++) {
                    long[] full = WeightsDemoData.shape(t, total);
                    long[] held = Shard.split(0, full[0], r, ranks).shape(full);
                    MemorySegment m = HostMemory.allocate(arena, Tensor.byteSize(WeightsDemoData.TYPES[t], held));
                    ms.add(m);
                    ts.add(Tensor.host(WeightsDemoData.NAMES[t], WeightsDemoData.TYPES[t], held, m));
                }
                parts.add(ms);
                WeightPublisherBuilder b = WeightPublisher.builder(engines.get(r), new TensorSet(ts, Map.of()))
                        .rank(r)
                        .deadline(Duration.ofSeconds(60))
                        .shards(n -> Shard.split(0, WeightsDemoData.shape(index(n), total)[0], rank, ranks));
                for (int t = 0; t < WeightsDemoData.NAMES.length; t++) {
                    b.fullShape(WeightsDemoData.NAMES[t], WeightsDemoData.shape(t, total));
                }
                pubs.add(b.build());
            }
            for (WeightPublisher p : pubs) {
                p.awaitSubscribers(workers, Duration.ofSeconds(60));
            }
            for (String l : pubs.getFirst().explain().split("\n")) {
                System.out.println("PLAN " + l);
            }
            System.out.println("READY");
            for (String cmd; (cmd = in.readLine()) != null; ) {
                long v = Long.parseLong(cmd.substring("PUBLISH ".length()));
                for (int r = 0; r < ranks; r++) {
                    for (int t = 0; t < WeightsDemoData.NAMES.length; t++) {
                        long rows = WeightsDemoData.shape(t, total)[0];
                        WeightsDemoData.fill(parts.get(r).get(t), v, t, Shard.split(0, rows, r, ranks), total);
                    }
                }
                List<Future<PublishResult>> running = new ArrayList<>();
                for (WeightPublisher p : pubs) {
                    running.add(pool.submit(() -> p.publish(v)));
                }
                long nanos = 0;
                long bytes = 0;
                int synced = workers;
                List<String> failures = new ArrayList<>();
                for (Future<PublishResult> f : running) {
                    PublishResult res = f.get();
                    nanos = Math.max(nanos, res.nanos());
                    bytes += res.publisherBytes() + res.relayedBytes();
                    synced = Math.min(synced, res.synced());
                    res.failed().forEach(o -> failures.add(o.subscriber() + ": " + o.reason()));
                }
                System.out.println("PUBLISHED " + v + " " + nanos + " " + bytes + " " + synced + " "
                        + (failures.isEmpty() ? "-" : String.join("; ", failures)));
            }
        } finally {
            pool.shutdownNow();
            for (WeightPublisher p : pubs) {
                p.close();
            }
            for (TransferEngine e : engines) {
                e.close();
            }
        }
    }

    private static int worker(String dir, String provider, long total, int index, String name, String publishers)
            throws Exception {
        try (TransferEngine engine = DemoCommand.engine(name, provider, dir, 2, 1 << 20);
                WeightSubscriber sub = WeightSubscriber.builder(engine, List.of(publishers.split(",")))
                        .needs(n -> WeightsDemoData.need(index, index(n), total))
                        .build()) {
            System.out.println("JOINED");
            for (long seen = 0; ; ) {
                try (WeightSubscriber.Lease lease = sub.awaitVersion(seen + 1, Duration.ofSeconds(300))) {
                    long v = lease.version();
                    String verdict = null;
                    long bytes = 0;
                    for (Tensor x : lease.tensors().tensors()) {
                        int t = index(x.name());
                        long bad = WeightsDemoData.check(x.host(), v, t, WeightsDemoData.need(index, t, total), total);
                        bytes += x.byteSize();
                        if (bad >= 0 && verdict == null) {
                            verdict = "BAD " + v + " " + x.name() + " " + bad;
                        }
                    }
                    System.out.println(verdict != null ? verdict : "OK " + v + " " + bytes);
                    seen = v;
                }
            }
        }
    }

    static int index(String tensor) {
        int t = List.of(WeightsDemoData.NAMES).indexOf(tensor);
        if (t < 0) {
            throw new IllegalStateException("the trainer announced an unknown tensor " + tensor);
        }
        return t;
    }
}
