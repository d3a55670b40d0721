package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.internal.EngineCore;
import io.rdma4j.engine.internal.RegistrationCache;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The registration cache over a real backend: containment reuse, reference counts, eviction deregisters idle ones. */
class RegistrationCacheTest {
    @Test
    void reusesContainingRegistrationsAndDeregistersOnlyIdleOnes() {
        try (Arena arena = Arena.ofShared(); TransferEngine e = TestEngines.tcp("cache", 2).build()) {
            RegistrationCache cache = ((EngineCore) e).registrationCache();
            long before = cache.registrations();
            MemorySegment big = TestEngines.allocate(arena, 1 << 20);
            LocalBuffer whole = e.register(big);
            assertFalse(whole.reused());
            assertTrue(whole.registrationNanos() > 0);
            LocalBuffer inner = e.register(big.asSlice(4096, 8192));
            assertTrue(inner.reused(), "a range inside a registered one reuses it");
            assertEquals(0, inner.registrationNanos());
            assertEquals(before + 1, cache.registrations());
            whole.close();
            // still referenced by inner: eviction must not touch it
            cache.evictIdle();
            assertEquals(0, cache.deregistrations());
            LocalBuffer again = e.register(big.asSlice(0, 100));
            assertTrue(again.reused());
            inner.close();
            again.close();
            cache.evictIdle();
            assertEquals(1, cache.deregistrations(), "the idle registration is deregistered on eviction");
            LocalBuffer fresh = e.register(big);
            assertFalse(fresh.reused());
            assertTrue(e.registrationNanos() > 0);
            fresh.close();
        }
    }
}
