package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@link VendorFileOverrideChecks} with files written here with the facts of AWS's g5, p5 and p4d files. */
class VendorFileOverrideTest extends VendorFileOverrideChecks {
    @Override
    Path g5File() {
        return Shapes.file("g5.xml");
    }

    @Override
    Path p5File() {
        return Shapes.file("p5.xml");
    }

    @Override
    Path p4dFile() {
        return Shapes.file("p4d.xml");
    }

    @Test
    void g5SysfsAloneCannotTellLocality() throws Exception {
        Topology t = Topology.builder().fsroot(g5(tmp).root).nicFilter("").build();
        assertEquals(NumaSource.UNKNOWN, t.device("0000:00:15.0").orElseThrow().numaSource());
        assertTrue(t.rankNics("0000:00:16.0").stream().allMatch(r -> r.level() == Level.PHB));
    }
}
