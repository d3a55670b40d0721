package io.rdma4j.examples;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * RL weight sync: a trainer holds N named tensors and pushes version k of all of them to two rollout workers. Each
 * tensor is one write whose tag names (version, tensor); a worker treats version k as visible only once the tags of all
 * N tensors of version k arrived, and each tag arrives only after its tensor's bytes landed. Repeated for several
 * versions with different data, each verified by every worker.
 */
public final class WeightSync {
    private WeightSync() {}

    /** A rollout worker: one engine, one published buffer holding every tensor at a fixed offset. */
    static final class Worker implements AutoCloseable {
        final TransferEngine engine;
        final MemorySegment weights;

        Worker(TransferEngine engine, Arena arena, long bytes) {
            this.engine = engine;
            this.weights = arena.allocate(bytes, 4096);
            engine.publish("weights", engine.register(weights), Access.anyPeer());
        }

        /** Waits until all {@code tensors} tags of {@code version} arrived; returns false on timeout. */
        boolean awaitVersion(int version, int tensors, Duration timeout) throws InterruptedException {
            for (int t = 0; t < tensors; t++) {
                Notification n = engine.awaitTag(tag(version, t), timeout);
                if (n == null) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    static long tag(int version, int tensor) {
        return ((long) version << 32) | tensor;
    }

    static float value(int version, int tensor, long i) {
        return version * 1000f + tensor + (i % 97) / 128f;
    }

    /**
     * Runs the sync with engines built by {@code builder} (one per role); returns the number of (worker, version) pairs
     * verified.
     */
    public static int run(
            java.util.function.Function<String, TransferEngine> builder, int tensors, int floatsPerTensor, int versions)
            throws Exception {
        long tensorBytes = (long) floatsPerTensor * Float.BYTES;
        long total = tensorBytes * tensors;
        int verified = 0;
        try (Arena arena = Arena.ofShared();
                TransferEngine trainer = builder.apply("trainer");
                Worker w0 = new Worker(builder.apply("rollout-0"), arena, total);
                Worker w1 = new Worker(builder.apply("rollout-1"), arena, total)) {
            List<MemorySegment> params = new ArrayList<>();
            List<LocalBuffer> registered = new ArrayList<>();
            for (int t = 0; t < tensors; t++) {
                MemorySegment p = arena.allocate(tensorBytes, 64);
                params.add(p);
                registered.add(trainer.register(p));
            }
            List<Worker> workers = List.of(w0, w1);
            List<RemoteBuffer> targets = new ArrayList<>();
            for (Worker w : workers) {
                targets.add(trainer.peer(w.engine.name()).buffer("weights"));
            }
            for (int v = 1; v <= versions; v++) {
                // the optimizer step: new values for every tensor
                for (int t = 0; t < tensors; t++) {
                    MemorySegment p = params.get(t);
                    for (long i = 0; i < floatsPerTensor; i++) {
                        p.setAtIndex(ValueLayout.JAVA_FLOAT, i, value(v, t, i));
                    }
                }
                List<TransferRequest> batch = new ArrayList<>();
                for (RemoteBuffer target : targets) {
                    for (int t = 0; t < tensors; t++) {
                        batch.add(new TransferRequest(
                                registered.get(t),
                                0,
                                target,
                                t * tensorBytes,
                                tensorBytes,
                                TransferOptions.tag(tag(v, t))));
                    }
                }
                // the trainer may not touch its tensors again until the batch completed
                for (Transfer tr : trainer.writeAll(batch)) {
                    tr.join();
                }
                for (Worker w : workers) {
                    if (!w.awaitVersion(v, tensors, Duration.ofSeconds(30))) {
                        throw new IllegalStateException(w.engine.name() + " never saw all tensors of version " + v);
                    }
                    for (int t = 0; t < tensors; t++) {
                        for (long i = 0; i < floatsPerTensor; i++) {
                            float got = w.weights.getAtIndex(ValueLayout.JAVA_FLOAT, t * (long) floatsPerTensor + i);
                            if (got != value(v, t, i)) {
                                throw new IllegalStateException(w.engine.name() + " version " + v + " tensor " + t
                                        + " float " + i + " is " + got);
                            }
                        }
                    }
                    verified++;
                }
                System.out.printf(
                        "version %d: %d tensors (%d bytes) visible on both rollout workers%n", v, tensors, total);
            }
        }
        return verified;
    }

    public static void main(String[] args) throws Exception {
        int versions = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        String provider = args.length > 1 ? args[1] : "shm";
        int n = run(
                role -> {
                    TransferEngine.Builder b = TransferEngine.builder()
                            .name("weightsync-" + role + "-"
                                    + ProcessHandle.current().pid())
                            .provider(provider)
                            .lanesPerNic(2);
                    if (provider.startsWith("tcp")) {
                        b.nicFilter("lo");
                    }
                    return b.build();
                },
                8,
                1 << 18,
                versions);
        System.out.println(n + " (worker, version) pairs verified");
    }
}
