package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;

/** {@link RcclTopologyChecks} on the files AMD publishes with RCCL, in ../shared/topology/rccl. */
@Extended
class RcclTopologyFilesTest extends RcclTopologyChecks {
    @Override
    Topology mi300x() {
        return Fixtures.xml("rccl/topo_8p_940.xml");
    }

    @Override
    Topology mi300xVm() {
        return Fixtures.xml("rccl/topo_8p_940vm.xml");
    }

    @Override
    Topology mi300a() {
        return Fixtures.xml("rccl/topo_4p_940.xml");
    }
}
