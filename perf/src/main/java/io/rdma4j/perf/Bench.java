package io.rdma4j.perf;

import java.util.Arrays;
import java.util.List;

/**
 * {@code ./rdma4j bench}: {@code jmh [JMH options]} runs the JMH benchmarks of this module (e.g. {@code jmh Topology -f
 * 1}); any other name runs that end-to-end benchmark. JMH forks inherit this JVM's class path; every benchmark class
 * passes {@code --enable-native-access=ALL-UNNAMED} to its forks through {@code @Fork(jvmArgsAppend)}.
 */
public final class Bench {
    private Bench() {}

    static List<BenchRun> runs() {
        return List.of(
                new RendezvousRun(),
                new RendezvousFailoverRun(),
                new FabricWriteRun(),
                new NvmeRun(),
                new IbverbsWriteRun(),
                new EngineIbverbsRun(),
                new EngineWriteRun(),
                new EngineBatchRun(),
                new NvmeVolumeRun(),
                new WeightsRun());
    }

    public static void main(String[] args) throws Exception {
        String name = args.length == 0 ? "help" : args[0];
        String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
        if (name.equals("jmh")) {
            org.openjdk.jmh.Main.main(rest);
            return;
        }
        for (BenchRun r : runs()) {
            if (r.name().equals(name)) {
                try {
                    System.exit(r.run(rest));
                } catch (IllegalArgumentException | io.rdma4j.InvalidArgumentException e) {
                    System.err.println("rdma4j bench " + name + ": " + e.getMessage());
                    System.exit(2);
                }
            }
        }
        System.out.println("usage: ./rdma4j bench <run> [options]\n");
        System.out.printf("  %-22s %s%n", "jmh [JMH options]", "the JMH benchmarks (add -l to list them)");
        for (BenchRun r : runs()) {
            System.out.printf("  %-22s %s%n", r.name(), r.summary());
        }
        System.exit(name.equals("help") ? 0 : 2);
    }
}
