package io.rdma4j.topology;

/** {@link RcclTopologyChecks} on files written here with the facts of AMD's RCCL topology files. */
class RcclShapesTest extends RcclTopologyChecks {
    @Override
    Topology mi300x() {
        return Shapes.xml("mi300x.xml");
    }

    @Override
    Topology mi300xVm() {
        return Shapes.xml("mi300x-vm.xml");
    }

    @Override
    Topology mi300a() {
        return Shapes.xml("mi300a.xml");
    }
}
