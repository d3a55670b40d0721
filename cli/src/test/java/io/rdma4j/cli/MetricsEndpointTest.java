package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.Security;
import io.rdma4j.weights.DType;
import io.rdma4j.weights.Safetensors;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.TensorSet;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --metrics-port}: a GET of {@code /metrics} over loopback, as Prometheus scrapes it, shows the directory's and
 * the engine's meters moving with what the commands did.
 */
class MetricsEndpointTest {
    private static final String SAYS = ": metrics at ";

    @Test
    void rendezvousServesItsResolvesAndLeases() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (RendezvousCommand.Running running = RendezvousCommand.start(
                new String[] {"--port", "0", "--metrics-port", "0"},
                new PrintStream(log, true, StandardCharsets.UTF_8))) {
            String said = log.toString(StandardCharsets.UTF_8);
            String url = url(said, "rdma4j rendezvous");
            assertEquals(0, value(scrape(url), "rdma4j_directory_leases_total{event=\"granted\"}"));
            try (Rendezvous r = Rendezvous.connect(running.server().target(), Security.none());
                    var a = r.announce(new PeerInfo("metrics-cli", "", "h", 1, List.of()), Duration.ofSeconds(30))) {
                r.resolve("metrics-cli").orElseThrow();
                r.resolve("metrics-cli").orElseThrow();
                assertTrue(r.resolve("metrics-nobody").isEmpty());
                String text = scrape(url);
                assertEquals(1, value(text, "rdma4j_directory_leases_total{event=\"granted\"}"));
                assertEquals(2, value(text, "rdma4j_directory_resolves_total{kind=\"peer\",outcome=\"ok\"}"));
                assertEquals(1, value(text, "rdma4j_directory_resolves_total{kind=\"peer\",outcome=\"not_found\"}"));
                assertEquals(1, value(text, "rdma4j_directory_leases_active"));
            }
        }
    }

    @Test
    void weightsPublishServesItsEngineMetersWhileSubscribersSync(@TempDir Path dir) throws Exception {
        Libfabric.ensureAvailable();
        Path in = dir.resolve("model.safetensors");
        try (Arena arena = Arena.ofConfined()) {
            long[] shape = {256, 512};
            MemorySegment m = arena.allocate(Tensor.byteSize(DType.F32, shape), 8);
            for (long i = 0; i < m.byteSize(); i++) {
                m.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 131));
            }
            Safetensors.write(
                    in, new TensorSet(List.of(Tensor.host("w", DType.F32, shape, m)), Map.of("format", "pt")));
        }
        String name = "weights-metrics-" + ProcessHandle.current().pid();
        WeightsCommandTest.Cli pub = WeightsCommandTest.Cli.start(
                "weights",
                "publish",
                "--safetensors",
                in.toString(),
                "--name",
                name,
                "--port",
                "0",
                "--metrics-port",
                "0");
        try {
            String url = url(pub.until("rdma4j weights" + SAYS), "rdma4j weights");
            String where = pub.until("rdma4j weights: rendezvous directory on ");
            String rendezvous = where.substring("rdma4j weights: rendezvous directory on ".length())
                    .split(" ")[0];
            pub.until("rdma4j weights: " + name + " publishes ");
            String before = scrape(url);
            assertTrue(before.contains("rdma4j_lane_bytes_total{"), before);
            long bytesBefore = sum(before, "rdma4j_lane_bytes_total");
            long grantedBefore = value(before, "rdma4j_directory_leases_total{event=\"granted\"}");

            WeightsCommandTest.Cli sub = WeightsCommandTest.Cli.start(
                    "weights",
                    "subscribe",
                    "--from",
                    name,
                    "--rendezvous",
                    rendezvous,
                    "--out",
                    dir.resolve("got.safetensors").toString());
            sub.until("rdma4j weights: version 1 from " + name);
            assertEquals(0, sub.exit());
            pub.until("  version 1 to weights-sub-");

            String after = scrape(url);
            long moved = sum(after, "rdma4j_lane_bytes_total") - bytesBefore;
            assertTrue(moved >= 256 * 512 * 4, "the publisher wrote the tensor to the subscriber: " + moved);
            assertTrue(sum(after, "rdma4j_lane_operations_total") > sum(before, "rdma4j_lane_operations_total"));
            assertTrue(sum(after, "rdma4j_transfer_duration_seconds_count") > 0, after);
            assertTrue(
                    value(after, "rdma4j_directory_leases_total{event=\"granted\"}") > grantedBefore,
                    "the subscriber's engine announced itself to the publisher's directory");
        } finally {
            pub.process().destroy();
            if (!pub.process().waitFor(20, TimeUnit.SECONDS)) {
                pub.process().destroyForcibly();
            }
        }
    }

    private static String url(String said, String who) {
        Matcher m = Pattern.compile(Pattern.quote(who + SAYS) + "(http://127\\.0\\.0\\.1:\\d+/metrics)")
                .matcher(said);
        assertTrue(m.find(), said);
        return m.group(1);
    }

    private static String scrape(String url) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(
                    r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"),
                    r.headers().toString());
            return r.body();
        }
    }

    /** {@return the value of the one sample named exactly {@code sample}, labels included} */
    private static long value(String text, String sample) {
        for (String line : text.split("\n")) {
            if (line.startsWith(sample + " ")) {
                return (long)
                        Double.parseDouble(line.substring(sample.length() + 1).trim());
            }
        }
        throw new AssertionError("no sample " + sample + " in\n" + text);
    }

    /** {@return the sum of every sample of {@code metric}, whatever its labels} */
    private static long sum(String text, String metric) {
        double total = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(metric + "{") || line.startsWith(metric + " ")) {
                total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (long) total;
    }
}
