package io.rdma4j.perf;

import java.util.Arrays;
import java.util.List;

/**
 * The options every write-bandwidth run takes, so the raw baseline and the layers measured against it are driven the
 * same way: {@code --providers shm,tcp --seconds 0.4 --window 64 --sizes 4096,1048576,...}.
 */
record WriteRunOptions(List<String> providers, double seconds, int window, long[] sizes) {
    static WriteRunOptions parse(String[] args, long[] defaultSizes) {
        return parse(args, defaultSizes, 0.4);
    }

    /** As {@link #parse(String[], long[])}, each point running {@code defaultSeconds} unless {@code --seconds} says. */
    static WriteRunOptions parse(String[] args, long[] defaultSizes, double defaultSeconds) {
        List<String> providers = List.of("shm", "tcp");
        double seconds = defaultSeconds;
        int window = 64;
        long[] sizes = defaultSizes;
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("option " + args[args.length - 1] + " needs a value" + USAGE);
        }
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--providers" -> providers = List.of(args[i + 1].split(","));
                case "--seconds" -> seconds = Double.parseDouble(args[i + 1]);
                case "--window" -> window = Integer.parseInt(args[i + 1]);
                case "--sizes" ->
                    sizes = Arrays.stream(args[i + 1].split(","))
                            .mapToLong(Long::parseLong)
                            .toArray();
                default -> throw new IllegalArgumentException("unknown option " + args[i] + USAGE);
            }
        }
        if (seconds <= 0
                || window < 1
                || sizes.length == 0
                || Arrays.stream(sizes).anyMatch(s -> s < 1 || s > (64L << 20))) {
            throw new IllegalArgumentException("need --seconds > 0, --window >= 1 and sizes of 1 B to 64 MiB" + USAGE);
        }
        return new WriteRunOptions(providers, seconds, window, sizes);
    }

    /** Nanoseconds each measured point runs for. */
    long budgetNanos() {
        return (long) (seconds * 1e9);
    }

    private static final String USAGE = " (--providers shm,tcp --seconds 0.4 --window 64 --sizes 8,4096,1048576,...)";
}
