package io.rdma4j.engine.spi;

/**
 * A connected storage controller: its namespaces, and how much I/O it takes at once. Thread-safe. {@link #close()}
 * fails what is still outstanding and is idempotent.
 */
public interface BlockStore extends AutoCloseable {
    /** @return one line: target, subsystem, queues, depth, largest command */
    String describe();

    /** @return commands it keeps in flight at once over all its queues (I/O queues times depth) */
    int ioSlots();

    /** @return largest transfer one command moves; larger reads and writes are split into several commands */
    long maxTransferBytes();

    /**
     * @return namespace {@code nsid}
     * @throws IllegalArgumentException when the controller has no such active namespace (the message lists them)
     */
    BlockNamespace namespace(long nsid);

    @Override
    void close();
}
