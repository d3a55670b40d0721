package io.rdma4j.cli;

import java.time.Duration;
import java.util.List;

/**
 * The progress options every long-running command takes: {@code --no-progress}, and {@code --progress-every SECONDS},
 * how often a plain progress line is printed when standard error is not a terminal.
 *
 * @param enabled false for {@code --no-progress}
 * @param every the interval between plain lines; zero prints one for every step (what the tests use)
 */
record ProgressOptions(boolean enabled, Duration every) {
    /** The default interval between plain lines: often enough for a log, rarely enough not to flood it. */
    static final Duration EVERY = Duration.ofSeconds(10);

    /** No progress: for runs whose output nobody reads. */
    static final ProgressOptions OFF = new ProgressOptions(false, EVERY);

    /**
     * Takes the progress options out of {@code args}, leaving the command's own.
     *
     * @param args modified: the progress options and their values are removed
     * @throws IllegalArgumentException when {@code --progress-every} has no value or a bad one
     */
    static ProgressOptions take(List<String> args) {
        boolean enabled = true;
        Duration every = EVERY;
        for (int i = 0; i < args.size(); ) {
            switch (args.get(i)) {
                case "--no-progress" -> {
                    enabled = false;
                    args.remove(i);
                }
                case "--progress-every" -> {
                    if (i + 1 >= args.size()) {
                        throw new IllegalArgumentException("--progress-every needs a number of seconds, such as 10");
                    }
                    every = seconds(args.get(i + 1));
                    args.subList(i, i + 2).clear();
                }
                default -> i++;
            }
        }
        return new ProgressOptions(enabled, every);
    }

    private static Duration seconds(String v) {
        double s;
        try {
            s = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            s = -1;
        }
        if (!(s >= 0 && s <= 86_400)) {
            throw new IllegalArgumentException(
                    "--progress-every '" + v + "' is not a number of seconds from 0 to 86400, such as 10 or 0.5");
        }
        return Duration.ofNanos((long) (s * 1e9));
    }
}
