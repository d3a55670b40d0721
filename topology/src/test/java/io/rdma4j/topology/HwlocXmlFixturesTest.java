package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;

/** {@link HwlocXmlChecks} on hwloc's own exports in ../shared/topology/hwloc/xml. */
@Extended
class HwlocXmlFixturesTest extends HwlocXmlChecks {
    @Override
    Topology sl390() {
        return Fixtures.xml("hwloc/xml/24em64t-2n6c2t-pci.xml");
    }

    @Override
    Topology dgx2() {
        return Fixtures.xml("hwloc/xml/nvidiaDGX2.xml");
    }

    @Override
    int dgx2Gpus() {
        return 16;
    }

    @Override
    int dgx2NvSwitches() {
        return 12;
    }
}
