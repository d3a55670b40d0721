package io.rdma4j.weights;

import io.rdma4j.engine.TransferEngine;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A trainer rank in its own process, for the restart test: args are the directory and its engine name. It holds the
 * fixture's tensors whole, says {@code READY} once a subscriber joined, then for each {@code PUBLISH v} on stdin fills
 * version v, publishes it and says {@code PUBLISHED v synced}.
 */
public final class PublisherProcess {
    private PublisherProcess() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Arena arena = Arena.ofShared();
                TransferEngine engine = SyncFixture.engine(args[1], args[0])) {
            List<Tensor> ts = new ArrayList<>();
            for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                long bytes = Tensor.byteSize(SyncFixture.TYPES[t], SyncFixture.SHAPES[t]);
                ts.add(Tensor.host(
                        SyncFixture.NAMES[t], SyncFixture.TYPES[t], SyncFixture.SHAPES[t], arena.allocate(bytes, 64)));
            }
            try (WeightPublisher pub = WeightPublisher.builder(engine, new TensorSet(ts, Map.of()))
                    .deadline(Duration.ofSeconds(20))
                    .build()) {
                pub.awaitSubscribers(1, Duration.ofSeconds(60));
                System.out.println("READY");
                for (String l; (l = in.readLine()) != null; ) {
                    long v = Long.parseLong(l.substring("PUBLISH ".length()));
                    for (int t = 0; t < ts.size(); t++) {
                        MemorySegment m = ts.get(t).host();
                        SyncFixture.fill(m, v, t, Shard.FULL);
                    }
                    System.out.println("PUBLISHED " + v + " " + pub.publish(v).synced());
                }
            }
        }
    }
}
