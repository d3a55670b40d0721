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
        try (Arena arena = Arena.ofShared();
                TransferEngine e = TestEngines.tcp("cache", 2).build()) {
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

    @Test
    void deviceRegistrationsAreNeverReusedAndGoWithTheirLastReference() {
        try (Arena arena = Arena.ofShared();
                TransferEngine e = TestEngines.tcp("cache-dev", 1).build()) {
            RegistrationCache cache = ((EngineCore) e).registrationCache();
            RecordingDeviceMemory dev = new RecordingDeviceMemory(
                    TestEngines.allocate(arena, 1 << 20), "0000:3b:00.0", new java.util.concurrent.atomic.AtomicLong());
            long before = cache.deregistrations();
            LocalBuffer a = e.register(dev);
            LocalBuffer b = e.register(dev);
            assertFalse(a.reused() || b.reused(), "device registrations are not shared through the cache");
            e.publish("dev", a, Access.anyPeer());
            a.close();
            assertEquals(before, cache.deregistrations(), "the publication still holds it");
            e.unpublish("dev");
            assertEquals(before + 1, cache.deregistrations(), "deregistered with its last reference, not left idle");
            b.close();
            assertEquals(before + 2, cache.deregistrations());
        }
    }
}
