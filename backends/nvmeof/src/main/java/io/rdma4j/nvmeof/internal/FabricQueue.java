package io.rdma4j.nvmeof.internal;

import io.rdma4j.nvmeof.NvmeException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One NVMe queue pair over some fabric transport (NVMe/TCP, NVMe/RDMA): what the controller's bring-up, admin commands,
 * split I/O and keep-alive need from a queue, so they are shared by every transport.
 */
public interface FabricQueue extends AutoCloseable {
    /** Where a command's data lives and which way it moves. */
    record Data(MemorySegment segment, long offset, int length, boolean toController) {
        public static final Data NONE = new Data(MemorySegment.NULL, 0, 0, false);
    }

    /**
     * Sends a command. The CID and (for data) SGL1 are filled in here.
     *
     * @param what names the command in error messages, e.g. {@code Read(nsid=1, slba=0, blocks=8)}; null: the queue
     *     names it from the command's bytes ({@link Sqe#describe}) if it ever needs to
     * @return completes with the completion entry (whatever its status) or exceptionally if the connection fails
     */
    CompletableFuture<Cqe> submit(byte[] sqe, Data data, String what);

    /**
     * Sends a command without data that may stay outstanding as long as the controller likes (an Asynchronous Event
     * Request): the I/O timeout does not apply to it. It fails, like every command, when the connection does.
     */
    CompletableFuture<Cqe> submitUntimed(byte[] sqe, String what);

    /** @return null while the connection works, else why it does not */
    NvmeException failure();

    /** Fails every outstanding and waiting command with {@code why} and closes the connection. Idempotent. */
    void fail(NvmeException why);

    /**
     * @return whether this queue can move data of {@code segment} (a confined arena's memory its threads may not touch)
     */
    boolean accessible(MemorySegment segment);

    /** @return whether this queue completes its commands' futures on {@code thread} (its own thread) */
    boolean completesOn(Thread thread);

    /** Closes the connection; outstanding commands fail with a {@link io.rdma4j.nvmeof.NvmeConnectionException}. */
    @Override
    void close();
}
