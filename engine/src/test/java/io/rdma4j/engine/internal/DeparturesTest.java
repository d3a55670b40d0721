package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A departure is retired only after its grace, and only once every progress thread polled in a round begun after it.
 */
class DeparturesTest {
    private static final long GRACE = Departures.GRACE_NANOS;

    @Test
    void waitsForTheGraceAndForEveryThread() {
        Departures<String> d = new Departures<>(2);
        assertFalse(d.any());
        d.add("a", 1_000);
        assertTrue(d.any());
        assertEquals(List.of(), d.polled(0, 1_000 + GRACE), "thread 1 has not polled yet");
        assertEquals(List.of(), d.polled(1, 1_000 + GRACE - 1), "thread 1's round began inside the grace");
        assertEquals(List.of("a"), d.polled(1, 1_000 + GRACE));
        assertFalse(d.any());
        assertEquals(List.of(), d.polled(0, 1_000 + 2 * GRACE), "retired once");
    }

    @Test
    void eachDepartureHasItsOwnGrace() {
        Departures<String> d = new Departures<>(1);
        d.add("early", 0);
        d.add("late", GRACE / 2);
        assertEquals(List.of("early"), d.polled(0, GRACE));
        assertEquals(List.of(), d.polled(0, GRACE + GRACE / 2 - 1));
        assertEquals(List.of("late"), d.polled(0, GRACE + GRACE / 2));
    }

    @Test
    void takeAllEmptiesIt() {
        Departures<String> d = new Departures<>(1);
        d.add("a", 0);
        d.add("b", 0);
        assertEquals(List.of("a", "b"), d.takeAll());
        assertFalse(d.any());
    }
}
