/**
 * Benchmarks: JMH microbenchmarks and end-to-end runs, each printed next to a named baseline measured in the same run.
 */
package io.rdma4j.perf;
