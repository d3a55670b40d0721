package io.rdma4j.perf;

/**
 * One end-to-end benchmark run of {@code ./rdma4j bench NAME}; it prints its result next to a named baseline measured
 * in the same run.
 */
interface BenchRun {
    String name();

    String summary();

    int run(String[] args) throws Exception;
}
