package io.rdma4j.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rdma4j.Rdma4jException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * {@code --metrics-port P}: the command's meters in Prometheus' text format at {@code http://127.0.0.1:P/metrics}, on
 * loopback only (put a scraper or a proxy on the same host to reach it from elsewhere). Port 0 picks a free one. Public
 * for {@code ./rdma4j soak} in perf, which serves its meters the same way.
 */
public final class MetricsEndpoint implements AutoCloseable {
    /** The content type of Prometheus' text exposition format. */
    private static final String TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final HttpServer server;

    private MetricsEndpoint(int port) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (IOException e) {
            registry.close();
            throw new Rdma4jException(
                    "cannot serve metrics on 127.0.0.1:" + port + " (" + e.getMessage()
                            + "): pick a free port with --metrics-port, or 0 for any",
                    e);
        }
        server.createContext("/metrics", this::scrape);
        server.start();
    }

    /**
     * Starts serving and says where.
     *
     * @param port the TCP port on 127.0.0.1; 0 picks a free one
     * @param who the command, as it prefixes its lines ({@code rdma4j rendezvous})
     */
    public static MetricsEndpoint start(int port, String who, PrintStream out) {
        MetricsEndpoint m = new MetricsEndpoint(port);
        out.println(who + ": metrics at " + m.url());
        out.flush();
        return m;
    }

    /** {@return the value of {@code --metrics-port}, checked} */
    public static int port(String value) {
        try {
            int p = Integer.parseInt(value);
            if (p >= 0 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // the message below says what is expected
        }
        throw new IllegalArgumentException(
                "--metrics-port needs a port 0..65535 (0 picks a free one), got '" + value + "'");
    }

    /** {@return the registry the command's engine or directory publishes its meters in} */
    public MeterRegistry registry() {
        return registry;
    }

    /** {@return where Prometheus scrapes} */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/metrics";
    }

    private void scrape(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("GET")
                    && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", TEXT_FORMAT);
            boolean head = exchange.getRequestMethod().equals("HEAD");
            exchange.sendResponseHeaders(200, head ? -1 : body.length);
            if (!head) {
                try (OutputStream os = exchange.getResponseBody()) {
                    os.write(body);
                }
            }
        }
    }

    /** Stops serving. */
    @Override
    public void close() {
        server.stop(0);
        registry.close();
    }
}
