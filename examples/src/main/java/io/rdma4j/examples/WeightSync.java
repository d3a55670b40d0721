package io.rdma4j.examples;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.weights.DType;
import io.rdma4j.weights.PublishResult;
import io.rdma4j.weights.Shard;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.TensorSet;
import io.rdma4j.weights.WeightPublisher;
import io.rdma4j.weights.WeightSubscriber;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * RL weight sync with the weights module: a trainer publishes N named tensors ({@link WeightPublisher}) and two rollout
 * workers subscribe ({@link WeightSubscriber}); rollout-0 needs every tensor whole, rollout-1 only the second half of
 * each (as a tensor-parallel rank would). Each {@code publish(v)} returns once every worker confirmed that every byte
 * it needs of version v landed; a worker reads a version through a lease, during which no later version overwrites it.
 * Repeated for several versions with different data, each verified by every worker.
 */
public final class WeightSync {
    private WeightSync() {}

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
        int verified = 0;
        try (Arena arena = Arena.ofShared();
                TransferEngine trainer = builder.apply("trainer");
                TransferEngine e0 = builder.apply("rollout-0");
                TransferEngine e1 = builder.apply("rollout-1")) {
            List<Tensor> params = new ArrayList<>();
            for (int t = 0; t < tensors; t++) {
                params.add(Tensor.host(
                        "layer" + t + ".weight",
                        DType.F32,
                        new long[] {floatsPerTensor},
                        arena.allocate(tensorBytes, 64)));
            }
            Shard secondHalf = Shard.split(0, floatsPerTensor, 1, 2);
            try (WeightPublisher pub = WeightPublisher.builder(trainer, new TensorSet(params, Map.of()))
                            .build();
                    WeightSubscriber w0 = WeightSubscriber.builder(e0, List.of(trainer.name()))
                            .build();
                    WeightSubscriber w1 = WeightSubscriber.builder(e1, List.of(trainer.name()))
                            .needs(name -> secondHalf)
                            .build()) {
                pub.awaitSubscribers(2, Duration.ofSeconds(30));
                System.out.print(pub.explain());
                for (int v = 1; v <= versions; v++) {
                    // the optimizer step: new values for every tensor
                    for (int t = 0; t < tensors; t++) {
                        MemorySegment p = params.get(t).host();
                        for (long i = 0; i < floatsPerTensor; i++) {
                            p.setAtIndex(ValueLayout.JAVA_FLOAT, i, value(v, t, i));
                        }
                    }
                    // the trainer may not touch its tensors again until publish returns
                    PublishResult r = pub.publish(v);
                    if (r.synced() != 2) {
                        throw new IllegalStateException("version " + v + " did not reach both workers: " + r);
                    }
                    verified += verify(w0, v, tensors, 0);
                    verified += verify(w1, v, tensors, floatsPerTensor / 2);
                    System.out.printf(
                            "version %d: %d tensors in %.3f ms, visible on both rollout workers%n",
                            v, tensors, r.nanos() / 1e6);
                }
            }
        }
        return verified;
    }

    /**
     * Leases version {@code v} and checks every float it holds, whose first index in the full tensor is {@code from}.
     */
    private static int verify(WeightSubscriber w, int v, int tensors, long from) throws InterruptedException {
        try (WeightSubscriber.Lease lease = w.awaitVersion(v, Duration.ofSeconds(30))) {
            for (int t = 0; t < tensors; t++) {
                MemorySegment got = lease.tensors().get("layer" + t + ".weight").host();
                for (long i = 0; i < got.byteSize() / Float.BYTES; i++) {
                    float f = got.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    if (f != value(v, t, from + i)) {
                        throw new IllegalStateException(
                                "version " + v + " tensor " + t + " float " + (from + i) + " is " + f);
                    }
                }
            }
            if (lease.version() != v) {
                throw new IllegalStateException("leased version " + lease.version() + " where " + v + " was due");
            }
        }
        return 1;
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
