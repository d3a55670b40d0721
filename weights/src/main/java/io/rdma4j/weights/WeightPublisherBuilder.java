package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.weights.internal.Tags;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/** Configuration of a {@link WeightPublisher}. */
public final class WeightPublisherBuilder {
    final TransferEngine engine;
    final TensorSet tensors;
    Function<String, Shard> shards = n -> Shard.FULL;
    final Map<String, long[]> fullShapes = new HashMap<>();
    int rank;
    boolean relay = true;
    long chunk = 4 << 20;
    Duration deadline = Duration.ofSeconds(30);
    boolean crc32c;

    WeightPublisherBuilder(TransferEngine engine, TensorSet tensors) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.tensors = Objects.requireNonNull(tensors, "tensors");
    }

    /**
     * The part of each tensor this rank holds (default: all of it); a tensor's memory holds just that part.
     *
     * @param shards from tensor name to part
     * @return this builder
     */
    public WeightPublisherBuilder shards(Function<String, Shard> shards) {
        this.shards = Objects.requireNonNull(shards, "shards");
        return this;
    }

    /**
     * The full shape of a sharded tensor (default: the shape of the tensor given, i.e. unsharded).
     *
     * @param name the tensor
     * @param shape its full shape
     * @return this builder
     */
    public WeightPublisherBuilder fullShape(String name, long[] shape) {
        fullShapes.put(name, shape.clone());
        return this;
    }

    /**
     * This rank's number among the trainer ranks that publish the same tensors (0 to 31); default 0.
     *
     * @param rank the rank
     * @return this builder
     */
    public WeightPublisherBuilder rank(int rank) {
        this.rank = rank;
        return this;
    }

    /**
     * Relay (default) or write to every subscriber directly.
     *
     * @param relay whether subscribers needing the same bytes forward them along a chain
     * @return this builder
     */
    public WeightPublisherBuilder relay(boolean relay) {
        this.relay = relay;
        return this;
    }

    /**
     * The largest piece a plan cuts, the unit of relay pipelining; default 4 MiB. It is also the size of a staging
     * slot: where a piece's rows are strided in this rank's host memory but adjacent at the subscriber (resharding
     * along an inner dimension), the rank copies them into a registered slot and sends the piece as one write, keeping
     * up to 128 MiB of slots (at least two) as the plan needs.
     *
     * @param bytes the chunk size
     * @return this builder
     */
    public WeightPublisherBuilder chunkSize(long bytes) {
        this.chunk = bytes;
        return this;
    }

    /**
     * How long {@link WeightPublisher#publish} waits for every subscriber; default 30 s.
     *
     * @param d the deadline
     * @return this builder
     */
    public WeightPublisherBuilder deadline(Duration d) {
        this.deadline = Objects.requireNonNull(d, "deadline");
        return this;
    }

    /**
     * Verify CRC32C at the receiver: of every piece that travels as one write (contiguous at the receiver, gathered
     * where this rank holds it strided), of the last run of a piece that travels as several (strided at the receiver,
     * or from device memory). Pieces never span tensors.
     *
     * @param on whether to check
     * @return this builder
     */
    public WeightPublisherBuilder crc32c(boolean on) {
        this.crc32c = on;
        return this;
    }

    /**
     * Registers the tensors, publishes the manifest and starts listening for subscribers.
     *
     * @return the publisher
     * @throws InvalidArgumentException when a setting is out of range or a part does not fit its tensor
     */
    public WeightPublisher build() {
        if (rank < 0 || rank >= Tags.MAX_RANKS || chunk < 4096 || deadline.isNegative() || deadline.isZero()) {
            throw new InvalidArgumentException("rank must be in [0, " + Tags.MAX_RANKS
                    + "), chunk size at least 4096, the deadline positive; got rank " + rank + ", chunk " + chunk
                    + ", deadline " + deadline);
        }
        return new WeightPublisher(this);
    }
}
