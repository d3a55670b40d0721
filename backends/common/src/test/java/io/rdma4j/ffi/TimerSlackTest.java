package io.rdma4j.ffi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TimerSlackTest {
    @Test
    void aThreadsTimerSlackIsSetForThatThreadAlone() throws InterruptedException {
        long before = Libc.timerSlack();
        AtomicLong seen = new AtomicLong(-1);
        Thread t = Thread.ofPlatform().start(() -> {
            Libc.setTimerSlack(1_000);
            seen.set(Libc.timerSlack());
        });
        t.join();
        assertEquals(1_000, seen.get());
        assertEquals(before, Libc.timerSlack(), "another thread's prctl must leave this one's slack alone");
    }

    @Test
    void zeroSlackIsRefusedRatherThanMeaningTheDefault() {
        var e = assertThrows(IllegalArgumentException.class, () -> Libc.setTimerSlack(0));
        assertEquals("timer slack must be at least 1 ns, got 0", e.getMessage());
    }
}
