package io.rdma4j.weights.internal;

import io.rdma4j.engine.Notification;
import io.rdma4j.engine.RemoteBuffer;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a subscriber's thread knows of one publisher rank: its epoch, its current plan, which of the plan's pieces
 * landed in each buffer, where to relay them, and the data that came before its plan. Only that thread touches it (the
 * relay targets excepted).
 */
public final class PublisherRank {
    /** The most data notifications kept for a plan not known yet; more are stale. */
    public static final int MAX_EARLY = 4096;

    /** The rank's engine name. */
    public final String engineName;

    /** The epoch of its manifest: notifications of another are stale. */
    public int epoch = -1;

    /** The number of the last drop notice heard from this rank; a repeat is stale once a plan came after it. */
    public int dropped = -1;

    /** Its current plan for this subscriber, or null before the first or after a drop. */
    public Wire.PlanMessage plan;

    /** The last plan under which a version already complete here was confirmed again (its repair round), or -1. */
    public int reconfirmed = -1;

    /** Per relay target: its buffers. */
    public final Map<String, RemoteBuffer[]> targets = new ConcurrentHashMap<>();

    /** Per buffer: the pieces of the current plan landed there. */
    public final BitSet[] arrived;

    /** Per buffer: how many. */
    public final int[] count;

    /**
     * Data of a plan not known here when it landed, in arrival order: a plan's own notification can come after its
     * data's when they travel on different lanes, and the subscriber's thread polls the lanes in turn.
     */
    private final ArrayDeque<Notification> early = new ArrayDeque<>();

    /**
     * @param engineName the rank's engine name
     * @param slots the subscriber's buffers
     */
    public PublisherRank(String engineName, int slots) {
        this.engineName = engineName;
        this.arrived = new BitSet[slots];
        this.count = new int[slots];
        for (int s = 0; s < slots; s++) {
            arrived[s] = new BitSet();
        }
    }

    /** {@return whether {@code n} (data of a plan not known here) was kept for its plan; false: it is stale} */
    public boolean keepEarly(Notification n) {
        if (early.size() >= MAX_EARLY) {
            return false;
        }
        early.add(n);
        return true;
    }

    /** {@return the next data kept before its plan, oldest first, now taken; null when none} */
    public Notification takeEarly() {
        return early.poll();
    }

    /** {@return how many kept data notifications were dropped} (a drop notice or a restart: none of them counts) */
    public int dropEarly() {
        int n = early.size();
        early.clear();
        return n;
    }
}
