package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdma4j.engine.spi.IdleWait;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdleStrategyTest {
    /** A kernel wait that sleeps not at all and records what it was asked for; it may report a lane's work. */
    private static final class RecordingWait implements IdleWait {
        final List<Long> asked = new ArrayList<>();
        boolean fire;

        @Override
        public boolean await(long nanos) {
            asked.add(nanos);
            return fire;
        }

        @Override
        public void wake() {}

        @Override
        public void close() {}
    }

    @Test
    void spinsAndYieldsBeforeTheFirstWaitThenDoublesUpToTheParkCap() {
        IdleStrategy s = new IdleStrategy(2, 1, 1_000, 4_000);
        RecordingWait w = new RecordingWait();
        for (int i = 0; i < 3 + 4; i++) {
            s.idle(Long.MAX_VALUE, w);
        }
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 4_000L), w.asked);
    }

    @Test
    void aQuietThreadWaitsLongerThanTheParkCapUpToTheQuietCap() {
        IdleStrategy s = new IdleStrategy(0, 0, 1_000, 4_000);
        RecordingWait w = new RecordingWait();
        for (int i = 0; i < 7; i++) {
            s.idleQuiet(w, 20_000);
        }
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 20_000L, 20_000L), w.asked);
        // work of its own again (a paused lane's queue, say) and nothing done yet: back under the park cap at once
        s.idle(Long.MAX_VALUE, w);
        assertEquals(4_000L, w.asked.getLast());
    }

    @Test
    void aWaitThatReportsWorkStartsTheBackoffOver() {
        IdleStrategy s = new IdleStrategy(1, 0, 1_000, 4_000);
        RecordingWait w = new RecordingWait();
        s.idleQuiet(w, 20_000); // spin
        s.idleQuiet(w, 20_000); // wait 1 us
        s.idleQuiet(w, 20_000); // wait 2 us
        w.fire = true;
        s.idleQuiet(w, 20_000); // wait 4 us, a lane fired: reset
        w.fire = false;
        s.idleQuiet(w, 20_000); // spin again
        s.idleQuiet(w, 20_000);
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 1_000L), w.asked);
    }

    @Test
    void aQuietCapUnderTheParkCapKeepsTheParkCap() {
        IdleStrategy s = new IdleStrategy(0, 0, 1_000, 4_000);
        RecordingWait w = new RecordingWait();
        for (int i = 0; i < 5; i++) {
            s.idleQuiet(w, 10);
        }
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 4_000L, 4_000L), w.asked);
    }

    @Test
    void rejectsABackoffThatCannotWork() {
        assertThrows(IllegalArgumentException.class, () -> new IdleStrategy(-1, 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new IdleStrategy(0, 0, 5, 4));
    }
}
