package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Targets parse as users write them; statuses read as the specification names them; bad options fail early. */
class NamesAndOptionsTest {
    @Test
    void parsesTargetsWithAndWithoutPortsAndIpv6() {
        assertEquals(Target.tcp("10.0.0.2", 4420), Target.parseTcp("10.0.0.2"));
        assertEquals(Target.tcp("10.0.0.2", 14420), Target.parseTcp("10.0.0.2:14420"));
        assertEquals(Target.tcp("::1", 4421), Target.parseTcp("[::1]:4421"));
        assertEquals(Target.tcp("fe80::1", 4420), Target.parseTcp("fe80::1"));
        assertEquals("tcp://[::1]:4421", Target.parseTcp("[::1]:4421").toString());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Target.parseTcp("host:port"))
                .getMessage()
                .contains("not a number"));
        assertThrows(IllegalArgumentException.class, () -> Target.parseTcp("host:70000"));
        assertThrows(IllegalArgumentException.class, () -> Target.parseTcp(":4420"));
    }

    @Test
    void namesStatusesByTypeAndCommandKind() {
        assertEquals("LBA Out of Range", NvmeStatusException.name(false, 0, 0x80));
        assertEquals("Invalid Namespace or Format", NvmeStatusException.name(false, 0, 0x0b));
        assertEquals("Connect Invalid Parameters", NvmeStatusException.name(true, 1, 0x82));
        assertEquals("Conflicting Attributes", NvmeStatusException.name(false, 1, 0x80));
        assertEquals("Unrecovered Read Error", NvmeStatusException.name(false, 2, 0x81));
        assertEquals("unknown status (SCT 7h, SC 42h)", NvmeStatusException.name(false, 7, 0x42));
        NvmeStatusException e = new NvmeStatusException("Connect(qid=0)", true, 1, 0x82, true, 1 << 16 | 256);
        assertEquals(
                "Connect(qid=0) failed: Connect Invalid Parameters (SCT 1h Command Specific Status, SC 82h, do not retry): invalid SUBNQN:"
                        + " the target has no subsystem of that NQN (see nvme discover)",
                e.getMessage());
        assertEquals(1 << 16 | 256, e.dw0());
    }

    @Test
    void refusesOptionsAndNamesThatCannotWork() {
        ConnectOptions d = ConnectOptions.defaults();
        assertThrows(IllegalArgumentException.class, () -> d.withQueueDepth(1));
        assertThrows(IllegalArgumentException.class, () -> d.withIoQueues(0));
        assertThrows(IllegalArgumentException.class, () -> d.withKeepAlive(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> d.withConnectTimeout(Duration.ZERO));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withBusyPoll(Duration.ofNanos(-1)))
                .getMessage()
                .contains("busyPoll"));
        assertThrows(IllegalArgumentException.class, () -> d.withBusyPoll(Duration.ofSeconds(2)));
        assertEquals(
                Duration.ofNanos(50_000),
                d.withBusyPoll(Duration.ofNanos(50_000)).busyPoll());
        assertEquals(Duration.ZERO, d.busyPoll(), "no busy polling unless asked");
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> HostIdentity.validateNqn("iqn.2001-04.com.example", "subsystem NQN"))
                .getMessage()
                .contains("nqn."));
        assertThrows(
                IllegalArgumentException.class, () -> HostIdentity.validateNqn("nqn." + "x".repeat(220), "host NQN"));
    }
}
