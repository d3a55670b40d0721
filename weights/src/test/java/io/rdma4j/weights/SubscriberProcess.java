package io.rdma4j.weights;

import io.rdma4j.engine.TransferEngine;
import java.time.Duration;
import java.util.List;

/**
 * A rollout rank in its own process, for the multi-process tests: args are the directory, its engine name, the
 * publishers (comma-separated), its part ({@code full} or {@code dim:index:parts}), the last version to wait for and,
 * optionally, how many milliseconds to hold each lease. It leases the newest version, checks every byte against the
 * fixture, holds the lease that long and checks every byte again (a version must not change under its lease), and
 * prints {@code OK v} or {@code BAD v ...}.
 */
public final class SubscriberProcess {
    private SubscriberProcess() {}

    public static void main(String[] args) throws Exception {
        String directory = args[0];
        String name = args[1];
        List<String> publishers = List.of(args[2].split(","));
        String part = args[3];
        long last = Long.parseLong(args[4]);
        long holdMillis = args.length > 5 ? Long.parseLong(args[5]) : 0;
        try (TransferEngine engine = SyncFixture.engine(name, directory);
                WeightSubscriber sub = WeightSubscriber.builder(engine, publishers)
                        .needs(n -> need(part, n))
                        .build()) {
            System.out.println("JOINED");
            long seen = 0;
            while (seen < last) {
                try (WeightSubscriber.Lease lease = sub.awaitVersion(seen + 1, Duration.ofSeconds(120))) {
                    long v = lease.version();
                    String verdict = check(lease, part, "");
                    if (verdict == null && holdMillis > 0) {
                        Thread.sleep(holdMillis);
                        verdict = check(lease, part, " after holding the lease " + holdMillis + " ms");
                    }
                    System.out.println(verdict == null ? "OK " + v : verdict);
                    seen = v;
                }
            }
            // stay until the test is done: exiting right after the last version could withdraw this subscriber
            // before its confirmation reached the publisher, which would rightly call it lost
            while (System.in.read() != -1) {
                // the test says nothing; EOF or being killed ends this process
            }
        }
    }

    /** {@return null when every byte of the lease's tensors is its version's, else {@code BAD v ...}} */
    private static String check(WeightSubscriber.Lease lease, String part, String when) {
        long v = lease.version();
        for (int t = 0; t < SyncFixture.NAMES.length; t++) {
            Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
            long bad = SyncFixture.check(x.host(), v, t, need(part, x.name()));
            if (bad >= 0) {
                return "BAD " + v + " " + x.name() + " at byte " + bad + when;
            }
        }
        return null;
    }

    static Shard need(String part, String tensor) {
        if (part.equals("full")) {
            return Shard.FULL;
        }
        String[] p = part.split(":");
        int t = List.of(SyncFixture.NAMES).indexOf(tensor);
        int dim = Integer.parseInt(p[0]);
        return Shard.split(dim, SyncFixture.SHAPES[t][dim], Integer.parseInt(p[1]), Integer.parseInt(p[2]));
    }
}
