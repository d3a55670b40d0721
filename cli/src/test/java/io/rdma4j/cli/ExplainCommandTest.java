package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.Extended;
import io.rdma4j.topology.Fixtures;
import io.rdma4j.topology.Shapes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./rdma4j explain}: the JSON contract and the no-NIC case, on topologies written for the tests ({@link Shapes},
 * from the topology module's test-jar) and, in the extended suite, on the captures in {@code ../shared/topology} they
 * stand for.
 */
class ExplainCommandTest {
    static String[] run(int expected, String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int rc = new ExplainCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(args);
        String out = buf.toString(StandardCharsets.UTF_8);
        assertEquals(expected, rc, out);
        return new String[] {out};
    }

    @Test
    void printsTheJsonContractForAnRdmaPair(@TempDir Path tmp) {
        printsTheJsonContract(Shapes.copy(Shapes.NDV4, tmp));
    }

    @Test
    @Extended
    void printsTheJsonContractForAnRdmaPairOnTheCapture() {
        printsTheJsonContract(Fixtures.file(Fixtures.NDV4_CAPTURE));
    }

    /** NDv4: GPU 0003's tied NICs 0103/0104 pair rail to rail with GPU 0001's 0101/0102, half the bytes each. */
    private static void printsTheJsonContract(Path ndv4) {
        String out = run(
                0,
                "--src-topology",
                ndv4.toString(),
                "--src",
                "0003:00:00.0",
                "--dst-topology",
                ndv4.toString(),
                "--dst",
                "0001:00:00.0",
                "--bytes",
                "64MiB",
                "--json")[0]
                .trim();
        assertEquals(
                "{\"lanes\": [{\"localNic\": \"0103:00:00.0\", \"remoteNic\": \"0101:00:00.0\", "
                        + "\"localLevel\": \"PIX\", \"remoteLevel\": \"PIX\", \"bytes\": 33554432, \"chunks\": 32}, "
                        + "{\"localNic\": \"0104:00:00.0\", \"remoteNic\": \"0102:00:00.0\", \"localLevel\": \"PIX\", "
                        + "\"remoteLevel\": \"PIX\", \"bytes\": 33554432, \"chunks\": 32}], \"reason\": ",
                out.substring(0, out.indexOf("\"reason\": ") + 10));
        assertTrue(out.endsWith("\"}"), out);
    }

    @Test
    void saysSoWhenAMachineHasNoRdmaNic(@TempDir Path tmp) {
        saysThereIsNoRdmaNic(Shapes.copy(Shapes.NCV4, tmp), Shapes.copy(Shapes.NDV4, tmp));
    }

    @Test
    @Extended
    void saysSoWhenAMachineHasNoRdmaNicOnTheCaptures() {
        saysThereIsNoRdmaNic(Fixtures.file(Fixtures.NCV4_CAPTURE), Fixtures.file(Fixtures.NDV4_CAPTURE));
    }

    private static void saysThereIsNoRdmaNic(Path ncv4, Path ndv4) {
        String out = run(
                1,
                "--src-topology",
                ncv4.toString(),
                "--src",
                "numa:0",
                "--dst-topology",
                ndv4.toString(),
                "--dst",
                "0001:00:00.0",
                "--bytes",
                "1G",
                "--json")[0];
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
