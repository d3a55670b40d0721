package io.rdma4j.engine.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class BackendOptionsTest {
    @Test
    void defaultsSetNothing() {
        assertEquals(new BackendOptions(null, null, null), BackendOptions.DEFAULTS);
        assertSame(BackendOptions.DEFAULTS, new BackendConfig("tcp", 1, 4).options());
        assertSame(BackendOptions.DEFAULTS, new BackendConfig("tcp", 1, 4, null).options());
    }

    @Test
    void withersReplaceOneSettingAndKeepTheOthers() {
        BackendOptions o = BackendOptions.DEFAULTS
                .withNicFilter("=mlx5_0:1")
                .withSourceAddress("10.0.0.2")
                .withDevice("rxe0");
        assertEquals(new BackendOptions("=mlx5_0:1", "10.0.0.2", "rxe0"), o);
        assertEquals(new BackendOptions("^lo", "10.0.0.2", "rxe0"), o.withNicFilter("^lo"));
        assertNull(o.withDevice(null).device());
    }

    @Test
    void blankSettingsMeanTheDefault() {
        BackendOptions o = new BackendOptions("  ", "", " mlx5_0 ");
        assertNull(o.nicFilter());
        assertNull(o.sourceAddress());
        assertEquals("mlx5_0", o.device());
    }
}
