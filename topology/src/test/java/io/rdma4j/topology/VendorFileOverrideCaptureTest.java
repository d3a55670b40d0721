package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;
import java.nio.file.Path;

/** {@link VendorFileOverrideChecks} with the files AWS publishes in aws-ofi-nccl, in ../shared/topology/nccl. */
@Extended
class VendorFileOverrideCaptureTest extends VendorFileOverrideChecks {
    @Override
    Path g5File() {
        return Fixtures.file("nccl/aws-ofi-nccl/g5.48xl-topo.xml");
    }

    @Override
    Path p5File() {
        return Fixtures.file("nccl/aws-ofi-nccl/p5.48xl-topo.xml");
    }

    @Override
    Path p4dFile() {
        return Fixtures.file("nccl/aws-ofi-nccl/p4d-24xl-topo.xml");
    }
}
