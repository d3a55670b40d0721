package io.rdma4j.weights.internal;

import io.rdma4j.weights.Shard;
import java.util.List;

/**
 * A subscriber as its want manifest describes it: its engine name, buffer count, and per tensor (in the publisher's
 * order) the part it needs and where that part starts in each of its buffers.
 *
 * @param name the subscriber's engine name
 * @param slots 1, or 2 when double buffering
 * @param slotBytes the length of each buffer
 * @param needs per tensor the part needed, or null for none
 * @param offsets per tensor the offset of that part in each buffer
 */
public record Member(String name, int slots, long slotBytes, List<Shard> needs, long[] offsets) {}
