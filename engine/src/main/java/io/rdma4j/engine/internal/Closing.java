package io.rdma4j.engine.internal;

/**
 * Close-and-collect: every step is attempted, the first failure is thrown and the later ones are added to it as
 * suppressed. (The project-wide helper in backends/common does the same; this one keeps the engine free of that
 * dependency until they are merged.)
 */
final class Closing {
    /** One step of a close: may throw anything, the next steps still run. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    private Closing() {
    }

    /**
     * Runs every step in order, null steps skipped.
     *
     * @throws RuntimeException the first step's failure (wrapped when checked), with the later ones suppressed
     */
    static void closeAll(Step... steps) {
        Throwable first = null;
        for (Step s : steps) {
            if (s == null) {
                continue;
            }
            try {
                s.run();
            } catch (Throwable t) {
                if (t instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (first == null) {
                    first = t;
                } else if (first != t) {
                    first.addSuppressed(t);
                }
            }
        }
        if (first instanceof RuntimeException r) {
            throw r;
        }
        if (first instanceof Error e) {
            throw e;
        }
        if (first != null) {
            throw new IllegalStateException("closing failed: " + first.getMessage(), first);
        }
    }

    /** {@return a step closing each of {@code resources} in turn, each attempted} */
    static Step each(Iterable<? extends AutoCloseable> resources) {
        return () -> {
            java.util.List<Step> steps = new java.util.ArrayList<>();
            for (AutoCloseable c : resources) {
                steps.add(c::close);
            }
            closeAll(steps.toArray(new Step[0]));
        };
    }
}
