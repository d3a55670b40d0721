package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NIC to leave by: NVMe/TCP sockets bind to the chosen local address before connecting. */
class SourceAddressTest {
    @TempDir
    Path home;

    @Test
    void tcpConnectorBindsToTheSourceAddressBeforeConnecting() throws Exception {
        InetAddress source = InetAddress.getByName("127.0.0.2"); // all of 127/8 is local on Linux
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
                Socket out = TcpQueue.Connector.leavingFrom(source)
                        .connect(
                                new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()),
                                Duration.ofSeconds(5));
                Socket in = server.accept()) {
            assertEquals(source, out.getLocalAddress());
            assertEquals(source, ((InetSocketAddress) in.getRemoteSocketAddress()).getAddress());
        }
    }

    @Test
    void controllerConnectsFromTheSourceAddressAndDefaultsToTheKernelRoute() throws Exception {
        assertNull(ConnectOptions.defaults().sourceAddress());
        InetAddress source = InetAddress.getByName("127.0.0.3");
        ConnectOptions options = ConnectOptions.defaults()
                .withIoQueues(1)
                .withQueueDepth(4)
                .withKeepAlive(Duration.ZERO)
                .withSourceAddress(source);
        assertEquals(
                source,
                options.withQueueDepth(8).withIoTimeout(Duration.ofSeconds(5)).sourceAddress(),
                "with... keeps the source");
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options.withIdentity(HostIdentity.persistent(home)))) {
            assertEquals(1, c.ioQueueCount());
        }
    }
}
