package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link HwlocXmlChecks} on hwloc 3 XML written here with the facts of hwloc's SL390 and (cut-down) DGX-2 exports. */
class HwlocXmlShapesTest extends HwlocXmlChecks {
    @Override
    Topology sl390() {
        return Shapes.xml("hwloc-sl390.xml");
    }

    @Override
    Topology dgx2() {
        return Shapes.xml("hwloc-dgx2.xml");
    }

    @Override
    int dgx2Gpus() {
        return 8;
    }

    @Override
    int dgx2NvSwitches() {
        return 3;
    }

    @Test
    void nvSwitchWhoseConfigSpaceHwlocCouldNotReadIsStillAnNvSwitchByItsSubtype() {
        PciDevice unreadable = dgx2().device("0000:66:00.0").orElseThrow();
        assertEquals(-1, unreadable.classCode());
        assertEquals(-1, unreadable.vendor());
        assertEquals(DeviceKind.NVSWITCH, unreadable.kind());
    }
}
