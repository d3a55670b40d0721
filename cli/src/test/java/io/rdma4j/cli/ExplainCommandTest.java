package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code ./rdma4j explain} on the shared topology fixtures: the JSON contract and the no-NIC case. */
class ExplainCommandTest {
    static String topo(String rel) {
        return TopoCommandTest.fixtures().resolve(rel).toString();
    }

    static String[] run(int expected, String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int rc = new ExplainCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(args);
        String out = buf.toString(StandardCharsets.UTF_8);
        assertEquals(expected, rc, out);
        return new String[]{out};
    }

    @Test
    void printsTheJsonContractForAnRdmaPair() {
        String out = run(0, "--src-topology", topo("azure/ndv4-topo.xml"), "--src", "0003:00:00.0", "--dst-topology", topo("azure/ndv4-topo.xml"),
                "--dst", "0001:00:00.0", "--bytes", "64MiB", "--json")[0].trim();
        assertEquals("{\"lanes\": [{\"localNic\": \"0103:00:00.0\", \"remoteNic\": \"0101:00:00.0\", \"localLevel\": \"PIX\", \"remoteLevel\": \"PIX\", "
                + "\"bytes\": 33554432, \"chunks\": 32}, {\"localNic\": \"0104:00:00.0\", \"remoteNic\": \"0102:00:00.0\", \"localLevel\": \"PIX\", "
                + "\"remoteLevel\": \"PIX\", \"bytes\": 33554432, \"chunks\": 32}], \"reason\": ", out.substring(0, out.indexOf("\"reason\": ") + 10));
        assertTrue(out.endsWith("\"}"), out);
    }

    @Test
    void saysSoWhenAMachineHasNoRdmaNic() {
        String out = run(1, "--src-topology", topo("azure/ncv4-topo.xml"), "--src", "numa:0", "--dst-topology", topo("azure/ndv4-topo.xml"),
                "--dst", "0001:00:00.0", "--bytes", "1G", "--json")[0];
        assertTrue(out.startsWith("{\"lanes\": [], \"reason\": \"the source topology"), out);
        assertTrue(out.contains("no RDMA NIC"), out);
    }

    @Test
    void rejectsBadUsage() {
        run(2, "--src", "numa:0");
        assertEquals(1L << 20, ExplainCommand.parseSize("1MiB", "--bytes"));
        assertEquals(3L << 30, ExplainCommand.parseSize("3g", "--bytes"));
    }
}
