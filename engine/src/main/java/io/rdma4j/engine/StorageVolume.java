package io.rdma4j.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Remote block storage the engine writes to and reads from ({@link TransferEngine#write(LocalBuffer, long,
 * VolumeExtent, long, long, TransferOptions)}): one namespace, or several striped RAID-0 in {@link #stripeUnit()}
 * pieces, each reached through the NIC the engine chose for the memory it serves. Namespaces of unequal size are
 * striped in zones (as Linux md's RAID-0 does): all of them up to the smallest one's size, then the larger ones, so
 * every byte is used except each namespace's tail below one stripe unit.
 */
public interface StorageVolume extends AutoCloseable {
    /** {@return a short name for messages: the first namespace and how many more} */
    String name();

    /** {@return bytes per logical block of the volume: the largest block size of its namespaces} */
    int blockSize();

    /** {@return usable bytes} */
    long capacityBytes();

    /** {@return the stripe unit in bytes} */
    long stripeUnit();

    /** {@return one line per namespace: where it is, its size and block size, the NIC used to reach it and why} */
    List<String> describe();

    /**
     * {@return {@code length} bytes from logical block {@code startLba}}
     *
     * @param startLba the first logical block
     * @param length bytes, a multiple of the block size
     * @throws io.rdma4j.InvalidArgumentException when {@code startLba} is negative, the range is not whole blocks or
     *     runs past {@link #capacityBytes()}
     * @throws io.rdma4j.ClosedException when the volume is closed
     */
    VolumeExtent extent(long startLba, long length);

    /**
     * {@return the whole volume as one extent}
     *
     * @throws io.rdma4j.ClosedException when the volume is closed
     */
    default VolumeExtent all() {
        return extent(0, capacityBytes());
    }

    /**
     * Makes every completed write durable on every namespace (NVMe Flush).
     *
     * @return completes when every namespace acknowledged the flush, or fails with the first namespace's failure (an
     *     {@link io.rdma4j.Rdma4jException} naming the target and the NVMe status)
     * @throws io.rdma4j.ClosedException when the volume is closed
     */
    CompletableFuture<Void> flush();

    /**
     * Fails transfers still in flight (with a {@link TransferException}) and disconnects. Idempotent.
     *
     * @throws io.rdma4j.Rdma4jException the first failure disconnecting a namespace's target, the later ones added to
     *     it as suppressed; every target is attempted
     */
    @Override
    void close();
}
