package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.weights.internal.Tags;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/** Configuration of a {@link WeightSubscriber}. */
public final class WeightSubscriberBuilder {
    final TransferEngine engine;
    final List<String> publishers;
    Function<String, Shard> needs = n -> Shard.FULL;
    boolean doubleBuffer = true;
    Duration joinTimeout = Duration.ofSeconds(30);

    WeightSubscriberBuilder(TransferEngine engine, List<String> publishers) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.publishers = List.copyOf(publishers);
    }

    /**
     * The part of each tensor this rank needs (default: all of it; null: not that tensor).
     *
     * @param needs from tensor name to part
     * @return this builder
     */
    public WeightSubscriberBuilder needs(Function<String, Shard> needs) {
        this.needs = Objects.requireNonNull(needs, "needs");
        return this;
    }

    /**
     * Two buffers (default): version k+1 lands in one while k is leased from the other. With one, a version can land
     * only once the previous one was leased and released.
     *
     * @param on whether to keep two buffers
     * @return this builder
     */
    public WeightSubscriberBuilder doubleBuffer(boolean on) {
        this.doubleBuffer = on;
        return this;
    }

    /**
     * How long to wait for the publishers' manifests; default 30 s.
     *
     * @param d the timeout
     * @return this builder
     */
    public WeightSubscriberBuilder joinTimeout(Duration d) {
        this.joinTimeout = Objects.requireNonNull(d, "joinTimeout");
        return this;
    }

    /**
     * Reads the manifests, reserves and publishes the buffers, and joins every publisher rank.
     *
     * @return the subscriber
     * @throws InvalidArgumentException when no publisher is named, the ranks disagree or a need is not covered
     * @throws Rdma4jException when a publisher's manifest cannot be read in time
     */
    public WeightSubscriber build() {
        if (publishers.isEmpty() || publishers.size() > Tags.MAX_RANKS) {
            throw new InvalidArgumentException(
                    "name 1 to " + Tags.MAX_RANKS + " publisher engines, got " + publishers.size());
        }
        return new WeightSubscriber(this);
    }
}
