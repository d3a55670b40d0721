/**
 * {@code ./rdma4j soak}: engines in separate processes under continuous, verified traffic while faults are injected at
 * random; it ends with counts of hung transfers, corrupt bytes and resource growth, which must all be zero.
 */
package io.rdma4j.perf.soak;
