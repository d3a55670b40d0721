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
    private static final int PROCESS = 0x51f00d;

    private static long join(int seq, int mask) {
        return join(PROCESS, seq, mask);
    }

    /** A join from the subscriber process numbered {@code incarnation}. */
    private static long join(int incarnation, int seq, int mask) {
        return Tags.control(Tags.JOIN, 3, seq, mask, incarnation, -1);
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
    void aJoinThatArrivesAfterLaterNotificationsKeepsTheSignal() {
        MemberSignals signals = new MemberSignals();
        MemberSignal s = signals.joined("rollout-a", join(1, 0b11));
        // joins 2 and 3 answer two copies of one drop notice; 3 and the confirmation 4 overtake 2 on other lanes
        signals.joined("rollout-a", join(3, 0b11));
        assertTrue(signals.update("rollout-a", done(4, 0b01, 6)));
        assertSame(s, signals.joined("rollout-a", join(2, 0b10)), "a late join from the same process is no restart");
        assertSame(s, signals.get("rollout-a"));
        assertEquals(6, s.done, "what it confirmed still holds");
        assertEquals(0b01, s.mask, "the later notification's buffers win over the late join's");
    }

    @Test
    void aRestartedSubscriberStartsAFreshSignal() {
        MemberSignals signals = new MemberSignals();
        MemberSignal old = signals.joined("rollout-a", join(1, 0b11));
        signals.update("rollout-a", done(2, 0b01, 7));
        signals.update("rollout-a", done(5, 0b10, 8));
        // the same name, a new process (a new number): nothing the old one confirmed holds for it
        MemberSignal fresh = signals.joined("rollout-a", join(PROCESS + 1, 1, 0b11));
        assertNotSame(old, fresh);
        assertEquals(-1, fresh.done);
        assertEquals(0b11, fresh.mask);
        assertSame(fresh, signals.get("rollout-a"));
        // a process that sent nothing after its join, restarted: its number tells, though its count starts the same
        MemberSignal once = signals.joined("rollout-b", join(7, 1, 0b1));
        assertNotSame(once, signals.joined("rollout-b", join(8, 1, 0b1)));
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
    void notificationsAfterTheCountWrapsStillCount() {
        MemberSignals signals = new MemberSignals();
        MemberSignal s = signals.joined("rollout-a", join(0xffffe, 0b1));
        assertTrue(signals.update("rollout-a", done(3, 0b10, 2)));
        assertEquals(0b10, s.mask, "3 comes after 0xffffe on the 20-bit count");
        signals.update("rollout-a", done(0xfffff, 0b01, 1));
        assertEquals(0b10, s.mask, "0xfffff came before 3");
        assertSame(s, signals.joined("rollout-a", join(4, 0b1)));
    }
}
