package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Joins, repeated joins, restarts and confirmations, as a publisher's control thread takes them. */
class MemberSignalsTest {
    private static long join(int seq, int mask) {
        return Tags.control(Tags.JOIN, 3, seq, mask, 0, -1);
    }

    private static long done(int seq, int mask, long version) {
        return Tags.control(Tags.DONE, 3, seq, mask, version, -1);
    }

    @Test
    void aRepeatedJoinKeepsTheSignalASyncWaitsOn() {
        MemberSignals signals = new MemberSignals();
        MemberSignal first = signals.joined("rollout-a", join(1, 0b1));
        // the sync of version 4 holds `first`; the subscriber heard a drop notice twice and joined again
        MemberSignal again = signals.joined("rollout-a", join(2, 0b1));
        assertSame(first, again, "a second join from the same process must not replace the signal a sync waits on");
        assertTrue(signals.update("rollout-a", done(3, 0b0, 4)));
        assertEquals(4, first.done, "the confirmation reaches the sync under way");
        assertEquals(0b0, first.mask);
    }

    @Test
    void aRestartedSubscriberStartsAFreshSignal() {
        MemberSignals signals = new MemberSignals();
        MemberSignal old = signals.joined("rollout-a", join(1, 0b11));
        signals.update("rollout-a", done(2, 0b01, 7));
        signals.update("rollout-a", done(5, 0b10, 8));
        // the same name, a new process: it numbers from 1 again, and nothing the old one confirmed holds for it
        MemberSignal fresh = signals.joined("rollout-a", join(1, 0b11));
        assertNotSame(old, fresh);
        assertEquals(-1, fresh.done);
        assertEquals(0b11, fresh.mask);
        assertSame(fresh, signals.get("rollout-a"));
        // a process that sent nothing after its join, restarted: the same number again is a new process too
        MemberSignal once = signals.joined("rollout-b", join(1, 0b1));
        assertNotSame(once, signals.joined("rollout-b", join(1, 0b1)));
    }

    @Test
    void notificationsFromSubscribersNotJoinedAreIgnored() {
        MemberSignals signals = new MemberSignals();
        assertFalse(signals.update("rollout-a", done(4, 0b1, 1)));
        assertNull(signals.get("rollout-a"));
        signals.joined("rollout-a", join(1, 0b1));
        signals.remove("rollout-a");
        assertFalse(signals.update("rollout-a", done(2, 0b1, 1)), "dropped: its confirmations no longer count");
    }

    @Test
    void aJoinAfterTheCountWrapsStillFollows() {
        MemberSignals signals = new MemberSignals();
        MemberSignal s = signals.joined("rollout-a", join(0xffffe, 0b1));
        assertSame(s, signals.joined("rollout-a", join(3, 0b1)), "3 comes after 0xffffe on the 20-bit count");
        assertTrue(s.follows(4));
        assertFalse(s.follows(2));
    }
}
