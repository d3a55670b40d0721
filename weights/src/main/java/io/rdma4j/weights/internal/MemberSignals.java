package io.rdma4j.weights.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a publisher rank's control thread learned of each subscriber, by engine name: one {@link MemberSignal} per
 * subscriber process, which the publishing thread's sync of a version waits on.
 *
 * <p>A subscriber joins more than once by design: it joins again on every drop notice until the publisher admits it,
 * and the publisher repeats the notice each second. A repeated join from the same process updates its signal in place:
 * replacing it would leave a sync under way waiting on the old one, which never hears the subscriber's confirmation,
 * and the publisher would fail a subscriber that has every byte. Each join carries the number its process drew at
 * random when it started (its incarnation, in the version field a join does not otherwise use): a join with another
 * number comes from a restarted process under the same name and starts a fresh signal, since nothing the old process
 * confirmed holds for the new one. The sequence number cannot tell the two apart: a repeated join can arrive after the
 * process's later notifications (they travel on different lanes), numbered before them as a restarted process's are.
 * Two processes drawing the same of 8,388,607 numbers would be taken for one: the new one's first notifications then
 * count only once its numbers pass the old one's, or once it is dropped.
 */
public final class MemberSignals {
    private final Map<String, MemberSignal> signals = new ConcurrentHashMap<>();

    /**
     * Takes a JOIN from {@code peer}.
     *
     * @param peer the subscriber's engine name
     * @param tag the JOIN's tag ({@link Tags#control}), its incarnation in the version field
     * @return its signal: the one it had when the join comes from the same process, else a new one
     */
    public MemberSignal joined(String peer, long tag) {
        int incarnation = (int) Tags.controlVersion(tag);
        MemberSignal s = signals.get(peer);
        if (s == null || s.incarnation != incarnation) {
            s = new MemberSignal(incarnation);
            signals.put(peer, s);
        }
        s.update(Tags.controlSeq(tag), Tags.controlMask(tag), Tags.controlNewest(tag), -1);
        return s;
    }

    /**
     * Takes a DONE or FREE from {@code peer}; nothing when it has not joined (or was dropped since).
     *
     * @param peer the subscriber's engine name
     * @param tag the notification's tag ({@link Tags#control})
     * @return whether {@code peer} is known
     */
    public boolean update(String peer, long tag) {
        MemberSignal s = signals.get(peer);
        if (s == null) {
            return false;
        }
        long v = Tags.kind(tag) == Tags.DONE ? Tags.controlVersion(tag) : -1;
        s.update(Tags.controlSeq(tag), Tags.controlMask(tag), Tags.controlNewest(tag), v);
        return true;
    }

    /** {@return {@code peer}'s signal, or null when it has not joined} */
    public MemberSignal get(String peer) {
        return signals.get(peer);
    }

    /** Forgets {@code peer} (dropped): its next join starts a fresh signal. */
    public void remove(String peer) {
        signals.remove(peer);
    }
}
