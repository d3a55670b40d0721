package io.rdma4j.perf;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Directory resolve and lookup latency over loopback TCP with a token, against 1,000 announced peers and 10,000
 * published buffers. Baseline: {@link #baselineBareGrpcEcho}, a bare gRPC round trip of the same size on the same
 * transport, so the difference is what the directory (protobuf, token check, validation, access lists, records) adds.
 * Throughput with several threads: {@code ./rdma4j bench jmh RendezvousBench -t 4}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class RendezvousBench {
    private RendezvousFixture fixture;

    @Setup(Level.Trial)
    public void setUp() {
        fixture = new RendezvousFixture(1000, 10_000);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        fixture.close();
    }

    @Benchmark
    public Object resolve() {
        return fixture.resolve(ThreadLocalRandom.current().nextInt(fixture.peers));
    }

    @Benchmark
    public Object lookup() {
        return fixture.lookup(ThreadLocalRandom.current().nextInt(fixture.buffers));
    }

    @Benchmark
    public Object baselineBareGrpcEcho() {
        return fixture.echo();
    }
}
