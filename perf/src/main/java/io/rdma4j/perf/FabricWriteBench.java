package io.rdma4j.perf;

import io.rdma4j.libfabric.Completions;
import io.rdma4j.libfabric.Endpoint;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One 64-byte {@code fi_write} posted and its completion reaped, through the raw layer: the per-operation cost of the
 * Java binding plus the provider. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} shows that the data path
 * allocates nothing per operation. Baseline in the same run: {@link #completionPollOnly}, an empty {@code fi_cq_read},
 * the cheapest call through an ops table.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class FabricWriteBench {
    @Param({"shm"})
    public String provider;

    private FabricWriteLoop.Pair pair;
    private Completions completions;
    private long context;

    @Setup(Level.Trial)
    public void open() {
        pair = new FabricWriteLoop.Pair(provider, 1 << 20);
        completions = new Completions(16);
    }

    @TearDown(Level.Trial)
    public void close() {
        completions.close();
        pair.close();
    }

    @Benchmark
    public long writeAndReap() {
        long rc;
        while ((rc = pair.initiator.write(pair.source, 0, 64, pair.peer, pair.target, 0, ++context))
                == Endpoint.BACK_PRESSURED) {
            pair.initiatorCq.read(completions);
            pair.progressTarget();
        }
        if (rc != Endpoint.OK) {
            throw new IllegalStateException("fi_write: " + rc);
        }
        int n;
        while ((n = pair.initiatorCq.read(completions)) == 0) {
            pair.progressTarget();
        }
        return completions.context(n - 1);
    }

    @Benchmark
    public int completionPollOnly() {
        return pair.initiatorCq.read(completions);
    }
}
