package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;
import java.util.List;

/** {@link CloudTopologyChecks} on the files AWS, Azure and OCI publish, in ../shared/topology. */
@Extended
class CloudTopologyFilesTest extends CloudTopologyChecks {
    @Override
    Topology p4d() {
        return Fixtures.xml("nccl/aws-ofi-nccl/p4d-24xl-topo.xml");
    }

    @Override
    Topology p5() {
        return Fixtures.xml("nccl/aws-ofi-nccl/p5.48xl-topo.xml");
    }

    @Override
    Topology ndv2() {
        return Fixtures.xml("azure/ndv2-topo.xml");
    }

    @Override
    Topology ndv4() {
        return Fixtures.xml("azure/ndv4-topo.xml");
    }

    @Override
    Topology ncv4() {
        return Fixtures.xml("azure/ncv4-topo.xml");
    }

    @Override
    List<Topology> ociFlattened() {
        return List.of(Fixtures.xml("oci/topo-flattened.xml"), Fixtures.xml("oci/topo-flattened-b4.xml"));
    }
}
