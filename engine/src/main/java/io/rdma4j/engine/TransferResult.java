package io.rdma4j.engine;

import java.util.List;

/**
 * What a finished transfer did.
 *
 * @param bytes bytes moved
 * @param lanesUsed local lane indices that carried at least one chunk, ascending
 * @param nanos from submission to completion (notification included)
 * @param retries chunks that had to be re-sent on another lane
 */
public record TransferResult(long bytes, List<Integer> lanesUsed, long nanos, int retries) {
    /** Copies {@code lanesUsed}. */
    public TransferResult {
        lanesUsed = List.copyOf(lanesUsed);
    }
}
