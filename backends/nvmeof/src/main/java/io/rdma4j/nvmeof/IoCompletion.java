package io.rdma4j.nvmeof;

/**
 * Receives the completions a {@link PolledQueue} reaps, on the thread that polls, with no object made for any of them.
 * It may submit more commands to the queue (that is how a caller keeps it full), but must not poll it. An exception it
 * throws does not lose the other completions: the poll reports all it reaped, then throws the first exception.
 */
@FunctionalInterface
public interface IoCompletion {
    /**
     * @param tag what the caller passed with the command
     * @param status {@link PolledQueue#OK}; an NVMe status (status code type in bits 10:8, status code in 7:0, DNR in
     *     bit 14: {@link PolledQueue#describe} names it); or a negative code: {@link PolledQueue#FAILED} (the queue
     *     failed, see {@link PolledQueue#failure()}), {@link PolledQueue#MEMORY_FREED}
     */
    void complete(long tag, int status);
}
