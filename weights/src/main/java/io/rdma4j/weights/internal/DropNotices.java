package io.rdma4j.weights.internal;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Tells subscribers a publisher rank dropped after they failed a version, so that one still alive (slow, paused past
 * its lease, or holding a piece that failed its check) joins again and gets the next version; and tells one whose join
 * it could not admit to join again. The notice is sent again on every {@link #retry} until the subscriber is admitted
 * or {@link #GIVE_UP} passed: a write that completed may still have gone to a connection the subscriber no longer has
 * (its lease lapsed), and its join may be lost the same way. A join that arrived pauses the notices until the publisher
 * admits or refuses it; a refusal resumes them, or starts them for a subscriber never dropped: a subscriber paused past
 * its lease may answer a notice that waited for it before it announced itself again, and a first join's wishes may not
 * be readable in time on a loaded machine. Refused for good (it wants what this rank does not have), a subscriber joins
 * about once a second until {@link #GIVE_UP}, each time refused with the reason. A notice sent again keeps its number,
 * so that a subscriber tells it from a new drop. Each notice goes out from a virtual thread of its own: a directory
 * lookup or a write to a dead peer may take up to the deadline.
 */
public final class DropNotices {
    /** How long a dropped or refused subscriber that is never admitted is still told. */
    static final Duration GIVE_UP = Duration.ofMinutes(10);

    private static final int MAX_PENDING = 4096;

    private final TransferEngine engine;
    private final LocalBuffer from;
    private final long fromOffset;
    private final String inboxName;
    private final long inboxOffset;
    private final int rank;
    private final int epoch;
    private final Duration deadline;
    private final Map<String, long[]> pending = new ConcurrentHashMap<>();
    private final Set<String> telling = ConcurrentHashMap.newKeySet();
    private final Set<String> answered = ConcurrentHashMap.newKeySet();
    /**
     * Numbers each drop (in the tag's piece field): a notice sent again keeps its number, a new drop takes the next.
     */
    private final AtomicInteger notices = new AtomicInteger();

    /**
     * @param engine the publisher's engine
     * @param from 8 bytes of registered memory the notice is written from
     * @param fromOffset where in {@code from}
     * @param inboxName the name subscribers publish their inbox under
     * @param inboxOffset where in a subscriber's inbox the notice lands
     * @param rank the publisher's rank
     * @param epoch the publisher's epoch
     * @param deadline of each notice's write
     */
    public DropNotices(
            TransferEngine engine,
            LocalBuffer from,
            long fromOffset,
            String inboxName,
            long inboxOffset,
            int rank,
            int epoch,
            Duration deadline) {
        this.engine = engine;
        this.from = from;
        this.fromOffset = fromOffset;
        this.inboxName = inboxName;
        this.inboxOffset = inboxOffset;
        this.rank = rank;
        this.epoch = epoch;
        this.deadline = deadline;
    }

    /**
     * Tells {@code name} it was dropped after failing {@code version}, now and on each retry until it joins again.
     *
     * @param name the subscriber's engine name
     * @param inbox its inbox as last resolved
     * @param version the version it failed
     */
    public void dropped(String name, RemoteBuffer inbox, long version) {
        long[] notice = {version, System.nanoTime(), notices.getAndIncrement() & 0xffff};
        if (pending.size() < MAX_PENDING) {
            pending.put(name, notice);
            answered.remove(name);
        }
        tell(name, inbox, notice);
    }

    /**
     * A subscriber's join arrived (it heard, or restarted): it is not told again unless its join is {@link #refused}.
     *
     * @param name its engine name
     */
    public void joined(String name) {
        if (pending.containsKey(name)) {
            answered.add(name);
        }
    }

    /**
     * A subscriber was admitted: it is told no more.
     *
     * @param name its engine name
     */
    public void admitted(String name) {
        pending.remove(name);
        answered.remove(name);
    }

    /**
     * A subscriber's join could not be admitted (it is not announced again yet, or its buffers could not be read in
     * time): it is told at the next {@link #retry} to join again, with its drop's notice if it was dropped, else with a
     * new one.
     *
     * @param name its engine name
     * @param version the last version published, which it did not get
     */
    public void refused(String name, long version) {
        if (pending.size() < MAX_PENDING) {
            // one already told keeps its notice (and number); the counter moves only for a new one
            pending.computeIfAbsent(
                    name, k -> new long[] {version, System.nanoTime(), notices.getAndIncrement() & 0xffff});
        }
        answered.remove(name);
    }

    /**
     * {@return the number the next notice takes} A plan carries it, so that its receiver tells a notice sent before the
     * plan (a refusal's, overtaken by the admission after it) from one sent after.
     */
    public int next() {
        return notices.get() & 0xffff;
    }

    /** {@return whether {@code name} is still told (dropped or refused, and neither admitted nor given up on)} */
    public boolean telling(String name) {
        return pending.containsKey(name) && !answered.contains(name);
    }

    /** Tells again those that have not heard; forgets those dropped over {@link #GIVE_UP} ago. */
    public void retry() {
        long now = System.nanoTime();
        for (Map.Entry<String, long[]> e : pending.entrySet()) {
            if (now - e.getValue()[1] > GIVE_UP.toNanos()) {
                if (pending.remove(e.getKey(), e.getValue())) {
                    answered.remove(e.getKey());
                }
            } else if (!answered.contains(e.getKey())) {
                tell(e.getKey(), null, e.getValue());
            }
        }
    }

    private void tell(String name, RemoteBuffer known, long[] notice) {
        if (!telling.add(name)) {
            return;
        }
        Thread.ofVirtual().name("weights-drop-" + name).start(() -> {
            try {
                RemoteBuffer inbox = known != null ? known : engine.peer(name).buffer(inboxName);
                engine.write(
                                from,
                                fromOffset,
                                inbox,
                                inboxOffset,
                                8,
                                TransferOptions.tag(Tags.data(Tags.DROP, rank, epoch, 0, notice[0], (int) notice[2]))
                                        .withDeadline(deadline))
                        .future()
                        .join();
            } catch (RuntimeException e) {
                // not back yet (its lease lapsed), gone for good, or this engine closing: the next retry tries again
            } finally {
                telling.remove(name);
            }
        });
    }
}
